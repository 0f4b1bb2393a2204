// Options for Dropout and functional::dropout, with LibTorch's setters
// (no inplace: tandem's dropout always returns a new tensor).
//
//   tandem::nn::Dropout drop(tandem::nn::DropoutOptions(0.2));
//   auto y = F::dropout(x, F::DropoutFuncOptions().p(0.5).training(is_training()));
#pragma once

namespace tandem::nn {

class DropoutOptions {
 public:
  /// The probability of zeroing an element (default 0.5).
  DropoutOptions(double p = 0.5) : p_(p) {}  // implicit
  DropoutOptions& p(double value) {
    p_ = value;
    return *this;
  }
  double p() const noexcept { return p_; }

 private:
  double p_;
};

namespace functional {

class DropoutFuncOptions {
 public:
  DropoutFuncOptions& p(double value) {
    p_ = value;
    return *this;
  }
  /// Dropout acts only when training (default true, as in LibTorch).
  DropoutFuncOptions& training(bool value) {
    training_ = value;
    return *this;
  }
  double p() const noexcept { return p_; }
  bool training() const noexcept { return training_; }

 private:
  double p_ = 0.5;
  bool training_ = true;
};

}  // namespace functional
}  // namespace tandem::nn
