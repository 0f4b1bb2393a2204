// The CPU allocator: size-class free lists in front of aligned_alloc/free,
// with statistics (see tandem/core/allocator.h).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include "tandem/core/allocator.h"
#include "tandem/core/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define TANDEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TANDEM_ASAN 1
#endif
#endif
#ifdef TANDEM_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace tandem {
namespace {

// Note [Why a caching CPU allocator]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A training step allocates and frees the same tensors every step: the MLP
// at batch 256 has 1 MiB activations and 3-4 MiB weight gradients. glibc
// serves blocks that big with mmap (or trims them off the heap top on free),
// so every step the kernel maps fresh pages and zeroes each one on first
// touch (clear_page, ~4% of a DataParallel step's CPU): measured in the
// system mode, a step of that MLP on one device takes ~620 minor page
// faults, over cpu:0,cpu:1 ~50; with the cache, none. Keeping freed blocks
// and handing them back to the next request of the same size class makes a
// step after warm-up allocate nothing from the system.
//
// One mutex guards everything: it is held for a few dozen instructions per
// allocate or free (a vector push or pop and some counters), and a step does
// a few hundred of them, so even several device threads rarely meet on it.
// Blocks freed on another thread than the one that allocated them simply go
// to the shared lists.

// Note [CPU size classes]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A request is first rounded up to a multiple of 64 bytes (the alignment).
// Up to 1 KiB that is its class: 16 classes, at most 63 bytes wasted.
// Above, each power-of-two range (2^k, 2^(k+1)] has four classes, 1.25,
// 1.5, 1.75 and 2 times 2^k (jemalloc's spacing): a request is rounded up
// to a multiple of 2^(k-2). The waste is under a quarter of the request
// (2^k + 64 bytes gets 1.25 * 2^k), about 8% for sizes spread evenly; in
// exchange one tensor shape always maps to one class, nearby shapes share
// classes, and there are few classes (224 up to 2^62 bytes), so the lists
// are a flat array indexed by class. The MLP's shapes: 1 MiB and 4 MiB
// are classes themselves, 784x1024 floats (3.06 MiB) get 3.5 MiB. The tail
// past the request is memory the tensor never touches; from fresh pages it
// is address space, not resident memory.
//
// Blocks are never split or merged: a request only reuses a block of its
// own class. That keeps the allocator a few lines, and a training loop
// reuses exactly anyway; what it costs is memory cached in classes no
// longer asked for, which the cache limit bounds.
constexpr size_t kAlignment = 64;
constexpr size_t kSmallLimit = 1024;
constexpr int kLog2SmallLimit = 10;
constexpr int kClassesPerDoubling = 4;
// Larger requests fail as out of memory (no machine has that much), which
// keeps the rounding below from overflowing.
constexpr int kLog2MaxRequest = 62;
constexpr size_t kMaxRequest = size_t{1} << kLog2MaxRequest;
constexpr size_t kNumClasses =
    kSmallLimit / kAlignment +
    size_t{kClassesPerDoubling} * (kLog2MaxRequest - kLog2SmallLimit);

// `step` is a power of two.
constexpr size_t round_up(size_t n, size_t step) { return (n + step - 1) & ~(step - 1); }

constexpr size_t block_size(size_t nbytes) {
  const size_t n = round_up(nbytes, kAlignment);
  if (n <= kSmallLimit) return n;
  const int k = std::bit_width(n - 1) - 1;  // 2^k < n <= 2^(k+1)
  return round_up(n, size_t{1} << (k - 2));
}

// `block` is a class size (block_size(block) == block).
constexpr size_t class_index(size_t block) {
  if (block <= kSmallLimit) return block / kAlignment - 1;
  const int k = std::bit_width(block - 1) - 1;
  const size_t fifths_to_eighths = block >> (k - 2);  // 5, 6, 7 or 8
  return kSmallLimit / kAlignment +
         static_cast<size_t>(kClassesPerDoubling * (k - kLog2SmallLimit)) +
         (fifths_to_eighths - 5);
}

// The inverse of class_index.
constexpr size_t class_size(size_t index) {
  constexpr size_t kSmallClasses = kSmallLimit / kAlignment;
  if (index < kSmallClasses) return (index + 1) * kAlignment;
  const size_t i = index - kSmallClasses;
  const int k = kLog2SmallLimit + static_cast<int>(i / kClassesPerDoubling);
  return (5 + i % kClassesPerDoubling) << (k - 2);
}

static_assert(block_size(1) == 64 && block_size(1024) == 1024);
static_assert(block_size(1025) == 1280 && block_size(2048) == 2048);
static_assert(block_size(3211264) == 3670016);  // 784x1024 floats -> 3.5 MiB
static_assert(class_index(64) == 0 && class_index(1024) == 15);
static_assert(class_index(1280) == 16 && class_index(2048) == 19);
static_assert(class_index(2560) == 20);
static_assert(class_index(kMaxRequest) == kNumClasses - 1);
static_assert(class_size(0) == 64 && class_size(15) == 1024 && class_size(16) == 1280);
static_assert(class_size(19) == 2048 && class_size(kNumClasses - 1) == kMaxRequest);

// AddressSanitizer builds poison cached blocks, so a use after free is
// still found when caching is turned on there.
void poison(void* p, size_t n) {
#ifdef TANDEM_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}
void unpoison(void* p, size_t n) {
#ifdef TANDEM_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

bool caching_from_environment() {
  const char* env = std::getenv("TANDEM_CPU_ALLOCATOR");
  if (env == nullptr || *env == '\0') {
#ifdef TANDEM_ASAN
    return false;  // plain frees, so use-after-free is found
#else
    return true;
#endif
  }
  const std::string_view mode(env);
  TANDEM_CHECK(mode == "caching" || mode == "system",
               "TANDEM_CPU_ALLOCATOR=",
               mode,
               ": expected caching or system");
  return mode == "caching";
}

// A quarter of the machine's memory: the working set of a training step is
// freed between steps and must fit, or every step would evict and allocate
// again; more than that is memory a run that changes shapes keeps idle.
int64_t default_cache_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) * page_size / 4;
}

class CachingCpuAllocator final : public Allocator {
 public:
  CachingCpuAllocator(bool caching, int64_t cache_limit) {
    stats_.caching = caching;
    stats_.cache_limit = cache_limit;
  }

  DataPtr allocate(size_t nbytes) override;

  // The DataPtr's deleter: `block` is what allocate gave, `requested` what
  // was asked. Never throws (it runs in destructors).
  void release(void* p, size_t block, size_t requested) noexcept;

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    evict_down_to(0, /*over_limit=*/false);
  }
  void set_caching(bool enabled) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.caching = enabled;
    if (!enabled) evict_down_to(0, /*over_limit=*/false);
  }
  bool caching() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_.caching;
  }
  void set_cache_limit(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.cache_limit = bytes;
    evict_down_to(bytes, /*over_limit=*/true);
  }

 private:
  struct CachedBlock {
    void* ptr;
    uint64_t age;  // when it was cached: a list is oldest first
  };

  void* system_allocate(size_t block, size_t nbytes);
  // With mutex_ held:
  void note_in_use(size_t block, size_t requested) {
    ++stats_.allocations;
    ++stats_.blocks_in_use;
    stats_.bytes_in_use += static_cast<int64_t>(block);
    stats_.requested_bytes_in_use += static_cast<int64_t>(requested);
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }
  // Frees the least recently cached blocks until at most `bytes` stay;
  // `over_limit` counts them as evictions.
  void evict_down_to(int64_t bytes, bool over_limit);

  std::mutex mutex_;
  std::array<std::vector<CachedBlock>, kNumClasses> free_lists_;
  uint64_t next_age_ = 0;
  AllocatorStats stats_;
};

// Never destroyed: executor threads may still free tensors while the process
// runs its static destructors. At exit (the atexit handler) it stops caching
// and frees what it holds, so nothing stays allocated; later frees go
// straight to the system.
CachingCpuAllocator& caching_allocator() {
  static CachingCpuAllocator* const allocator = [] {
    auto* a = new CachingCpuAllocator(caching_from_environment(), default_cache_limit());
    std::atexit([] { caching_allocator().set_caching(false); });
    return a;
  }();
  return *allocator;
}

DataPtr CachingCpuAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, [](void*) {});
  TANDEM_CHECK(nbytes <= kMaxRequest,
               "cpu allocator: out of memory allocating ",
               nbytes,
               " bytes");
  void* p = nullptr;
  size_t block = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.caching) {
      block = block_size(nbytes);
      auto& list = free_lists_[class_index(block)];
      if (!list.empty()) {
        p = list.back().ptr;  // the most recently freed: likeliest in cache
        list.pop_back();
        --stats_.blocks_cached;
        stats_.bytes_cached -= static_cast<int64_t>(block);
        ++stats_.cache_hits;
        note_in_use(block, nbytes);
      }
    } else {
      block = round_up(nbytes, kAlignment);
    }
  }
  if (p != nullptr) {
    unpoison(p, block);
  } else {
    p = system_allocate(block, nbytes);
  }
  // Two words: std::function keeps them inline, without a heap allocation.
  return DataPtr(
      p, [block, nbytes](void* q) { caching_allocator().release(q, block, nbytes); });
}

void* CachingCpuAllocator::system_allocate(size_t block, size_t nbytes) {
  void* p = std::aligned_alloc(kAlignment, block);
  if (p == nullptr) {
    // Cached blocks of other classes may be what the system lacks.
    empty_cache();
    p = std::aligned_alloc(kAlignment, block);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  TANDEM_CHECK(p != nullptr,
               "cpu allocator: out of memory allocating ",
               nbytes,
               " bytes (",
               stats_.bytes_in_use,
               " bytes in use)");
  ++stats_.system_allocations;
  note_in_use(block, nbytes);
  return p;
}

void CachingCpuAllocator::release(void* p, size_t block, size_t requested) noexcept {
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --stats_.blocks_in_use;
    stats_.bytes_in_use -= static_cast<int64_t>(block);
    stats_.requested_bytes_in_use -= static_cast<int64_t>(requested);
    // A block from system mode is cacheable when its size is a class size.
    if (stats_.caching && block_size(block) == block &&
        static_cast<int64_t>(block) <= stats_.cache_limit) {
      evict_down_to(stats_.cache_limit - static_cast<int64_t>(block),
                    /*over_limit=*/true);
      try {
        free_lists_[class_index(block)].push_back({p, next_age_++});
        poison(p, block);
        ++stats_.blocks_cached;
        stats_.bytes_cached += static_cast<int64_t>(block);
        cached = true;
      } catch (const std::bad_alloc&) {
        // No room to grow the list: free the block instead.
      }
    }
    if (!cached) ++stats_.system_frees;
  }
  if (!cached) std::free(p);  // we are the allocator
}

// Under the lock, so frees are serialized: it only runs when the workload
// changes shapes enough to fill the cache, or on empty_cache.
void CachingCpuAllocator::evict_down_to(int64_t bytes, bool over_limit) {
  const bool emptying = bytes <= 0;
  while (stats_.bytes_cached > bytes) {
    // Each list is oldest first, so the oldest block is some list's front.
    std::vector<CachedBlock>* oldest = nullptr;
    for (auto& list : free_lists_) {
      if (!list.empty() && (oldest == nullptr || list.front().age < oldest->front().age))
        oldest = &list;
    }
    const size_t index = static_cast<size_t>(oldest - free_lists_.data());
    // When emptying, take the whole list: order no longer matters.
    const size_t count = emptying ? oldest->size() : 1;
    for (size_t i = 0; i < count; ++i) {
      const CachedBlock& b = (*oldest)[i];
      const size_t block = class_size(index);
      unpoison(b.ptr, block);
      std::free(b.ptr);
      --stats_.blocks_cached;
      stats_.bytes_cached -= static_cast<int64_t>(block);
      ++stats_.system_frees;
      if (over_limit) ++stats_.evictions;
    }
    oldest->erase(oldest->begin(), oldest->begin() + static_cast<ptrdiff_t>(count));
  }
}

}  // namespace

Allocator& cpu_allocator() { return caching_allocator(); }

AllocatorStats cpu_allocator_stats() { return caching_allocator().stats(); }

void reset_peak_cpu_allocator_stats() { caching_allocator().reset_peak(); }

void empty_cache() { caching_allocator().empty_cache(); }

void set_cpu_allocator_caching(bool enabled) { caching_allocator().set_caching(enabled); }

bool cpu_allocator_caching() { return caching_allocator().caching(); }

void set_cpu_allocator_cache_limit(int64_t bytes) {
  TANDEM_CHECK(
      bytes >= 0, "set_cpu_allocator_cache_limit: expected bytes >= 0, got ", bytes);
  caching_allocator().set_cache_limit(bytes);
}

namespace detail {

size_t cpu_block_size(size_t nbytes) {
  TANDEM_CHECK(nbytes > 0 && nbytes <= kMaxRequest,
               "cpu_block_size: expected 1 to 2^62 bytes, got ",
               nbytes);
  return block_size(nbytes);
}

}  // namespace detail
}  // namespace tandem
