// The caching CPU allocator: reuse by size class, alignment, no overlap,
// the cache limit, empty_cache, the system mode, statistics, and allocate
// and free from several threads at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/core/allocator.h"

#if defined(__SANITIZE_ADDRESS__)
#define TANDEM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TANDEM_TEST_ASAN 1
#endif
#endif

namespace tandem {
namespace {

// Sets the allocator's mode (and limit) for one test, starting from an empty
// cache, and restores them after. Builds with AddressSanitizer default to
// the system mode; these tests turn caching on there too.
class AllocatorScope {
 public:
  explicit AllocatorScope(bool caching, int64_t cache_limit = -1)
      : saved_(cpu_allocator_stats()) {
    empty_cache();
    set_cpu_allocator_caching(caching);
    if (cache_limit >= 0) set_cpu_allocator_cache_limit(cache_limit);
  }
  ~AllocatorScope() {
    set_cpu_allocator_cache_limit(saved_.cache_limit);
    set_cpu_allocator_caching(saved_.caching);
  }
  AllocatorScope(const AllocatorScope&) = delete;
  AllocatorScope& operator=(const AllocatorScope&) = delete;

 private:
  AllocatorStats saved_;
};

int64_t as_int(size_t n) { return static_cast<int64_t>(n); }

TEST(CpuAllocator, FreedBlockIsReusedByTheNextRequestOfItsClass) {
  AllocatorScope scope(/*caching=*/true);
  void* first = nullptr;
  {
    DataPtr p = cpu_allocator().allocate(1000);
    first = p.get();
  }
  const AllocatorStats before = cpu_allocator_stats();
  EXPECT_EQ(before.blocks_cached, 1);
  EXPECT_EQ(before.bytes_cached, 1024);

  DataPtr same_class = cpu_allocator().allocate(1010);  // also rounds to 1024
  EXPECT_EQ(same_class.get(), first);
  AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.allocations - before.allocations, 1);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1);
  EXPECT_EQ(after.system_allocations, before.system_allocations);
  EXPECT_EQ(after.blocks_cached, 0);
  EXPECT_EQ(after.bytes_cached, 0);

  DataPtr other_class = cpu_allocator().allocate(1100);  // 1280: a miss
  after = cpu_allocator_stats();
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1);
  EXPECT_EQ(after.system_allocations - before.system_allocations, 1);
}

TEST(CpuAllocator, LargeBlocksAreReusedToo) {
  AllocatorScope scope(/*caching=*/true);
  const size_t sizes[] = {size_t{4} << 20, size_t{1} << 20, size_t{784} * 1024 * 4};
  std::vector<void*> first;
  for (size_t n : sizes) first.push_back(cpu_allocator().allocate(n).get());
  const AllocatorStats before = cpu_allocator_stats();
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < std::size(sizes); ++i) {
      DataPtr p = cpu_allocator().allocate(sizes[i]);
      EXPECT_EQ(p.get(), first[i]);
    }
  }
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.cache_hits - before.cache_hits, 9);
  EXPECT_EQ(after.system_allocations, before.system_allocations);
}

TEST(CpuAllocator, SizeClasses) {
  // 64-byte steps up to 1 KiB, then four classes per power of two.
  EXPECT_EQ(detail::cpu_block_size(1), 64u);
  EXPECT_EQ(detail::cpu_block_size(64), 64u);
  EXPECT_EQ(detail::cpu_block_size(65), 128u);
  EXPECT_EQ(detail::cpu_block_size(1024), 1024u);
  EXPECT_EQ(detail::cpu_block_size(1025), 1280u);
  EXPECT_EQ(detail::cpu_block_size(1536), 1536u);
  EXPECT_EQ(detail::cpu_block_size(1537), 1792u);
  EXPECT_EQ(detail::cpu_block_size(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(detail::cpu_block_size((size_t{1} << 20) + 1), size_t{5} << 18);
  EXPECT_EQ(detail::cpu_block_size(size_t{4} << 20), size_t{4} << 20);
  EXPECT_EQ(detail::cpu_block_size(size_t{784} * 1024 * 4), size_t{7} << 19);  // 3.5 MiB
  // Every class is its own class, and the waste stays under a quarter.
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const size_t n = 1 + rng() % (size_t{1} << (1 + rng() % 34));
    const size_t block = detail::cpu_block_size(n);
    ASSERT_GE(block, n);
    ASSERT_EQ(block % 64, 0u);
    ASSERT_EQ(detail::cpu_block_size(block), block);
    if (n > 1024) {
      ASSERT_LT(block - n, n / 4) << n;
    }
  }
  EXPECT_TRUE(testing::throws_with([] { detail::cpu_block_size(0); }, "got 0"));
}

TEST(CpuAllocator, StatsCountBlocksAndRequests) {
  AllocatorScope scope(/*caching=*/true);
  const AllocatorStats before = cpu_allocator_stats();
  {
    DataPtr a = cpu_allocator().allocate(1025);
    DataPtr b = cpu_allocator().allocate(10);
    const AllocatorStats during = cpu_allocator_stats();
    EXPECT_EQ(during.blocks_in_use - before.blocks_in_use, 2);
    EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 1280 + 64);
    EXPECT_EQ(during.requested_bytes_in_use - before.requested_bytes_in_use, 1025 + 10);
    EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  }
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.blocks_in_use, before.blocks_in_use);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.requested_bytes_in_use, before.requested_bytes_in_use);
  EXPECT_EQ(after.bytes_cached, 1280 + 64);
  EXPECT_TRUE(after.caching);
}

TEST(CpuAllocator, PeakResetsToWhatIsInUse) {
  AllocatorScope scope(/*caching=*/true);
  reset_peak_cpu_allocator_stats();
  const int64_t base = cpu_allocator_stats().bytes_in_use;
  EXPECT_EQ(cpu_allocator_stats().peak_bytes_in_use, base);
  { DataPtr big = cpu_allocator().allocate(size_t{1} << 20); }
  EXPECT_EQ(cpu_allocator_stats().peak_bytes_in_use, base + (int64_t{1} << 20));
  DataPtr small = cpu_allocator().allocate(64);
  reset_peak_cpu_allocator_stats();
  EXPECT_EQ(cpu_allocator_stats().peak_bytes_in_use, base + 64);
}

TEST(CpuAllocator, ZeroBytesIsANullPointerAndNoAllocation) {
  const AllocatorStats before = cpu_allocator_stats();
  DataPtr p = cpu_allocator().allocate(0);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(cpu_allocator_stats().allocations, before.allocations);
}

TEST(CpuAllocator, BlocksAre64ByteAlignedInBothModes) {
  for (bool caching : {true, false}) {
    AllocatorScope scope(caching);
    std::vector<DataPtr> live;
    for (size_t n : {size_t{1},
                     size_t{3},
                     size_t{63},
                     size_t{64},
                     size_t{65},
                     size_t{1000},
                     size_t{4097},
                     (size_t{1} << 20) + 1,
                     size_t{4} << 20}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        live.push_back(cpu_allocator().allocate(n));
        EXPECT_EQ(reinterpret_cast<uintptr_t>(live.back().get()) % 64, 0u)
            << n << " bytes, caching " << caching;
        if (repeat == 1) live.pop_back();  // and reuse it
      }
    }
  }
}

TEST(CpuAllocator, LiveBlocksNeverOverlap) {
  AllocatorScope scope(/*caching=*/true);
  struct Live {
    DataPtr ptr;
    size_t n;
    unsigned char tag;
  };
  std::vector<Live> live;
  std::mt19937 rng(7);
  auto fill = [](const Live& l) { std::memset(l.ptr.get(), l.tag, l.n); };
  auto intact = [](const Live& l) {
    const auto* bytes = static_cast<const unsigned char*>(l.ptr.get());
    return std::all_of(bytes, bytes + l.n, [&](unsigned char b) { return b == l.tag; });
  };
  for (int i = 0; i < 2000; ++i) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t victim = rng() % live.size();
      ASSERT_TRUE(intact(live[victim]));
      live.erase(live.begin() + static_cast<ptrdiff_t>(victim));
    } else {
      // Few distinct sizes, so most requests are cache hits.
      const size_t n = size_t{1} << (rng() % 18);
      live.push_back({cpu_allocator().allocate(n), n, static_cast<unsigned char>(i)});
      fill(live.back());
    }
  }
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const Live& l : live) {
    EXPECT_TRUE(intact(l));
    const auto begin = reinterpret_cast<uintptr_t>(l.ptr.get());
    ranges.emplace_back(begin, begin + detail::cpu_block_size(l.n));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].second, ranges[i].first);
  EXPECT_GT(cpu_allocator_stats().cache_hits, 0);
}

TEST(CpuAllocator, CacheLimitEvictsTheLeastRecentlyCachedBlocks) {
  constexpr size_t kBlock = 64 << 10;
  AllocatorScope scope(/*caching=*/true, /*cache_limit=*/3 * as_int(kBlock));
  std::vector<DataPtr> blocks;
  std::vector<void*> addresses;
  for (int i = 0; i < 5; ++i) {
    blocks.push_back(cpu_allocator().allocate(kBlock));
    addresses.push_back(blocks.back().get());
  }
  const AllocatorStats before = cpu_allocator_stats();
  blocks.clear();  // frees 0, 1, 2, 3, 4 in that order
  AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.bytes_cached, 3 * as_int(kBlock));
  EXPECT_EQ(after.blocks_cached, 3);
  EXPECT_EQ(after.evictions - before.evictions, 2);
  EXPECT_EQ(after.system_frees - before.system_frees, 2);

  // Blocks 2, 3, 4 stayed; the most recently freed comes back first.
  for (int i = 4; i >= 2; --i) {
    blocks.push_back(cpu_allocator().allocate(kBlock));
    EXPECT_EQ(blocks.back().get(), addresses[static_cast<size_t>(i)]);
  }
  blocks.clear();

  // Lowering the limit evicts at once; a block over the limit is not kept.
  const int64_t evictions = cpu_allocator_stats().evictions;
  set_cpu_allocator_cache_limit(as_int(kBlock));
  after = cpu_allocator_stats();
  EXPECT_EQ(after.evictions - evictions, 2);
  EXPECT_EQ(after.bytes_cached, as_int(kBlock));
  EXPECT_EQ(after.cache_limit, as_int(kBlock));
  { DataPtr big = cpu_allocator().allocate(2 * kBlock); }
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, as_int(kBlock));

  set_cpu_allocator_cache_limit(0);
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0);
  { DataPtr p = cpu_allocator().allocate(64); }
  EXPECT_EQ(cpu_allocator_stats().blocks_cached, 0);
  EXPECT_TRUE(testing::throws_with([] { set_cpu_allocator_cache_limit(-1); },
                                   "expected bytes >= 0, got -1"));
}

TEST(CpuAllocator, EmptyCacheFreesCachedBlocksOnly) {
  AllocatorScope scope(/*caching=*/true);
  DataPtr kept = cpu_allocator().allocate(4096);
  std::memset(kept.get(), 1, 4096);
  {
    DataPtr a = cpu_allocator().allocate(100);
    DataPtr b = cpu_allocator().allocate(100);
    DataPtr c = cpu_allocator().allocate(size_t{1} << 20);
  }
  const AllocatorStats before = cpu_allocator_stats();
  EXPECT_EQ(before.blocks_cached, 3);
  empty_cache();
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.blocks_cached, 0);
  EXPECT_EQ(after.bytes_cached, 0);
  EXPECT_EQ(after.system_frees - before.system_frees, 3);
  EXPECT_EQ(after.evictions, before.evictions);
  EXPECT_EQ(after.blocks_in_use, before.blocks_in_use);
  std::memset(kept.get(), 2, 4096);  // still ours
  kept.reset();
  EXPECT_EQ(cpu_allocator_stats().blocks_cached, 1);
}

TEST(CpuAllocator, SystemModeCachesNothing) {
  AllocatorScope scope(/*caching=*/false);
  EXPECT_FALSE(cpu_allocator_caching());
  const AllocatorStats before = cpu_allocator_stats();
  for (int i = 0; i < 3; ++i) {
    DataPtr p = cpu_allocator().allocate(1000);
    // Plain 64-byte rounding, no size class.
    EXPECT_EQ(cpu_allocator_stats().bytes_in_use - before.bytes_in_use, 1024);
  }
  { DataPtr p = cpu_allocator().allocate(1030); }
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.allocations - before.allocations, 4);
  EXPECT_EQ(after.system_allocations - before.system_allocations, 4);
  EXPECT_EQ(after.system_frees - before.system_frees, 4);
  EXPECT_EQ(after.cache_hits, before.cache_hits);
  EXPECT_EQ(after.bytes_cached, 0);
  EXPECT_FALSE(after.caching);
}

TEST(CpuAllocator, BlocksMayBeFreedInTheOtherMode) {
  AllocatorScope scope(/*caching=*/true);
  DataPtr from_cache_mode = cpu_allocator().allocate(1025);
  set_cpu_allocator_caching(false);
  DataPtr class_sized = cpu_allocator().allocate(2048);  // 2048 is a class
  DataPtr odd_sized = cpu_allocator().allocate(1088);    // 1088 is not
  from_cache_mode.reset();
  EXPECT_EQ(cpu_allocator_stats().blocks_cached, 0);  // to the system
  set_cpu_allocator_caching(true);
  class_sized.reset();
  odd_sized.reset();
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.blocks_cached, 1);
  EXPECT_EQ(after.bytes_cached, 2048);
}

TEST(CpuAllocator, TooLargeARequestIsOutOfMemory) {
  EXPECT_TRUE(testing::throws_with([] { cpu_allocator().allocate(~size_t{0}); },
                                   "cpu allocator: out of memory allocating"));
}

TEST(CpuAllocator, TensorsUseIt) {
  AllocatorScope scope(/*caching=*/true);
  const AllocatorStats before = cpu_allocator_stats();
  { Tensor t = zeros({256, 1024}); }
  { Tensor t = ones({256, 1024}); }
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.allocations - before.allocations, 2);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1);
  EXPECT_EQ(after.bytes_cached, 1 << 20);
}

#ifdef TANDEM_TEST_ASAN
TEST(CpuAllocator, AddressSanitizerBuildsDefaultToTheSystem) {
  if (std::getenv("TANDEM_CPU_ALLOCATOR") != nullptr) GTEST_SKIP();
  EXPECT_FALSE(cpu_allocator_caching());
}

// Cached blocks are poisoned, so caching hides no use after free.
TEST(CpuAllocatorDeathTest, UseAfterFreeIsFoundWhileCaching) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  AllocatorScope scope(/*caching=*/true);
  EXPECT_DEATH(
      {
        char* raw = nullptr;
        {
          DataPtr p = cpu_allocator().allocate(1000);
          raw = static_cast<char*>(p.get());
        }
        raw[3] = 7;
      },
      "use-after-poison");
}
#endif

// Threads allocate, write, check and free blocks of a few sizes, and hand
// some to the next thread to free (a free on another thread than the
// allocation). ThreadSanitizer checks the locking.
TEST(CpuAllocator, ConcurrentAllocateAndFree) {
  AllocatorScope scope(/*caching=*/true);
  constexpr int kThreads = 4;
  constexpr int kIterations = 3000;
  struct Handoff {
    std::mutex mutex;
    std::vector<DataPtr> blocks;
  };
  std::vector<Handoff> handoffs(kThreads);
  const AllocatorStats before = cpu_allocator_stats();
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::atomic<int> corrupted{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<DataPtr, size_t>> mine;
      const auto tag = static_cast<unsigned char>(t + 1);
      for (int i = 0; i < kIterations; ++i) {
        const size_t n = size_t{64} << (rng() % 12);
        DataPtr p = cpu_allocator().allocate(n);
        std::memset(p.get(), tag, n);
        mine.emplace_back(std::move(p), n);
        if (mine.size() > 8) {
          auto& [old, old_n] = mine.front();
          const auto* bytes = static_cast<const unsigned char*>(old.get());
          if (!std::all_of(
                  bytes, bytes + old_n, [&](unsigned char b) { return b == tag; }))
            ++corrupted;
          if (i % 2 == 0) {
            Handoff& next = handoffs[static_cast<size_t>((t + 1) % kThreads)];
            std::lock_guard<std::mutex> lock(next.mutex);
            next.blocks.push_back(std::move(old));
          }
          mine.erase(mine.begin());
        }
        if (i % 16 == 0) {
          std::vector<DataPtr> theirs;
          {
            std::lock_guard<std::mutex> lock(handoffs[static_cast<size_t>(t)].mutex);
            theirs.swap(handoffs[static_cast<size_t>(t)].blocks);
          }
          theirs.clear();  // frees blocks another thread allocated
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  handoffs.clear();
  EXPECT_EQ(corrupted.load(), 0);
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.allocations - before.allocations, kThreads * kIterations);
  EXPECT_EQ(after.cache_hits - before.cache_hits + after.system_allocations -
                before.system_allocations,
            kThreads * kIterations);
  EXPECT_EQ(after.blocks_in_use, before.blocks_in_use);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_GT(after.cache_hits - before.cache_hits, kThreads * kIterations / 2);
}

}  // namespace
}  // namespace tandem
