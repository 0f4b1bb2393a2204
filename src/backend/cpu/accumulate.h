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
#include <utility>

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

/// {sum_of(n, first), sum_of(n, second)} in one pass over i, for terms that
/// read the same memory; each sum adds in sum_of's order.
template <typename First, typename Second>
std::pair<double, double> sums_of(int64_t n, First&& first, Second&& second) {
  constexpr int64_t kLanes = 8;
  double a[kLanes] = {}, b[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      a[j] += first(i + j);
      b[j] += second(i + j);
    }
  }
  std::pair<double, double> total{0, 0};
  for (int64_t j = 0; j < kLanes; ++j) {
    total.first += a[j];
    total.second += b[j];
  }
  for (; i < n; ++i) {
    total.first += first(i);
    total.second += second(i);
  }
  return total;
}

}  // namespace tandem::backend::cpu
