// TensorAccessor<T, N>: indexed access to the elements of an N-dim CPU
// tensor with its strides, as LibTorch's (made by Tensor::accessor<T, N>()).
// `a[i][j]` is a reference into the tensor's memory; indices are not checked
// (it is the loop-body tool; check sizes before the loop).
//
//   auto a = x.accessor<float, 2>();
//   for (int64_t i = 0; i < a.size(0); ++i)
//     for (int64_t j = 0; j < a.size(1); ++j) total += a[i][j];
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tandem {

template <typename T, size_t N>
class TensorAccessor {
  static_assert(N >= 1, "TensorAccessor: N must be at least 1");

 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides) : data_(data) {
    for (size_t d = 0; d < N; ++d) {
      sizes_[d] = sizes[d];
      strides_[d] = strides[d];
    }
  }

  /// Element i along the first dim: a T& for N == 1, else an accessor of
  /// the (N-1)-dim slice.
  decltype(auto) operator[](int64_t i) const {
    if constexpr (N == 1) {
      return static_cast<T&>(data_[i * strides_[0]]);
    } else {
      return TensorAccessor<T, N - 1>(
          data_ + i * strides_[0], sizes_.data() + 1, strides_.data() + 1);
    }
  }

  int64_t size(size_t dim) const { return sizes_[dim]; }
  int64_t stride(size_t dim) const { return strides_[dim]; }
  T* data() const { return data_; }

 private:
  T* data_;
  std::array<int64_t, N> sizes_{};
  std::array<int64_t, N> strides_{};
};

}  // namespace tandem
