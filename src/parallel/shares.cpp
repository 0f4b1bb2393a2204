#include "tandem/parallel/shares.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tandem/core/error.h"

namespace tandem::parallel {

std::vector<int64_t> even_cut(int64_t rows, size_t devices) {
  TANDEM_CHECK(devices > 0, "even_cut: no devices");
  const auto n = static_cast<int64_t>(devices);
  const int64_t piece = (rows + n - 1) / n;
  std::vector<int64_t> cut(devices, 0);
  int64_t left = rows;
  for (int64_t& c : cut) {
    c = std::min(piece, left);
    left -= c;
  }
  return cut;
}

std::vector<int64_t> split_evenly(int64_t rows, size_t parts) {
  TANDEM_CHECK(parts > 0, "split_evenly: no parts");
  const auto n = static_cast<int64_t>(parts);
  std::vector<int64_t> split(parts, rows / n);
  for (int64_t r = 0; r < rows % n; ++r) ++split[static_cast<size_t>(r)];
  return split;
}

std::vector<int64_t> cut_by_shares(int64_t rows, const std::vector<double>& weights) {
  check_shares(weights, weights.size(), "cut_by_shares");
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> cut(weights.size());
  std::vector<double> remainder(weights.size());
  int64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = static_cast<double>(rows) * (weights[i] / total);
    cut[i] = static_cast<int64_t>(std::floor(exact));
    remainder[i] = weights[i] > 0 ? exact - static_cast<double>(cut[i]) : -1.0;
    given += cut[i];
  }
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainder[a] > remainder[b];
  });
  // Rounding can leave at most one row per device, and only devices with a
  // weight take one.
  for (size_t k = 0; given < rows; k = (k + 1) % order.size()) {
    if (weights[order[k]] > 0) {
      ++cut[order[k]];
      ++given;
    }
  }
  return cut;
}

void check_shares(const std::vector<double>& weights,
                  size_t devices,
                  const std::string& what) {
  TANDEM_CHECK(weights.size() == devices,
               what,
               ": expected one share per device (",
               devices,
               " devices) but got ",
               weights.size());
  bool any = false;
  for (size_t i = 0; i < weights.size(); ++i) {
    TANDEM_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                 what,
                 ": share ",
                 i,
                 " is ",
                 weights[i],
                 "; shares are relative weights, each finite and >= 0");
    any = any || weights[i] > 0;
  }
  TANDEM_CHECK(any, what, ": every share is 0; at least one device must get rows");
}

std::vector<double> normalized(const std::vector<double>& weights) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> out;
  out.reserve(weights.size());
  for (double w : weights) out.push_back(total > 0 ? w / total : 0.0);
  return out;
}

}  // namespace tandem::parallel
