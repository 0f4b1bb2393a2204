// Allocator: raw memory for tensor storage on one device type.
//
// Each device type has one allocator; the CPU one hands out 64-byte aligned
// blocks (enough for AVX-512 loads). A DataPtr frees itself.
//
// The CPU allocator caches: a freed block goes to a free list of its size
// class and the next request of that class gets it back, so a training loop,
// which allocates the same few shapes every step, stops asking the system
// for memory (and stops paying for the kernel to map and zero fresh pages)
// after its first steps. Idle cached memory is bounded by a limit (default:
// a quarter of the machine's RAM); empty_cache() returns it all.
//
// TANDEM_CPU_ALLOCATOR=system in the environment (read on first use) turns
// caching off: every block comes from aligned_alloc and goes back to free.
// TANDEM_CPU_ALLOCATOR=caching turns it on. Builds with AddressSanitizer
// default to system, so that use-after-free is found; elsewhere the default
// is caching. The statistics are kept in both modes.
//
//   DataPtr p = cpu_allocator().allocate(1024);
//
//   tandem::reset_peak_cpu_allocator_stats();
//   train_one_step();
//   AllocatorStats s = tandem::cpu_allocator_stats();
//   std::cout << s.peak_bytes_in_use << " bytes at peak, " << s.bytes_cached
//             << " cached, " << s.cache_hits << "/" << s.allocations << " hits\n";
//   tandem::empty_cache();  // give the cached blocks back to the system
#pragma once

#include <cstddef>
#include <cstdint>
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

/// What the CPU allocator did and holds. Counts are totals since the process
/// started (take differences around the code being measured); byte amounts
/// are of blocks, i.e. requests rounded up to their size class, except
/// requested_bytes_in_use.
struct AllocatorStats {
  int64_t allocations = 0;         // allocate() calls of more than 0 bytes
  int64_t cache_hits = 0;          // ... served from the cache
  int64_t system_allocations = 0;  // ... served by aligned_alloc
  int64_t system_frees = 0;        // blocks given back to free()
  int64_t evictions = 0;           // cached blocks freed to stay under the limit

  int64_t blocks_in_use = 0;           // live allocations
  int64_t bytes_in_use = 0;            // their blocks' sizes
  int64_t requested_bytes_in_use = 0;  // what they asked for
  int64_t peak_bytes_in_use = 0;       // since start or the last reset_peak...()

  int64_t blocks_cached = 0;  // free blocks kept for reuse
  int64_t bytes_cached = 0;
  int64_t cache_limit = 0;  // most bytes_cached may reach
  bool caching = false;     // whether freed blocks are kept (the mode)
};

AllocatorStats cpu_allocator_stats();

/// Sets peak_bytes_in_use to the current bytes_in_use.
void reset_peak_cpu_allocator_stats();

/// Gives every cached (free) block back to the system; blocks in use stay.
void empty_cache();

/// Turns caching on or off at run time (off empties the cache); overrides
/// TANDEM_CPU_ALLOCATOR. Blocks allocated in either mode may be freed in
/// the other.
void set_cpu_allocator_caching(bool enabled);
bool cpu_allocator_caching();

/// The most bytes of free blocks the cache keeps (>= 0; 0 caches nothing).
/// Freeing a block that would go over it first frees the least recently
/// cached blocks; lowering it below bytes_cached evicts at once.
void set_cpu_allocator_cache_limit(int64_t bytes);

namespace detail {

/// The size of the block a request of `nbytes` (> 0) gets in caching mode:
/// its size class (see Note [CPU size classes] in caching_allocator.cpp).
size_t cpu_block_size(size_t nbytes);

}  // namespace detail
}  // namespace tandem
