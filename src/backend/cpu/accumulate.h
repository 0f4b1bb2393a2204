// Private: sums over runs of elements, accumulated in double.
//
// One double accumulator makes a summing loop latency-bound: each add waits
// for the previous one (4 cycles), about 1 ns per element. Eight
// independent lanes, added up at the end, let the compiler vectorise and
// pipeline the loop; the order of the additions is still fixed by n alone,
// so results do not depend on threads or alignment.
//
//   double total = sum_of(n, [&](int64_t i) { return double(g[i]) * x[i]; });
#pragma once

#include <cstdint>

namespace tandem::backend::cpu {

/// The sum of term(i) over i in [0, n), term returning double.
template <typename Term>
double sum_of(int64_t n, Term&& term) {
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += term(i + j);
  }
  double total = 0;
  for (int64_t j = 0; j < kLanes; ++j) total += lanes[j];
  for (; i < n; ++i) total += term(i);
  return total;
}

}  // namespace tandem::backend::cpu
