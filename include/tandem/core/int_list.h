// IntList: sizes, strides and dim lists. A vector of int64_t that keeps up
// to six elements inline (Note [Sizes without the heap] in small_vector.h);
// being a tandem type lets argument-dependent lookup find its operator<<
// from any namespace, so `std::cout << x.sizes()` prints [15, 5] without a
// using-directive (as c10::IntArrayRef does for LibTorch). It converts to
// and from std::vector<int64_t>.
//
//   tandem::IntList shape = {2, 3};
//   std::cout << shape;   // [2, 3]
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "tandem/core/small_vector.h"

namespace tandem {

class IntList : public SmallVector<int64_t, 6> {
 public:
  using SmallVector<int64_t, 6>::SmallVector;
  IntList() = default;
};

/// Prints sizes the PyTorch way: [15, 5].
std::ostream& operator<<(std::ostream& out, const IntList& sizes);
std::ostream& operator<<(std::ostream& out, const std::vector<int64_t>& sizes);

}  // namespace tandem
