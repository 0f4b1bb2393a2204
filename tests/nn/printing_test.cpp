// Printing modules: PyTorch's tree layout with each layer's settings.
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;

template <typename T>
std::string printed(const T& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

TEST(Printing, Sequential) {
  nn::Sequential seq(nn::Linear(5, 2), nn::ReLU());
  EXPECT_EQ(printed(seq),
            "Sequential(\n"
            "  (0): Linear(in_features=5, out_features=2, bias=true)\n"
            "  (1): ReLU()\n"
            ")");
  EXPECT_EQ(printed(*seq), printed(seq));  // a module prints like its holder
}

TEST(Printing, EveryLayer) {
  nn::Sequential seq(nn::Linear(nn::LinearOptions(3, 4).bias(false)),
                     nn::Dropout(0.2),
                     nn::GELU(nn::GELUOptions().approximate("tanh")),
                     nn::GELU(),
                     nn::Softmax(1),
                     nn::LogSoftmax(nn::LogSoftmaxOptions(-1)),
                     nn::Flatten(),
                     nn::Identity(),
                     nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0)),
                     nn::Tanh(),
                     nn::Sigmoid(),
                     nn::ReLU(nn::ReLUOptions().inplace(true)),
                     nn::Sequential());
  EXPECT_EQ(printed(seq),
            "Sequential(\n"
            "  (0): Linear(in_features=3, out_features=4, bias=false)\n"
            "  (1): Dropout(p=0.2)\n"
            "  (2): GELU(approximate='tanh')\n"
            "  (3): GELU(approximate='none')\n"
            "  (4): Softmax(dim=1)\n"
            "  (5): LogSoftmax(dim=-1)\n"
            "  (6): Flatten(start_dim=1, end_dim=-1)\n"
            "  (7): Identity()\n"
            "  (8): Embedding(num_embeddings=10, embedding_dim=3, padding_idx=0)\n"
            "  (9): Tanh()\n"
            "  (10): Sigmoid()\n"
            "  (11): ReLU(inplace=true)\n"
            "  (12): Sequential()\n"
            ")");
  EXPECT_EQ(printed(nn::MSELoss()), "MSELoss()");
  EXPECT_EQ(printed(nn::CrossEntropyLoss()), "CrossEntropyLoss()");
  EXPECT_EQ(printed(nn::NLLLoss()), "NLLLoss()");
}

struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    fc = register_module("fc", nn::Linear(5, 3));
    body = register_module("body", nn::Sequential(nn::Linear(3, 3), nn::Tanh()));
  }
  nn::Linear fc{nullptr};
  nn::Sequential body{nullptr};
};
TANDEM_MODULE(Net);

TEST(Printing, NestedUserModule) {
  EXPECT_EQ(printed(Net()),
            "Net(\n"
            "  (fc): Linear(in_features=5, out_features=3, bias=true)\n"
            "  (body): Sequential(\n"
            "    (0): Linear(in_features=3, out_features=3, bias=true)\n"
            "    (1): Tanh()\n"
            "  )\n"
            ")");
  EXPECT_EQ(printed(nn::Module("Leaf")), "Leaf()");
}

}  // namespace
