// Helpers for the distributed tests: tensors whose values are a function of
// the index (and of the rank, by the caller), and an exact comparison that
// reports the first mismatching elements with this rank's number.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"
#include "tandem/ops/factory.h"

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

}  // namespace tandem::distributed::testing
