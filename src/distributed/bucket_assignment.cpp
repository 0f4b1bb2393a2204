#include "tandem/distributed/bucket_assignment.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::distributed {

std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors,
    const std::vector<size_t>& size_limits,
    const std::vector<size_t>& order) {
  TANDEM_CHECK(!size_limits.empty(),
               "compute_bucket_assignment_by_size: size_limits is empty");
  std::vector<size_t> visit = order;
  if (visit.empty()) {
    visit.resize(tensors.size());
    std::iota(visit.begin(), visit.end(), size_t{0});
  }
  TANDEM_CHECK(visit.size() == tensors.size(),
               "compute_bucket_assignment_by_size: the order lists ",
               visit.size(),
               " indices for ",
               tensors.size(),
               " tensors");
  std::vector<bool> seen(tensors.size(), false);
  for (size_t index : visit) {
    TANDEM_CHECK(index < tensors.size() && !seen[index],
                 "compute_bucket_assignment_by_size: the order is not a permutation of "
                 "0..",
                 tensors.size() - 1,
                 " (index ",
                 index,
                 ")");
    seen[index] = true;
  }

  struct Open {
    std::vector<size_t> indices;
    size_t bytes = 0;
    size_t limit = 0;  // position in size_limits
  };
  std::map<std::pair<ScalarType, Device>, Open> open;
  std::vector<std::vector<size_t>> buckets;
  for (size_t index : visit) {
    const Tensor& t = tensors[index];
    TANDEM_CHECK(t.defined(),
                 "compute_bucket_assignment_by_size: tensor ",
                 index,
                 " is undefined");
    Open& bucket = open[{t.dtype(), t.device()}];
    bucket.indices.push_back(index);
    bucket.bytes += static_cast<size_t>(t.numel()) * t.element_size();
    if (bucket.bytes >= size_limits[bucket.limit]) {
      buckets.push_back(std::move(bucket.indices));
      bucket.indices.clear();
      bucket.bytes = 0;
      bucket.limit = std::min(bucket.limit + 1, size_limits.size() - 1);
    }
  }
  for (auto& [key, bucket] : open) {
    if (!bucket.indices.empty()) buckets.push_back(std::move(bucket.indices));
  }
  if (order.empty()) {
    std::sort(buckets.begin(), buckets.end(), [](const auto& a, const auto& b) {
      return *std::min_element(a.begin(), a.end()) <
             *std::min_element(b.begin(), b.end());
    });
  }
  return buckets;
}

}  // namespace tandem::distributed
