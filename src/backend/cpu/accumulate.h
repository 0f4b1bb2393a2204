// Private: sums over runs of elements, accumulated in double.
//
// One double accumulator makes a summing loop latency-bound: each add waits
// for the previous one (4 cycles), about 1 ns per element. Eight
// independent lanes, added up at the end, let the compiler vectorise and
// pipeline the loop; the order of the additions is still fixed by n alone,
// so results do not depend on threads or alignment.
//
//   double total = sum_of(n, [&](int64_t i) { return double(g[i]) * x[i]; });
//   auto [sum_g, sum_gx] = sums_of(n, [&](int64_t i) { return double(g[i]); },
//                                  [&](int64_t i) { return double(g[i]) * x[i]; });
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tandem::backend::cpu {

/// The sums of several terms over i in [0, n), each term(i) returning
/// double, in one pass (for terms that read the same memory). Every sum adds
/// in the same fixed order, whatever the other terms.
template <typename... Terms>
std::array<double, sizeof...(Terms)> sums_of(int64_t n, Terms&&... terms) {
  constexpr size_t kTerms = sizeof...(Terms);
  constexpr int64_t kLanes = 8;
  double lanes[kTerms][kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      size_t t = 0;
      ((lanes[t++][j] += terms(i + j)), ...);
    }
  }
  std::array<double, kTerms> totals{};
  for (size_t t = 0; t < kTerms; ++t) {
    for (int64_t j = 0; j < kLanes; ++j) totals[t] += lanes[t][j];
  }
  for (; i < n; ++i) {
    size_t t = 0;
    ((totals[t++] += terms(i)), ...);
  }
  return totals;
}

/// The sum of term(i) over i in [0, n), term returning double.
template <typename Term>
double sum_of(int64_t n, Term&& term) {
  return sums_of(n, std::forward<Term>(term))[0];
}

}  // namespace tandem::backend::cpu
