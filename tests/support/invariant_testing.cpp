#include "support/invariant_testing.h"

#include <cstring>

namespace tandem::testing {

std::unique_ptr<optim::Optimizer> make_optimizer(Optimizer which,
                                                 std::vector<Tensor> params) {
  if (which == Optimizer::kSgdMomentum) {
    return std::make_unique<optim::SGD>(std::move(params),
                                        optim::SGDOptions(0.05).momentum(0.9));
  }
  return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(1e-2));
}

std::string optimizer_name(Optimizer which) {
  return which == Optimizer::kSgdMomentum ? "SgdMomentum" : "Adam";
}

Task mlp_with_dropout() {
  return {"MLP with dropout",
          [] {
            return nn::Sequential(nn::Linear(20, 32),
                                  nn::ReLU(),
                                  nn::Dropout(0.3),
                                  nn::Linear(32, 32),
                                  nn::ReLU(),
                                  nn::Linear(32, 5));
          },
          [](Generator& g, int64_t rows) {
            return randn({rows, 20}, g);
          },
          5,
          50};
}

Task cnn_without_batch_norm() {
  return {"CNN with Dropout2d, without batch norm",
          [] {
            return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)),
                                  nn::ReLU(),
                                  nn::Dropout2d(0.25),
                                  nn::MaxPool2d(2),
                                  nn::Conv2d(4, 6, 3),
                                  nn::ReLU(),
                                  nn::Flatten(),
                                  nn::Dropout(0.2),
                                  nn::Linear(6 * 2 * 2, 3));
          },
          [](Generator& g, int64_t rows) {
            return randn({rows, 1, 8, 8}, g);
          },
          3,
          37};
}

Task tutorial_model() {
  return {"the tutorial's Model",
          [] { return nn::Sequential(nn::Linear(5, 2)); },
          [](Generator& g, int64_t rows) {
            return randn({rows, 5}, g);
          },
          2,
          30};
}

std::map<std::string, Tensor> train(const Task& task,
                                    const StepLoss& loss,
                                    nn::Module& trained,
                                    Optimizer which) {
  auto optimizer = make_optimizer(which, trained.parameters());
  Generator data(11);
  for (int step = 0; step < 20; ++step) {
    const Tensor x = task.inputs(data, task.batch);
    const Tensor y = randint(0, task.classes, {task.batch}, data);
    optimizer->zero_grad();
    loss(x, y).backward();
    optimizer->step();
  }
  std::map<std::string, Tensor> state;
  for (const auto& p : trained.named_parameters()) state["param " + p.key()] = p.value();
  for (const auto& [key, value] : optimizer->state_dict()) state["optim " + key] = value;
  return state;
}

::testing::AssertionResult same_bits(const std::map<std::string, Tensor>& want,
                                     const std::map<std::string, Tensor>& got) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure()
           << want.size() << " tensors expected, " << got.size() << " found";
  }
  for (const auto& [name, w] : want) {
    const auto it = got.find(name);
    if (it == got.end()) return ::testing::AssertionFailure() << name << " is missing";
    const Tensor a = w.contiguous();
    const Tensor b = it->second.contiguous();
    if (a.sizes() != b.sizes() || a.dtype() != b.dtype() ||
        std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) != 0) {
      return ::testing::AssertionFailure()
             << name << " differs (max |difference| "
             << (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tandem::testing
