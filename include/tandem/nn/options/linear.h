// Options for Linear, with LibTorch's chainable setters.
//
//   tandem::nn::Linear fc(tandem::nn::LinearOptions(784, 64).bias(false));
//   int64_t n = fc->options.out_features();   // 64
#pragma once

#include <cstdint>

namespace tandem::nn {

class LinearOptions {
 public:
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}

  LinearOptions& in_features(int64_t value) {
    in_features_ = value;
    return *this;
  }
  LinearOptions& out_features(int64_t value) {
    out_features_ = value;
    return *this;
  }
  /// Whether the layer learns an additive bias (default true).
  LinearOptions& bias(bool value) {
    bias_ = value;
    return *this;
  }

  int64_t in_features() const noexcept { return in_features_; }
  int64_t out_features() const noexcept { return out_features_; }
  bool bias() const noexcept { return bias_; }

 private:
  int64_t in_features_;
  int64_t out_features_;
  bool bias_ = true;
};

}  // namespace tandem::nn
