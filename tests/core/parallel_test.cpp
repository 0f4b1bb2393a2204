// The core budget and parallel_for, and GEMMs split across threads without
// changing a bit of their results.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

// Sets the core budget for one test and restores it after.
class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t n) : saved_(num_threads()) { set_num_threads(n); }
  ~ThreadBudget() { set_num_threads(saved_); }

 private:
  int64_t saved_;
};

TEST(Parallel, SetNumThreadsRejectsLessThanOne) {
  const int64_t before = num_threads();
  EXPECT_TRUE(testing::throws_with([] { set_num_threads(0); },
                                   "set_num_threads: expected at least 1 thread, got 0"));
  EXPECT_TRUE(testing::throws_with([] { set_num_threads(-3); }, "got -3"));
  EXPECT_EQ(num_threads(), before);
  {
    ThreadBudget budget(3);
    EXPECT_EQ(num_threads(), 3);
    EXPECT_EQ(intra_op_threads(), 3);
  }
  EXPECT_EQ(num_threads(), before);
}

// tests/core/cpu_budget_test.cpp checks the default under taskset and
// OMP_NUM_THREADS.
TEST(Parallel, DefaultBudgetIsEveryCoreThisProcessMayUse) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    EXPECT_EQ(num_threads(), available_cores());
  }
  EXPECT_EQ(device_count(kCPU), num_threads());
}

TEST(Parallel, ParallelForCoversEveryIndexOnce) {
  for (int64_t threads : {1, 2, 3, 4}) {
    ThreadBudget budget(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 4097}) {
      for (int64_t grain : {0, 1, 2, 3, 16, 1000, 100000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n) + 10);
        std::atomic<int64_t> ranges{0};
        parallel_for(10, 10 + n, grain, [&](int64_t begin, int64_t end) {
          ASSERT_LT(begin, end);
          ++ranges;
          for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
        });
        for (size_t i = 0; i < hits.size(); ++i) {
          ASSERT_EQ(hits[i].load(), i >= 10 ? 1 : 0)
              << "index " << i << ", n " << n << ", grain " << grain << ", " << threads
              << " threads";
        }
        EXPECT_LE(ranges.load(), threads);
        // Never a range smaller than the grain asks, but for the last.
        if (grain > 0) {
          EXPECT_LE(ranges.load(), std::max<int64_t>(1, (n + grain - 1) / grain));
        }
      }
    }
  }
}

TEST(Parallel, ParallelForUsesTheBudget) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  auto threads_used = [](int64_t budget_threads) {
    ThreadBudget budget(budget_threads);
    std::mutex mutex;
    std::set<std::thread::id> ids;
    parallel_for(0, 1000, 1, [&](int64_t, int64_t) {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    return ids;
  };
  const auto one = threads_used(1);
  EXPECT_EQ(one, std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(threads_used(2).size(), 2u);
}

TEST(Parallel, RunsInlineWhenOneRangeSuffices) {
  ThreadBudget budget(2);
  int calls = 0;
  std::thread::id ran_on;
  parallel_for(5, 9, 4, [&](int64_t begin, int64_t end) {
    ++calls;
    ran_on = std::this_thread::get_id();
    EXPECT_EQ(begin, 5);
    EXPECT_EQ(end, 9);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(Parallel, ExceptionsPropagateAfterEveryRangeEnds) {
  for (int64_t threads : {1, 2, 4}) {
    ThreadBudget budget(threads);
    for (int64_t bad : {0, 499, 999}) {
      std::atomic<int> running{0}, finished{0};
      try {
        parallel_for(0, 1000, 1, [&](int64_t begin, int64_t end) {
          ++running;
          for (int64_t i = begin; i < end; ++i) {
            if (i == bad) {
              --running;
              throw std::runtime_error("bad index " + std::to_string(i));
            }
          }
          --running;
          ++finished;
        });
        ADD_FAILURE() << "no exception for index " << bad;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "bad index " + std::to_string(bad));
      }
      EXPECT_EQ(running.load(), 0) << "a range still ran after parallel_for threw";
    }
  }
}

TEST(Parallel, NestedParallelForWorks) {
  ThreadBudget budget(2);
  std::atomic<int64_t> sum{0};
  std::vector<int64_t> inner_threads(8);
  parallel_for(0, 8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      inner_threads[static_cast<size_t>(i)] = intra_op_threads();
      parallel_for(0, 100, 1, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) sum += i * 100 + j;
      });
    }
  });
  EXPECT_EQ(sum.load(), 799 * 800 / 2);
  for (int64_t t : inner_threads) EXPECT_GE(t, 1);
}

TEST(Parallel, HelperThreadsGetOneThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  ThreadBudget budget(2);
  std::vector<int64_t> seen(2, 0);
  std::vector<char> on_caller(2, 0);
  const auto caller = std::this_thread::get_id();
  parallel_for(0, 2, 1, [&](int64_t begin, int64_t) {
    seen[static_cast<size_t>(begin)] = intra_op_threads();
    on_caller[static_cast<size_t>(begin)] = std::this_thread::get_id() == caller;
  });
  EXPECT_TRUE(on_caller[0]);
  EXPECT_FALSE(on_caller[1]);
  EXPECT_EQ(seen[1], 1);  // the pool thread adds no threads of its own
}

// Products whose blocks take different OpenBLAS kernels (small-matrix and
// gemv paths, edge tiles), float32 and float64, plain and transposed.
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const Tensor g = got.contiguous(), w = want.contiguous();
  EXPECT_EQ(std::memcmp(g.data_ptr(), w.data_ptr(), g.numel() * g.element_size()), 0)
      << what << " differs between thread budgets";
}

TEST(ParallelGemm, ResultsDoNotDependOnTheThreadCount) {
  manual_seed(7);
  struct Case {
    int64_t m, n, k;
  };
  const std::vector<Case> cases = {{256, 1024, 784},
                                   {10, 1024, 256},
                                   {256, 10, 1024},
                                   {1024, 10, 256},
                                   {64, 64, 64},
                                   {100, 100, 100},
                                   {7, 300, 40},
                                   {48, 48, 2000},
                                   {33, 1, 64},
                                   {1, 64, 333},
                                   {3, 5, 2}};
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      const Tensor a = randn({c.m, c.k}).to(dtype), b = randn({c.k, c.n}).to(dtype);
      const Tensor at = randn({c.k, c.m}).to(dtype), bt = randn({c.n, c.k}).to(dtype);
      const Tensor batch_a = randn({3, c.m, c.k}).to(dtype);
      auto products = [&] {
        return std::vector<Tensor>{a.matmul(b),
                                   at.t().matmul(bt.t()),
                                   batch_a.matmul(b),
                                   batch_a.matmul(bt.t())};
      };
      std::vector<Tensor> one;
      {
        ThreadBudget budget(1);
        one = products();
      }
      for (int64_t threads : {2, 3, 4}) {
        ThreadBudget budget(threads);
        const std::vector<Tensor> many = products();
        for (size_t i = 0; i < one.size(); ++i) {
          expect_same_bits(many[i],
                           one[i],
                           detail::str("product ",
                                       i,
                                       " of ",
                                       c.m,
                                       "x",
                                       c.n,
                                       "x",
                                       c.k,
                                       " ",
                                       dtype,
                                       " with ",
                                       threads,
                                       " threads"));
        }
      }
    }
  }
}

TEST(ParallelGemm, BlockedProductsMatchAPlainLoop) {
  manual_seed(3);
  ThreadBudget budget(2);
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {130, 90, 200}, {9, 700, 300}, {700, 9, 300}, {2, 3, 4}}) {
    const Tensor a = randn({m, k}, kFloat64), b = randn({n, k}, kFloat64);
    const Tensor got = a.matmul(b.t());
    Tensor want = zeros({m, n}, kFloat64);
    const double* pa = a.data_ptr<double>();
    const double* pb = b.data_ptr<double>();
    double* pw = want.data_ptr<double>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < k; ++p) pw[i * n + j] += pa[i * k + p] * pb[j * k + p];
      }
    }
    EXPECT_TRUE(testing::all_close(got, want, 1e-12, 1e-12)) << m << "x" << n << "x" << k;
    // A batch of them, one operand broadcast (batch stride 0).
    const Tensor batched = a.expand({3, m, k}).matmul(b.t());
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(testing::all_close(batched.select(0, i), want, 1e-12, 1e-12));
    }
  }
}

}  // namespace
}  // namespace tandem
