// Private: the elementwise loop every CPU kernel is built on, the one place
// that decides whether a kernel's work is split across threads, the dtype
// switch that turns a runtime dtype into a C++ type, and raw access to
// optional operands.
//
// Operands share one shape (the caller expands broadcast inputs, giving
// them stride 0). Dimensions that are contiguous for every operand are
// merged first, so a contiguous or broadcast-row tensor runs as one flat
// loop the compiler can vectorise.
//
//   cpu::parallel_elementwise<float, float, float>(
//       out, [](float a, float b) { return a + b; }, x, y);
//   cpu::parallel_over(rows, /*cost=*/cols, [&](int64_t begin, int64_t end) {...});
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/core/cpu_budget.h"
#include "tandem/core/error.h"
#include "tandem/core/small_vector.h"
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

// Note [Intra-op grain]
// ~~~~~~~~~~~~~~~~~~~~~
// Handing a range to a helper thread costs ~1.5 us while the helper still
// spins from the previous op (back-to-back ops of a training step, see Note
// [Spin before sleeping]) and ~25 us once it sleeps, while cheap work (an
// add: two loads, an add, a store) runs at ~0.1 ns per element in cache. On
// the 2-core machine this was tuned on, BM_AddSizeThreads (bench/
// elementwise_bench.cpp) has two threads tie with one at 32K elements and
// win from 48K on (4.1 vs 4.7 us); splitting only from 64K elements (two
// ranges of kMinTaskCost) keeps a margin for colder hand-offs. Costlier
// work per item (a row of a softmax, an Adam update) is weighed by its
// cost. The split never changes a result: every caller gives each item's
// outputs to one task, and reductions fix their order by the shape alone
// (see reduction.cpp).
constexpr int64_t kMinTaskCost = int64_t{1} << 15;

/// Runs fn(begin, end) over [0, items), split across the calling device's
/// threads (parallel_for) into ranges of at least kMinTaskCost cost each,
/// inline when one range is all the work allows. `cost` is one item's work
/// counted in cheap elementwise operations (the elements of a row, or more
/// for an exp per element).
template <typename Fn>
void parallel_over(int64_t items, int64_t cost, Fn&& fn) {
  if (items <= 0) return;
  const int64_t grain = std::max<int64_t>(1, kMinTaskCost / std::max<int64_t>(1, cost));
  const int64_t ranges = items / grain;
  if (ranges < 2 || intra_op_threads() == 1) {
    fn(int64_t{0}, items);
    return;
  }
  // parallel_for cuts ceil(items / its grain) ranges at most: `ranges` here.
  parallel_for(
      0, items, (items + ranges - 1) / ranges, [&fn](int64_t begin, int64_t end) {
        fn(begin, end);
      });
}

/// A shape with N byte-stride vectors, dims merged where possible.
/// Index 0 is the innermost dimension.
template <size_t N>
struct LoopGeometry {
  // Inline up to 8 merged dims (Note [Sizes without the heap]).
  SmallVector<int64_t, 8> sizes;
  SmallVector<std::array<int64_t, N>, 8> strides;  // bytes

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

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }

  // The bytes [first, last) that operand k touches from `base`.
  std::pair<const char*, const char*> extent(size_t k,
                                             const char* base,
                                             int64_t size) const {
    const char* first = base;
    const char* last = base + size;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const int64_t span = (sizes[d] - 1) * strides[d][k];
      (span < 0 ? first : last) += span;
    }
    return {first, last};
  }

  // Whether operand 0, the output, may be written in any order: each of its
  // elements is its own memory (no stride 0 from expand), and every input
  // either lies outside the output's bytes or is the output itself (same
  // start, same strides), so no element is read after another iteration
  // wrote it. Otherwise only the serial order defines the result (an
  // in-place op on an expanded tensor, or into a transposed view of its
  // input). Bytes rather than storages are compared because from_blob can
  // wrap the same memory twice.
  bool output_independent(const std::array<const Tensor*, N>& ops,
                          const std::array<char*, N>& base) const {
    for (const auto& s : strides) {
      if (s[0] == 0) return false;
    }
    const auto out = extent(0, base[0], static_cast<int64_t>(ops[0]->element_size()));
    for (size_t k = 1; k < N; ++k) {
      const auto in = extent(k, base[k], static_cast<int64_t>(ops[k]->element_size()));
      if (in.second <= out.first || out.second <= in.first) continue;
      if (base[k] != base[0] || ops[k]->element_size() != ops[0]->element_size()) {
        return false;
      }
      for (const auto& s : strides) {
        if (s[k] != s[0]) return false;
      }
    }
    return true;
  }
};

/// Whether a loop may split its elements across threads.
enum class Order {
  kAny,         // f depends on its operands alone and writes each output once
  kSequential,  // first to last on the calling thread: f draws random numbers,
                // or accumulates into outputs that several elements share
};

/// Runs `inner(ptrs, strides, n)` over every innermost run of the loop, in
/// ranges of the flattened elements spread over threads when `order`
/// allows (a range may begin or end inside a run).
template <size_t N, typename Inner>
void for_each_run(Order order,
                  const IntList& shape,
                  const std::array<const Tensor*, N>& ops,
                  Inner&& inner) {
  for (auto* t : ops) {
    if (t->numel() == 0) return;
  }
  const LoopGeometry<N> g(shape, ops);
  std::array<char*, N> base{};
  for (size_t k = 0; k < N; ++k) base[k] = static_cast<char*>(ops[k]->data_ptr());
  const auto ndim = static_cast<int64_t>(g.sizes.size());
  auto run_range = [&](int64_t begin, int64_t end) {
    SmallVector<int64_t, 8> counter(static_cast<size_t>(ndim));
    for (int64_t d = 0, rest = begin; rest != 0 && d < ndim; ++d) {
      counter[d] = rest % g.sizes[d];
      rest /= g.sizes[d];
    }
    for (int64_t at = begin; at < end;) {
      std::array<char*, N> p = base;
      for (int64_t d = 0; d < ndim; ++d) {
        for (size_t k = 0; k < N; ++k) p[k] += counter[d] * g.strides[d][k];
      }
      const int64_t n = std::min(g.sizes[0] - counter[0], end - at);
      inner(p, g.strides[0], n);
      at += n;
      counter[0] = 0;
      for (int64_t d = 1; d < ndim; ++d) {
        if (++counter[d] < g.sizes[d]) break;
        counter[d] = 0;
      }
    }
  };
  const int64_t numel = g.numel();
  // Small loops skip the overlap test: they run inline anyway.
  if (order == Order::kAny && numel >= 2 * kMinTaskCost &&
      g.output_independent(ops, base)) {
    parallel_over(numel, /*cost=*/1, run_range);
  } else {
    run_range(0, numel);
  }
}

/// out[i] = f(in0[i], in1[i], ...) with R the output type and Args the input
/// types; every operand has out's shape (broadcast inputs are expanded).
template <typename R, typename... Args, typename F, typename... Inputs>
void map_elements(Order order, const Tensor& out, F&& f, const Inputs&... in) {
  constexpr size_t N = 1 + sizeof...(Args);
  static_assert(sizeof...(Args) == sizeof...(in));
  static_assert((std::is_same_v<Inputs, Tensor> && ...));
  std::array<const Tensor*, N> ops{&out, &in...};
  for_each_run<N>(
      order,
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

/// map_elements for a pure f, split across threads when big enough.
template <typename R, typename... Args, typename F, typename... Inputs>
void parallel_elementwise(const Tensor& out, F&& f, const Inputs&... in) {
  map_elements<R, Args...>(Order::kAny, out, std::forward<F>(f), in...);
}

/// map_elements in order on the calling thread, for an f with state (a
/// random generator's draw).
template <typename R, typename... Args, typename F, typename... Inputs>
void elementwise(const Tensor& out, F&& f, const Inputs&... in) {
  map_elements<R, Args...>(Order::kSequential, out, std::forward<F>(f), in...);
}

}  // namespace tandem::backend::cpu
