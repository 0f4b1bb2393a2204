// Allocator: raw memory for tensor storage on one device type.
//
// Each device type has one allocator; the CPU one hands out 64-byte aligned
// blocks (enough for AVX-512 loads). A DataPtr frees itself.
//
//   DataPtr p = cpu_allocator().allocate(1024);
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace tandem {

using DataPtr = std::unique_ptr<void, std::function<void(void*)>>;

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

Allocator& cpu_allocator();

}  // namespace tandem
