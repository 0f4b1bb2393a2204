// Helpers for the parallel layer's tests: device lists and small modules.
#pragma once

#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::testing {

/// cpu:0 .. cpu:n-1.
inline std::vector<Device> cpu_devices(int n) {
  std::vector<Device> devices;
  for (int i = 0; i < n; ++i) devices.emplace_back(kCPU, i);
  return devices;
}

/// Sizes along dim 0 of `pieces`.
inline std::vector<int64_t> rows_of(const std::vector<Tensor>& pieces) {
  std::vector<int64_t> rows;
  for (const Tensor& p : pieces) rows.push_back(p.size(0));
  return rows;
}

/// Linear -> ReLU -> Linear -> ReLU -> Linear.
inline nn::Sequential make_mlp(int64_t in, int64_t hidden, int64_t out) {
  return nn::Sequential(nn::Linear(in, hidden),
                        nn::ReLU(),
                        nn::Linear(hidden, hidden),
                        nn::ReLU(),
                        nn::Linear(hidden, out));
}

/// A module with a buffer its forward updates in place and a plain counter
/// it increments (spec cases 10 and 12).
struct StatefulImpl : nn::Cloneable<StatefulImpl> {
  StatefulImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(4, 2));
    calls = register_buffer("calls", zeros({1}));
  }
  Tensor forward(const Tensor& x) {
    ++counter;
    {
      NoGradGuard no_grad;
      calls.add_(1);
    }
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
  Tensor calls;
  int counter = 0;
};
TANDEM_MODULE(Stateful);

}  // namespace tandem::testing
