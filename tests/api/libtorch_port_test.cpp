// LibTorch code ported by renaming: each snippet below is written as a
// LibTorch user writes it (the MNIST example of the C++ frontend docs and of
// pytorch/examples, TORCH_MODULE holders, Sequential, functional, init),
// with `torch::` replaced by `tandem::` and <torch/torch.h> by
// "tandem/tandem.h". Nothing else was changed; that it compiles is half the
// test, and the training snippets must also learn.
#include <cmath>
#include <memory>
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

// ---- "Using the PyTorch C++ Frontend": Net with register_module ----

struct Net : tandem::nn::Module {
  Net() {
    // Construct and register two Linear submodules.
    fc1 = register_module("fc1", tandem::nn::Linear(784, 64));
    fc2 = register_module("fc2", tandem::nn::Linear(64, 32));
    fc3 = register_module("fc3", tandem::nn::Linear(32, 10));
  }

  // Implement the Net's algorithm.
  tandem::Tensor forward(tandem::Tensor x) {
    // Use one of many tensor manipulation functions.
    x = tandem::relu(fc1->forward(x.reshape({x.size(0), 784})));
    x = tandem::dropout(x, /*p=*/0.5, /*train=*/is_training());
    x = tandem::relu(fc2->forward(x));
    x = tandem::log_softmax(fc3->forward(x), /*dim=*/1);
    return x;
  }

  // Use one of many "standard library" modules.
  tandem::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

// A fixed, learnable batch: the label is the argmax of the first 10 pixels.
struct Batch {
  tandem::Tensor data;
  tandem::Tensor target;
};

Batch make_batch(int64_t n) {
  Batch batch;
  batch.data = tandem::rand({n, 1, 28, 28});
  batch.target = batch.data.reshape({n, 784}).narrow(1, 0, 10).argmax(1);
  return batch;
}

float eval_loss(tandem::nn::Module& model,
                const std::function<tandem::Tensor()>& run,
                const tandem::Tensor& target) {
  tandem::NoGradGuard no_grad;
  model.eval();
  float loss = tandem::nll_loss(run(), target).item<float>();
  model.train();
  return loss;
}

TEST(LibTorchPort, FrontendDocsNetTrains) {
  tandem::manual_seed(1);
  auto net = std::make_shared<Net>();
  Batch batch = make_batch(64);
  const float before = eval_loss(
      *net, [&] { return net->forward(batch.data); }, batch.target);

  tandem::optim::SGD optimizer(net->parameters(), /*lr=*/0.01);
  for (size_t epoch = 1; epoch <= 3; ++epoch) {
    size_t batch_index = 0;
    for (int step = 0; step < 10; ++step) {
      // Reset gradients.
      optimizer.zero_grad();
      // Execute the model on the input data.
      tandem::Tensor prediction = net->forward(batch.data);
      // Compute a loss value to judge the prediction of our model.
      tandem::Tensor loss = tandem::nll_loss(prediction, batch.target);
      // Compute gradients of the loss w.r.t. the parameters of our model.
      loss.backward();
      // Update the parameters based on the calculated gradients.
      optimizer.step();
      if (++batch_index % 5 == 0) {
        ASSERT_FALSE(std::isnan(loss.item<float>()));
      }
    }
  }
  const float after = eval_loss(
      *net, [&] { return net->forward(batch.data); }, batch.target);
  EXPECT_LT(after, before);
  EXPECT_EQ(net->parameters().size(), 6u);
}

// ---- pytorch/examples cpp/mnist: holders as members, SGDOptions ----

struct MnistNet : tandem::nn::Module {
  MnistNet() : fc1(320, 50), fc2(50, 10) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  tandem::Tensor forward(tandem::Tensor x) {
    x = x.view({-1, 320});
    x = tandem::relu(fc1->forward(x));
    x = tandem::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return tandem::log_softmax(x, /*dim=*/1);
  }

  tandem::nn::Linear fc1;
  tandem::nn::Linear fc2;
};

template <typename DataLoader>
void train(size_t epoch,
           MnistNet& model,
           tandem::Device device,
           DataLoader& data_loader,
           tandem::optim::Optimizer& optimizer) {
  model.train();
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = tandem::nll_loss(output, targets);
    ASSERT_FALSE(std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
  }
}

template <typename DataLoader>
double test(MnistNet& model,
            tandem::Device device,
            DataLoader& data_loader,
            int32_t& correct) {
  tandem::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  correct = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += tandem::nll_loss(output, targets, /*weight=*/{}, tandem::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  return test_loss;
}

TEST(LibTorchPort, PyTorchExamplesMnistTrains) {
  tandem::manual_seed(1);
  tandem::DeviceType device_type = tandem::kCPU;
  tandem::Device device(device_type);

  MnistNet model;
  model.to(device);

  std::vector<Batch> data_loader;
  for (int i = 0; i < 4; ++i) {
    Batch b;
    b.data = tandem::rand({32, 320});
    b.target = b.data.narrow(1, 0, 10).argmax(1);
    data_loader.push_back(b);
  }
  tandem::optim::SGD optimizer(model.parameters(),
                               tandem::optim::SGDOptions(0.01).momentum(0.5));
  int32_t correct = 0;
  const double before = test(model, device, data_loader, correct);
  for (size_t epoch = 1; epoch <= 5; ++epoch) {
    train(epoch, model, device, data_loader, optimizer);
  }
  const double after = test(model, device, data_loader, correct);
  EXPECT_LT(after, before);
  EXPECT_FALSE(model.is_training());  // test() left it in eval mode
}

// ---- TORCH_MODULE, Sequential, functional, init, named_parameters ----

struct LinearBlockImpl : tandem::nn::Module {
  LinearBlockImpl(int64_t in, int64_t out)
      : linear(register_module("linear", tandem::nn::Linear(in, out))) {}
  tandem::Tensor forward(tandem::Tensor x) { return tandem::relu(linear(x)); }
  tandem::nn::Linear linear;
};
TANDEM_MODULE(LinearBlock);

void init_weights(tandem::nn::Module& module) {
  tandem::NoGradGuard no_grad;
  if (auto* linear = module.as<tandem::nn::Linear>()) {
    tandem::nn::init::xavier_uniform_(linear->weight);
    linear->bias.fill_(0.01);
  }
}

TEST(LibTorchPort, HoldersSequentialFunctionalAndInit) {
  namespace F = tandem::nn::functional;
  tandem::nn::Sequential seq(
      LinearBlock(4, 8), tandem::nn::Dropout(0.5), tandem::nn::Linear(8, 3));
  seq->apply(init_weights);
  for (const auto& pair : seq->named_parameters()) {
    if (pair.key().find("bias") != std::string::npos) {
      EXPECT_TRUE(tandem::testing::all_close(pair.value(),
                                             tandem::full_like(pair.value(), 0.01)));
    }
  }
  EXPECT_EQ(seq->named_parameters().keys()[0], "0.linear.weight");

  auto x = tandem::randn({5, 4});
  auto logits = seq->forward(x);
  auto loss = F::cross_entropy(logits,
                               tandem::tensor<int64_t>({0, 1, 2, 0, 1}),
                               F::CrossEntropyFuncOptions().label_smoothing(0.1));
  loss.backward();
  EXPECT_TRUE(seq->ptr<tandem::nn::LinearImpl>(2)->weight.grad().defined());
  auto h = F::relu(x, F::ReLUFuncOptions().inplace(false));
  EXPECT_TRUE(tandem::testing::all_close(h, tandem::relu(x)));

  std::ostringstream printed;
  printed << seq;
  EXPECT_NE(printed.str().find("(2): Linear(in_features=8, out_features=3, bias=true)"),
            std::string::npos);
}

// ---- pytorch/examples cpp/dcgan: the discriminator and its BCE step ----
// (channels scaled down 8x; 28x28 inputs as there, "real" images brighter
// than "fake" ones so that a few steps can tell them apart)

TEST(LibTorchPort, DcganDiscriminatorLearns) {
  namespace nn = tandem::nn;
  nn::Sequential discriminator(
      // Layer 1
      nn::Conv2d(nn::Conv2dOptions(1, 8, 4).stride(2).padding(1).bias(false)),
      nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 2
      nn::Conv2d(nn::Conv2dOptions(8, 16, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(16),
      nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 3
      nn::Conv2d(nn::Conv2dOptions(16, 32, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(32),
      nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 4
      nn::Conv2d(nn::Conv2dOptions(32, 1, 3).stride(1).padding(0).bias(false)),
      nn::Sigmoid());
  tandem::optim::Adam discriminator_optimizer(
      discriminator->parameters(), tandem::optim::AdamOptions(2e-3).betas({0.5, 0.999}));

  const int64_t batch_size = 16;
  tandem::Tensor real_images = tandem::randn({batch_size, 1, 28, 28}) * 0.5 + 1;
  tandem::Tensor fake_images = tandem::randn({batch_size, 1, 28, 28}) * 0.5 - 1;
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    // Train discriminator with real images.
    discriminator->zero_grad();
    tandem::Tensor real_labels = tandem::empty({batch_size}).uniform_(0.8, 1.0);
    tandem::Tensor real_output =
        discriminator->forward(real_images).reshape(real_labels.sizes());
    tandem::Tensor d_loss_real = tandem::binary_cross_entropy(real_output, real_labels);
    d_loss_real.backward();

    // Train discriminator with fake images.
    tandem::Tensor fake_labels = tandem::zeros({batch_size});
    tandem::Tensor fake_output =
        discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
    tandem::Tensor d_loss_fake = tandem::binary_cross_entropy(fake_output, fake_labels);
    d_loss_fake.backward();

    tandem::Tensor d_loss = d_loss_real + d_loss_fake;
    discriminator_optimizer.step();
    (step == 0 ? first : last) = d_loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << ", last " << last;
}

TEST(LibTorchPort, CloneAndStateDictBetweenModels) {
  tandem::nn::Linear a(3, 2), b(3, 2);
  b->load_state_dict(a->state_dict());
  tandem::Tensor x = tandem::randn({4, 3});
  EXPECT_TRUE(tandem::testing::all_close(a(x), b(x)));
  auto c = std::dynamic_pointer_cast<tandem::nn::LinearImpl>(a->clone());
  EXPECT_TRUE(tandem::testing::all_close(c->forward(x), a(x)));
}

}  // namespace

// ---- Writing into parts of a tensor: x[i] = ..., x.narrow(...) = ... ----

TEST(LibTorchPort, AssigningToIndexedAndNarrowedTensorsWritesThrough) {
  // One-hot labels, filled element by element.
  tandem::Tensor labels = tandem::tensor({2, 0, 1});
  tandem::Tensor one_hot = tandem::zeros({3, 4});
  for (int64_t i = 0; i < 3; ++i) {
    one_hot[i][labels[i].item<int64_t>()] = 1;
  }
  EXPECT_TRUE(tandem::testing::all_close(
      one_hot,
      tandem::testing::from_values(
          {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0}, {3, 4}, tandem::kFloat32)));

  // A preallocated output filled step by step, then trained through; the
  // numbers are PyTorch 1.13's.
  auto x = tandem::arange(8, tandem::kFloat32).reshape({4, 2}) / 8;
  auto w = tandem::full({2}, 0.5, tandem::requires_grad());
  auto out = tandem::zeros({4, 2});
  for (int64_t t = 0; t < 4; ++t) {
    out[t] = tandem::tanh(x[t] * w);
  }
  out.narrow(/*dim=*/1, /*start=*/1, /*length=*/1) = 0;
  out.sum().backward();
  EXPECT_TRUE(tandem::testing::all_close(
      out.detach(),
      tandem::testing::from_values(
          {0, 0, 0.12435299903154373, 0, 0.24491865932941437, 0, 0.35835739970207214, 0},
          {4, 2},
          tandem::kFloat32)));
  EXPECT_TRUE(tandem::testing::all_close(
      w.grad(),
      tandem::testing::from_values({1.3698264360427856, 0}, {2}, tandem::kFloat32)));
}
