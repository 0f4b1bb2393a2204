// Private: the elementwise loop every CPU kernel is built on, the dtype
// switch that turns a runtime dtype into a C++ type, and raw access to
// optional operands.
//
// Operands share one shape (the caller expands broadcast inputs, giving
// them stride 0). Dimensions that are contiguous for every operand are
// merged first, so a contiguous or broadcast-row tensor runs as one flat
// loop the compiler can vectorise.
//
//   cpu::elementwise<float>(out, [](float a, float b) { return a + b; }, x, y);
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::cpu {

/// Calls `f.template operator()<T>()` with T the C++ type of `dtype`.
template <typename F>
decltype(auto) dispatch_dtype(ScalarType dtype, F&& f) {
  switch (dtype) {
    case kBool:
      return f.template operator()<bool>();
    case kUInt8:
      return f.template operator()<uint8_t>();
    case kInt64:
      return f.template operator()<int64_t>();
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      return f.template operator()<double>();
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown dtype");
}

/// The elements of an optional operand (a bias, a weight), or null when
/// it is undefined.
template <typename T>
T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

/// Same, for float32 and float64 only.
template <typename F>
decltype(auto) dispatch_floating(ScalarType dtype, const char* op, F&& f) {
  switch (dtype) {
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      return f.template operator()<double>();
    default:
      break;
  }
  throw Error(detail::str(op, ": expected a floating-point tensor, got ", dtype));
}

/// A shape with N byte-stride vectors, dims merged where possible.
/// Index 0 is the innermost dimension.
template <size_t N>
struct LoopGeometry {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, N>> strides;  // bytes

  LoopGeometry(const IntList& shape, const std::array<const Tensor*, N>& ops) {
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] == 1) continue;
      std::array<int64_t, N> s{};
      for (size_t k = 0; k < N; ++k) {
        s[k] = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->element_size());
      }
      if (!sizes.empty()) {
        bool mergeable = true;
        for (size_t k = 0; k < N; ++k) {
          mergeable &= s[k] == strides.back()[k] * sizes.back();
        }
        if (mergeable) {
          sizes.back() *= shape[d];
          continue;
        }
      }
      sizes.push_back(shape[d]);
      strides.push_back(s);
    }
    if (sizes.empty()) {  // a scalar or all-ones shape: one element
      sizes.push_back(1);
      strides.push_back({});
    }
  }
};

/// Runs `inner(ptrs, strides, n)` over every innermost run of the loop.
template <size_t N, typename Inner>
void for_each_run(const IntList& shape,
                  const std::array<const Tensor*, N>& ops,
                  Inner&& inner) {
  for (auto* t : ops) {
    if (t->numel() == 0) return;
  }
  LoopGeometry<N> g(shape, ops);
  std::array<char*, N> base{};
  for (size_t k = 0; k < N; ++k) base[k] = static_cast<char*>(ops[k]->data_ptr());
  const int64_t ndim = static_cast<int64_t>(g.sizes.size());
  int64_t outer = 1;
  for (int64_t d = 1; d < ndim; ++d) outer *= g.sizes[d];
  std::vector<int64_t> counter(ndim, 0);
  for (int64_t o = 0; o < outer; ++o) {
    std::array<char*, N> p = base;
    for (int64_t d = 1; d < ndim; ++d) {
      for (size_t k = 0; k < N; ++k) p[k] += counter[d] * g.strides[d][k];
    }
    inner(p, g.strides[0], g.sizes[0]);
    for (int64_t d = 1; d < ndim; ++d) {
      if (++counter[d] < g.sizes[d]) break;
      counter[d] = 0;
    }
  }
}

/// out[i] = f(in0[i], in1[i], ...) with R the output type and Args the input
/// types; every operand has out's shape (broadcast inputs are expanded).
template <typename R, typename... Args, typename F, typename... Inputs>
void elementwise(const Tensor& out, F&& f, const Inputs&... in) {
  constexpr size_t N = 1 + sizeof...(Args);
  static_assert(sizeof...(Args) == sizeof...(in));
  static_assert((std::is_same_v<Inputs, Tensor> && ...));
  std::array<const Tensor*, N> ops{&out, &in...};
  for_each_run<N>(
      out.sizes(),
      ops,
      [&](const std::array<char*, N>& p, const std::array<int64_t, N>& s, int64_t n) {
        [&]<size_t... I>(std::index_sequence<I...>) {
          bool dense = ((s[I + 1] == static_cast<int64_t>(sizeof(Args))) && ...) &&
                       s[0] == static_cast<int64_t>(sizeof(R));
          if (dense) {
            R* o = reinterpret_cast<R*>(p[0]);
            std::tuple<const Args*...> ins{reinterpret_cast<const Args*>(p[I + 1])...};
            for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(ins)[i]...);
            return;
          }
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<R*>(p[0] + i * s[0]) =
                f(*reinterpret_cast<const Args*>(p[I + 1] + i * s[I + 1])...);
          }
        }
        (std::index_sequence_for<Args...>{});
      });
}

}  // namespace tandem::backend::cpu
