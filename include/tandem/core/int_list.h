// IntList: sizes, strides and dim lists. A std::vector<int64_t> in all but
// name; being a tandem type lets argument-dependent lookup find its
// operator<< from any namespace, so `std::cout << x.sizes()` prints [15, 5]
// without a using-directive (as c10::IntArrayRef does for LibTorch).
//
//   tandem::IntList shape = {2, 3};
//   std::cout << shape;   // [2, 3]
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

namespace tandem {

class IntList : public std::vector<int64_t> {
 public:
  using std::vector<int64_t>::vector;
  IntList() = default;
  IntList(const std::vector<int64_t>& v) : std::vector<int64_t>(v) {}  // NOLINT
  IntList(std::vector<int64_t>&& v)  // NOLINT(google-explicit-constructor)
      : std::vector<int64_t>(std::move(v)) {}
};

/// Prints sizes the PyTorch way: [15, 5].
std::ostream& operator<<(std::ostream& out, const std::vector<int64_t>& sizes);

}  // namespace tandem
