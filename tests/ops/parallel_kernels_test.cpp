// The CPU kernels that split their work across threads (elementwise maps,
// copies, fills, gathers, reductions, softmax rows, the loss gradient and
// the optimizers' fused steps) give the same bits whatever the core budget:
// each case runs at 1, 2 and 3 threads on tensors large enough to be split
// (and of sizes that are no multiple of any grain) and compares byte by
// byte. Data-parallel replicas on busy devices rely on it to match one
// device working alone.
//
// That the big cases really are split, and small ones are not, is checked
// by the threads parallel_for's pool grows to (BigOpsSplitSmallOpsDoNot);
// whether the split pays is for bench/elementwise_bench.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

// Same sizes, dtype and bytes (NaNs included).
::testing::AssertionResult bitwise_equal(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "shape " << got.sizes() << " " << got.dtype()
                                         << " vs " << want.sizes() << " " << want.dtype();
  }
  const Tensor a = got.contiguous(), b = want.contiguous();
  if (std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) != 0) {
    return ::testing::AssertionFailure()
           << "bytes differ; "
           << testing::all_close(a.to(kFloat64), b.to(kFloat64), 0, 0).message();
  }
  return ::testing::AssertionSuccess();
}

// Sets the core budget for a scope and restores it after.
class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t n) : saved_(num_threads()) { set_num_threads(n); }
  ~ThreadBudget() { set_num_threads(saved_); }
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;

 private:
  int64_t saved_;
};

// Runs `compute` under core budgets of 1, 2 and 3 threads (3 ranges cut
// where 2 do not) and expects every tensor it returns to be the same at
// each.
void expect_same_at_any_thread_count(
    const std::function<std::vector<Tensor>()>& compute) {
  std::vector<std::vector<Tensor>> runs;
  for (int64_t threads : {1, 2, 3}) {
    ThreadBudget budget(threads);
    runs.push_back(compute());
  }
  for (size_t run = 1; run < runs.size(); ++run) {
    ASSERT_EQ(runs[run].size(), runs[0].size());
    for (size_t i = 0; i < runs[0].size(); ++i) {
      EXPECT_TRUE(bitwise_equal(runs[run][i], runs[0][i]))
          << "result " << i << " at " << run + 1 << " threads";
    }
  }
}

// 300 x 1001: 300300 elements, a multiple of no power of two above 4.
constexpr int64_t kRows = 300, kCols = 1001;

TEST(ParallelKernels, ElementwiseMapsOfAnyLayout) {
  Generator gen(1);
  const Tensor x = randn({kRows, kCols}, gen), y = randn({kRows, kCols}, gen);
  const Tensor square = randn({700, 700}, gen);
  const Tensor row = randn({kCols}, gen), column = randn({kRows, 1}, gen);
  const Tensor wide = randn({kCols, kRows}, gen, kFloat64);
  expect_same_at_any_thread_count([&] {
    return std::vector<Tensor>{
        x + y,                // contiguous
        x * row,              // broadcast row
        x - column,           // broadcast column
        square + square.t(),  // transposed input
        x.t() * y.t(),        // both strided
        x.t() * wide.to(kFloat32),
        relu(x),
        tanh(y),
        exp(x.narrow(1, 3, 900)),  // rows with gaps
        gt(x, y),
        where(gt(x, 0), x, y),
        x.to(kFloat64),
        wide.t().contiguous(),
        full({kRows, kCols}, 0.5),
    };
  });
}

// Each element against a plain loop: a range that starts inside a run of
// the loop (a row of a transposed operand) must start at the right element.
TEST(ParallelKernels, SplitRangesStartAtTheRightElement) {
  Generator gen(13);
  const Tensor x = randn({kRows, kCols}, gen, kFloat64);
  Tensor sum, shifted;
  {
    ThreadBudget budget(3);
    sum = x + x.t().contiguous().t();
    shifted = x.narrow(1, 1, kCols - 1) - x.narrow(1, 0, kCols - 1);
  }
  const double* p = x.data_ptr<double>();
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      ASSERT_EQ(sum.data_ptr<double>()[i * kCols + j], p[i * kCols + j] * 2);
      if (j == 0) continue;
      ASSERT_EQ(shifted.data_ptr<double>()[i * (kCols - 1) + j - 1],
                p[i * kCols + j] - p[i * kCols + j - 1]);
    }
  }
}

TEST(ParallelKernels, ActivationBackward) {
  Generator gen(2);
  const Tensor x = randn({kRows, kCols}, gen), g = randn({kRows, kCols}, gen);
  expect_same_at_any_thread_count([&] {
    const std::vector<std::function<Tensor(const Tensor&)>> activations = {
        relu,
        sigmoid,
        [](const Tensor& t) { return tanh(t); },
        [](const Tensor& t) { return gelu(t); }};
    std::vector<Tensor> grads;
    for (const auto& f : activations) {
      Tensor xi = x.clone().requires_grad_();
      f(xi).backward(g);
      grads.push_back(xi.grad());
    }
    return grads;
  });
}

// An in-place op whose output overlaps itself (an expanded tensor) or its
// input at other positions (a transposed view, a copy between shifted
// views of one buffer) has a result only in the serial order: on any
// thread count it must be that one.
TEST(ParallelKernels, InPlaceOpsOnOverlappingMemoryKeepTheSerialOrder) {
  Generator gen(3);
  const int64_t n = 600;
  const Tensor start = randn({n, n}, gen, kFloat64);
  // a[i][j] += a[j][i] row by row: a[j][i] is already updated when j < i.
  std::vector<double> want(start.data_ptr<double>(), start.data_ptr<double>() + n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) want[i * n + j] += want[j * n + i];
  }
  const Tensor ramp = arange(0, 300000, kFloat64);
  expect_same_at_any_thread_count([&] {
    Tensor expanded = zeros({1}, kFloat64).expand({200000});
    expanded.add_(ones({200000}, kFloat64));
    EXPECT_EQ(expanded.data_ptr<double>()[0], 200000);
    Tensor a = start.clone();
    a.add_(a.t());
    EXPECT_EQ(std::memcmp(a.data_ptr(), want.data(), want.size() * sizeof(double)), 0);
    Tensor r = ramp.clone();
    r.narrow(0, 1, 299999).copy_(r.narrow(0, 0, 299999));
    EXPECT_TRUE(bitwise_equal(r.narrow(0, 1, 299999), ramp.narrow(0, 0, 299999)));
    return std::vector<Tensor>{expanded.narrow(0, 0, 1).clone(), a, r};
  });
}

TEST(ParallelKernels, GatherAndIndexSelect) {
  Generator gen(4);
  const Tensor x = randn({kRows, kCols}, gen);
  const Tensor rows = randint(0, kRows, {500}, gen),
               cols = randint(0, kCols, {kRows, 900}, gen);
  expect_same_at_any_thread_count([&] {
    return std::vector<Tensor>{
        x.index_select(0, rows), x.index_select(1, cols.select(0, 0)), x.gather(1, cols)};
  });
}

// Repeated indices add into the same rows, so scatter_add stays in order.
TEST(ParallelKernels, IndexAddWithRepeatedIndices) {
  Generator gen(5);
  const Tensor src = randn({4000, 300}, gen);
  const Tensor index = randint(0, 7, {4000}, gen);
  expect_same_at_any_thread_count([&] {
    return std::vector<Tensor>{index_add(zeros({7, 300}), 0, index, src)};
  });
}

TEST(ParallelKernels, SumsAndMeansOverAnyDims) {
  Generator gen(6);
  const Tensor x = randn({kRows, kCols}, gen);
  const Tensor cube = randn({30, 400, 27}, gen, kFloat64);
  // Many sum chunks, more than one block of them, and a tail; float64, so
  // that a changed order of additions shows in the last bits.
  const Tensor big = randn({(1 << 22) + 7}, gen, kFloat64);
  const Tensor long_rows = randn({3, 100000}, gen, kFloat64);
  const Tensor ints = randint(-1000, 1000, {kRows, kCols}, gen);
  expect_same_at_any_thread_count([&] {
    return std::vector<Tensor>{x.sum(0),
                               x.sum(1),
                               x.t().sum(0),
                               cube.sum(1),
                               cube.sum({0, 2}),
                               cube.mean(1),
                               big.sum(),
                               big.mean(),
                               big.to(kFloat32).sum(),
                               long_rows.sum(1),
                               ints.sum(0),
                               ints.sum()};
  });
}

// A row within one chunk of the sum kernel adds left to right, as it did
// before threads: an exact reference for float64.
TEST(ParallelKernels, ShortRowsSumInOrder) {
  Generator gen(7);
  const Tensor x = randn({20, 5000}, gen, kFloat64);
  Tensor sums;
  {
    ThreadBudget budget(3);
    sums = x.sum(1);
  }
  for (int64_t r = 0; r < 20; ++r) {
    double total = 0;
    for (int64_t j = 0; j < 5000; ++j) total += x.data_ptr<double>()[r * 5000 + j];
    EXPECT_EQ(sums.data_ptr<double>()[r], total) << "row " << r;
  }
}

TEST(ParallelKernels, MaxMinAndArgmaxOverDims) {
  Generator gen(8);
  Tensor x = randn({kRows, kCols}, gen);
  x.narrow(0, 100, 1).fill_(1e9);  // ties: the first index must win
  x.narrow(0, 200, 1).fill_(1e9);
  expect_same_at_any_thread_count([&] {
    auto [values0, indices0] = max(x, 0);
    auto [values1, indices1] = min(x, 1);
    const Tensor rows_of_max = argmax(x.t(), 1);
    for (int64_t j = 0; j < kCols; ++j) {
      EXPECT_EQ(indices0.data_ptr<int64_t>()[j], 100) << "column " << j;
      EXPECT_EQ(rows_of_max.data_ptr<int64_t>()[j], 100) << "column " << j;
    }
    return std::vector<Tensor>{
        values0, indices0, values1, indices1, rows_of_max, max(x), argmin(x)};
  });
}

TEST(ParallelKernels, SoftmaxForwardAndBackward) {
  Generator gen(9);
  const Tensor rows = randn({256, 1000}, gen), columns = randn({3, 5000, 7}, gen);
  const Tensor g_rows = randn({256, 1000}, gen), g_columns = randn({3, 5000, 7}, gen);
  expect_same_at_any_thread_count([&] {
    std::vector<Tensor> out;
    for (bool log : {false, true}) {
      for (auto [x, g, dim] :
           {std::tuple{rows, g_rows, 1}, std::tuple{columns, g_columns, 1}}) {
        Tensor xi = x.clone().requires_grad_();
        Tensor y = log ? log_softmax(xi, dim) : softmax(xi, dim);
        y.backward(g);
        out.push_back(y.detach());
        out.push_back(xi.grad());
      }
    }
    return out;
  });
}

TEST(ParallelKernels, CrossEntropyForwardAndBackward) {
  Generator gen(10);
  const Tensor logits = randn({300, 1000}, gen, kFloat64);
  Tensor target = randint(0, 1000, {300}, gen);
  target.narrow(0, 7, 3).fill_(-100);  // ignored rows
  const Tensor weight = rand({1000}, gen, kFloat64);
  expect_same_at_any_thread_count([&] {
    std::vector<Tensor> out;
    for (double smoothing : {0.0, 0.1}) {
      Tensor xi = logits.clone().requires_grad_();
      Tensor loss = cross_entropy(xi, target, weight, kMean, -100, smoothing);
      loss.backward();
      out.push_back(loss.detach());
      out.push_back(xi.grad());
    }
    return out;
  });
}

// A few steps of each optimizer over parameters of 700K elements (split)
// and of 10 (inline), from the same start and gradients.
template <typename Optimizer, typename Options>
std::vector<Tensor> optimizer_steps(const Options& options) {
  Generator gen(11);
  std::vector<Tensor> params = {randn({1000, 700}, gen), randn({10}, gen)};
  Optimizer opt(params, options);
  for (int step = 0; step < 3; ++step) {
    for (Tensor& p : params) p.mutable_grad() = randn(p.sizes(), gen);
    opt.step();
  }
  return params;
}

TEST(ParallelKernels, OptimizerSteps) {
  expect_same_at_any_thread_count([] {
    return optimizer_steps<optim::SGD>(
        optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-2));
  });
  expect_same_at_any_thread_count(
      [] { return optimizer_steps<optim::SGD>(optim::SGDOptions(0.1)); });
  expect_same_at_any_thread_count([] {
    return optimizer_steps<optim::Adam>(
        optim::AdamOptions(1e-2).weight_decay(1e-2).amsgrad(true));
  });
  expect_same_at_any_thread_count(
      [] { return optimizer_steps<optim::AdamW>(optim::AdamWOptions(1e-2)); });
}

// On parallel_for's helper threads intra_op_threads() is 1, so kernels
// called there run inline: nested parallelism neither deadlocks nor
// changes results.
TEST(ParallelKernels, KernelsInsideParallelFor) {
  Generator gen(12);
  const Tensor x = randn({kRows, kCols}, gen), y = randn({kRows, kCols}, gen);
  std::vector<Tensor> sums(4), sums0(4);
  {
    ThreadBudget budget(4);
    parallel_for(0, 4, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        sums[i] = x + y;
        sums0[i] = (x * y).sum(0);
      }
    });
  }
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(bitwise_equal(sums[i], x + y));
    EXPECT_TRUE(bitwise_equal(sums0[i], (x * y).sum(0)));
  }
}

// ---- which ops split ----

// Threads of this process, from /proc (Linux).
int64_t process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoll(line.substr(8));
  }
  return -1;
}

// parallel_for's pool grows to the most helpers any call has taken and
// never shrinks, so in a fresh process the thread count shows whether a
// kernel split its work: with the budget one above the helpers so far, a
// small op must add no thread and a big one exactly one (the budget is
// never exceeded). Runs in the death-test child and exits with the number
// of failed checks, each reported on stderr.
void check_which_ops_split() {
  int failures = 0;
  auto fail = [&](const std::string& why) {
    std::cerr << why << "\n";
    ++failures;
  };
  Generator gen(14);
  // First, while the pool is empty: a device busy beside another gets half
  // of a budget of 2, one thread, for an op that alone would take two.
  set_num_threads(2);
  Executor& cpu0 = Executor::of(Device("cpu:0"));
  Executor& cpu1 = Executor::of(Device("cpu:1"));
  cpu0.submit([] {}).get();
  cpu1.submit([] {}).get();
  const int64_t base = process_threads();
  {
    const Tensor x = randn({1 << 20}, gen);
    std::promise<void> started, finish;
    auto busy = cpu0.submit([&] {
      started.set_value();
      finish.get_future().wait();
    });
    started.get_future().wait();
    cpu1.submit([&] { (void)(x + 1); }).get();
    finish.set_value();
    busy.get();
  }
  if (process_threads() != base) fail("a busy device used more than its share");
  // In-place ops that read what they write elsewhere stay in order, on the
  // calling thread, however big.
  set_num_threads(2);
  {
    const int64_t n = 1 << 20;
    Tensor expanded = zeros({1}).expand({n});  // inputs from randn: made in order
    expanded.add_(randn({n}, gen));
    Tensor square = randn({1024, 1024}, gen);
    square.add_(square.t());
    Tensor ramp = randn({n}, gen);
    ramp.narrow(0, 1, n - 1).copy_(ramp.narrow(0, 0, n - 1));
  }
  if (process_threads() != base) fail("an in-place op on overlapping memory was split");
  // Then op by op: `prepare(n)` makes the inputs (under the budget so far)
  // and returns the op to run.
  int64_t helpers = 0;
  auto check = [&](const char* op,
                   const std::function<std::function<void()>(int64_t)>& prepare) {
    for (const int64_t n : {int64_t{1} << 10, int64_t{1} << 20}) {
      const std::function<void()> run = prepare(n);
      set_num_threads(helpers + 2);
      run();
      if (n > 1 << 10) ++helpers;
      const int64_t added = process_threads() - base;
      if (added != helpers) {
        fail(detail::str(
            op, " of ", n, " elements: ", added, " helper threads, expected ", helpers));
      }
    }
  };
  check("add", [&](int64_t n) { return [x = randn({n}, gen)] { (void)(x + 1); }; });
  check("copy", [&](int64_t n) { return [x = randn({n}, gen)] { (void)x.clone(); }; });
  check("cast",
        [&](int64_t n) { return [x = randn({n}, gen)] { (void)x.to(kFloat64); }; });
  check("gather", [&](int64_t n) {
    return [x = randn({n}, gen), i = randint(0, n, {n}, gen)] { (void)x.gather(0, i); };
  });
  check("sum over dim 0", [&](int64_t n) {
    return [x = randn({64, n / 64}, gen)] { (void)x.sum(0); };
  });
  check("sum over dim 1", [&](int64_t n) {
    return [x = randn({64, n / 64}, gen)] { (void)x.sum(1); };
  });
  check("sum of all",
        [&](int64_t n) { return [x = randn({n}, gen)] { (void)x.sum(); }; });
  check("max over dim 0", [&](int64_t n) {
    return [x = randn({64, n / 64}, gen)] { (void)max(x, 0); };
  });
  check("log_softmax", [&](int64_t n) {
    return [x = randn({n / 256, 256}, gen)] { (void)log_softmax(x, 1); };
  });
  check("nll_loss backward", [&](int64_t n) {
    Tensor loss = nll_loss(randn({n / 256, 256}, gen).requires_grad_(),
                           randint(0, 256, {n / 256}, gen));
    return [loss] { loss.backward(); };
  });
  // The optimizers' first step makes their state (fills); the second is
  // the one checked.
  check("sgd step", [&](int64_t n) {
    std::vector<Tensor> params = {randn({n}, gen)};
    params[0].mutable_grad() = randn({n}, gen);
    auto sgd = std::make_shared<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
    sgd->step();
    return [sgd] { sgd->step(); };
  });
  check("adam step", [&](int64_t n) {
    std::vector<Tensor> params = {randn({n}, gen)};
    params[0].mutable_grad() = randn({n}, gen);
    auto adam = std::make_shared<optim::Adam>(params, optim::AdamOptions(0.1));
    adam->step();
    return [adam] { adam->step(); };
  });
  std::_Exit(failures);
}

TEST(ParallelKernelsDeathTest, BigOpsSplitSmallOpsDoNot) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(check_which_ops_split(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tandem
