// Helpers for the distributed tests: tensors whose values are a function of
// the index (and of the rank, by the caller), and an exact comparison that
// reports the first mismatching elements with this rank's number.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem::distributed::testing {

inline std::shared_ptr<ProcessGroup> world() { return ProcessGroup::world(); }

template <typename T>
Tensor make(int64_t n, const std::function<T(int64_t)>& value) {
  Tensor t = tandem::empty({n}, dtype_of_v<T>);
  T* p = t.data_ptr<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = value(i);
  return t;
}

/// Exact equality, element by element; reports at most 5 mismatches.
template <typename T>
void expect_values(const Tensor& t, const std::function<T(int64_t)>& value) {
  ASSERT_EQ(t.dtype(), dtype_of_v<T>);
  const T* p = t.data_ptr<T>();
  int reported = 0;
  for (int64_t i = 0; i < t.numel() && reported < 5; ++i) {
    if (p[i] != value(i)) {
      ADD_FAILURE() << "rank " << get_rank() << ": element " << i << " is " << p[i]
                    << ", expected " << value(i);
      ++reported;
    }
  }
}

/// The message of the tandem::Error `f` throws ("" if it throws none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    return e.what();
  }
  return "";
}

/// Rank 0's values of `t` (a broadcast of a copy: every rank must call it).
inline Tensor root_copy(const std::shared_ptr<ProcessGroup>& pg, const Tensor& t) {
  Tensor copy = t.detach().clone();
  pg->broadcast(copy).wait();
  return copy;
}

/// Rank 0's `mine` (two broadcasts, so the lengths may differ across ranks;
/// every rank must call it).
inline std::vector<int64_t> root_values(const std::shared_ptr<ProcessGroup>& pg,
                                        const std::vector<int64_t>& mine) {
  Tensor length = tandem::full({1}, static_cast<int64_t>(mine.size()), kInt64);
  pg->broadcast(length).wait();
  const int64_t n = length.data_ptr<int64_t>()[0];
  Tensor values = tandem::zeros({n}, kInt64);
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(mine.size()); ++i) {
    values.data_ptr<int64_t>()[i] = mine[static_cast<size_t>(i)];
  }
  pg->broadcast(values).wait();
  return std::vector<int64_t>(values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + n);
}

/// Buckets as one list: each bucket's size, then its indices.
inline std::vector<int64_t> flatten_buckets(
    const std::vector<std::vector<size_t>>& buckets) {
  std::vector<int64_t> flat;
  for (const auto& bucket : buckets) {
    flat.push_back(static_cast<int64_t>(bucket.size()));
    for (size_t index : bucket) flat.push_back(static_cast<int64_t>(index));
  }
  return flat;
}

/// Rank `rank`'s consecutive share of the rows of `t` (size(0) divisible by
/// `size`).
inline Tensor share(const Tensor& t, int rank, int size) {
  const int64_t per = t.size(0) / size;
  return tandem::narrow(t, 0, rank * per, per);
}

}  // namespace tandem::distributed::testing
