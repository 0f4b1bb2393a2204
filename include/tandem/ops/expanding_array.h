// ExpandingArray<D>: D per-dimension values (kernel size, stride, padding,
// dilation) that a single value stands for, as LibTorch's
// torch::ExpandingArray: `2` means {2, 2}. Conv and pooling ops and their
// options take it, so their arguments read alike.
//
//   tandem::ExpandingArray<2> kernel = 3;           // {3, 3}
//   tandem::ExpandingArray<2> padding = {1, 0};
//   std::cout << kernel << " " << padding[0];       // [3, 3] 1
//   tandem::conv2d(x, w, b, /*stride=*/2, /*padding=*/{1, 0});
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/core/int_list.h"

namespace tandem {

template <size_t D>
class ExpandingArray {
 public:
  /// The same value for every dimension.
  ExpandingArray(int64_t value) { values_.fill(value); }  // implicit
  /// D values, or one for all of them.
  ExpandingArray(std::initializer_list<int64_t> values)
      : ExpandingArray(std::vector<int64_t>(values)) {}
  ExpandingArray(const std::vector<int64_t>& values) {  // implicit
    TANDEM_CHECK(values.size() == D || values.size() == 1,
                 "expected ",
                 D,
                 " values (or one for all dimensions), but got ",
                 values.size(),
                 ": ",
                 values);
    for (size_t i = 0; i < D; ++i) values_[i] = values[values.size() == 1 ? 0 : i];
  }
  ExpandingArray(const std::array<int64_t, D>& values)  // implicit
      : values_(values) {}

  int64_t operator[](size_t i) const { return values_[i]; }
  const std::array<int64_t, D>& operator*() const { return values_; }
  const std::array<int64_t, D>* operator->() const { return &values_; }
  static constexpr size_t size() { return D; }
  IntList vec() const { return IntList(values_.begin(), values_.end()); }
  /// As LibTorch's conversion to IntArrayRef: an ExpandingArray passes
  /// where sizes or dims are expected.
  operator IntList() const { return vec(); }  // implicit

  bool operator==(const ExpandingArray& other) const = default;

  /// Prints as sizes do: [3, 3].
  friend std::ostream& operator<<(std::ostream& out, const ExpandingArray& a) {
    return out << std::vector<int64_t>(a.values_.begin(), a.values_.end());
  }

 private:
  std::array<int64_t, D> values_{};
};

}  // namespace tandem
