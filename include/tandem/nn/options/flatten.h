// Options for Flatten, with LibTorch's setters. The defaults keep the batch
// dimension: start_dim 1, end_dim -1.
//
//   tandem::nn::Flatten flat(tandem::nn::FlattenOptions().start_dim(0));
#pragma once

#include <cstdint>

namespace tandem::nn {

class FlattenOptions {
 public:
  FlattenOptions& start_dim(int64_t value) {
    start_dim_ = value;
    return *this;
  }
  FlattenOptions& end_dim(int64_t value) {
    end_dim_ = value;
    return *this;
  }
  int64_t start_dim() const noexcept { return start_dim_; }
  int64_t end_dim() const noexcept { return end_dim_; }

 private:
  int64_t start_dim_ = 1;
  int64_t end_dim_ = -1;
};

}  // namespace tandem::nn
