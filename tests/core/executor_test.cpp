// Per-device executor threads, run_on_devices, and how busy devices share
// the core budget, down to the BLAS calls their GEMMs make.
#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

// Every single-precision BLAS call of this test binary passes through here
// (the executable's definition takes precedence over libopenblas's), so the
// tests can see how many run at once and on which threads.
struct SgemmCalls {
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;

  void reset() {
    max_in_flight = 0;
    std::lock_guard<std::mutex> lock(mutex);
    threads.clear();
  }
};

SgemmCalls& sgemm_calls() {
  static SgemmCalls calls;
  return calls;
}

}  // namespace

extern "C" void cblas_sgemm(const CBLAS_ORDER order,
                            const CBLAS_TRANSPOSE trans_a,
                            const CBLAS_TRANSPOSE trans_b,
                            const blasint m,
                            const blasint n,
                            const blasint k,
                            const float alpha,
                            const float* a,
                            const blasint lda,
                            const float* b,
                            const blasint ldb,
                            const float beta,
                            float* c,
                            const blasint ldc) {
  using Fn = decltype(&cblas_sgemm);
  static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cblas_sgemm"));
  SgemmCalls& calls = sgemm_calls();
  const int now = ++calls.in_flight;
  for (int seen = calls.max_in_flight; now > seen;) {
    if (calls.max_in_flight.compare_exchange_weak(seen, now)) break;
  }
  {
    std::lock_guard<std::mutex> lock(calls.mutex);
    calls.threads.insert(std::this_thread::get_id());
  }
  real(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  --calls.in_flight;
}

namespace tandem {
namespace {

using namespace std::chrono_literals;

// Sets the core budget for one test and restores it after.
class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t n) : saved_(num_threads()) { set_num_threads(n); }
  ~ThreadBudget() { set_num_threads(saved_); }

 private:
  int64_t saved_;
};

// Returns once `count` callers have arrived, or false after 10 s, so a test
// whose tasks never run together fails instead of hanging.
bool arrive_and_wait(std::atomic<int>& arrived, int count) {
  ++arrived;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (arrived.load() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

std::vector<Device> cpus(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.emplace_back(kCPU, i);
  return out;
}

void expect_no_errors(const std::vector<std::exception_ptr>& errors) {
  for (size_t i = 0; i < errors.size(); ++i) {
    try {
      if (errors[i]) std::rethrow_exception(errors[i]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "task " << i << " threw: " << e.what();
    }
  }
}

TEST(Executor, TaskRunsOnTheDevicesOwnThreadWithTheDeviceCurrent) {
  Executor& executor = Executor::of(Device("cpu:1"));
  EXPECT_EQ(executor.device(), Device("cpu:1"));
  EXPECT_FALSE(executor.is_current_thread());
  EXPECT_FALSE(in_executor_thread());
  std::thread::id worker;
  Device seen(kCPU);
  bool own_thread = false, in_executor = false;
  executor
      .submit([&] {
        worker = std::this_thread::get_id();
        seen = current_device();
        own_thread = executor.is_current_thread();
        in_executor = in_executor_thread();
      })
      .get();
  EXPECT_NE(worker, std::this_thread::get_id());
  EXPECT_EQ(seen, Device("cpu:1"));
  EXPECT_TRUE(own_thread);
  EXPECT_TRUE(in_executor);
  EXPECT_EQ(current_device(), Device("cpu:0"));
}

TEST(Executor, RunOnDevicesWorksTheCallersOwnDeviceOnTheCaller) {
  ThreadBudget budget(2);
  const std::thread::id caller = std::this_thread::get_id();
  const auto where = [&](const std::vector<Device>& devices) {
    std::vector<std::thread::id> ids(devices.size());
    std::vector<Device> current(devices.size(), Device(kCPU));
    std::vector<int> nested(devices.size(), 0);
    expect_no_errors(run_on_devices(devices, [&](size_t i) {
      ids[i] = std::this_thread::get_id();
      current[i] = current_device();
      nested[i] = in_executor_thread() ? 1 : 0;
    }));
    for (size_t i = 0; i < devices.size(); ++i) {
      EXPECT_EQ(current[i], devices[i]);
      EXPECT_EQ(nested[i], 1) << devices[i] << " did not run as a device's worker";
    }
    return ids;
  };
  // cpu:0 is current: the caller works for it as its executor would, and
  // only cpu:1 is handed to its executor.
  const auto ids = where(cpus(2));
  EXPECT_EQ(ids[0], caller);
  EXPECT_NE(ids[1], caller);
  EXPECT_EQ(current_device(), Device("cpu:0"));
  EXPECT_FALSE(in_executor_thread());
  // With another device current the caller works for that one.
  {
    const DeviceGuard guard(Device("cpu:1"));
    const auto other = where(cpus(2));
    EXPECT_NE(other[0], caller);
    EXPECT_EQ(other[1], caller);
  }
  // A device listed twice, or a list without the current device: every
  // task on an executor.
  for (const auto& devices : {std::vector<Device>{Device("cpu:0"), Device("cpu:0")},
                              std::vector<Device>{Device("cpu:1"), Device("cpu:2")}}) {
    for (const std::thread::id& id : where(devices)) EXPECT_NE(id, caller);
  }
}

TEST(Executor, ReusesOneThreadPerDeviceAcrossCalls) {
  ThreadBudget budget(2);
  const std::vector<Device> devices = cpus(2);
  const Tensor a = randn({64, 64});
  auto threads_of_one_call = [&] {
    std::vector<std::thread::id> ids(devices.size());
    expect_no_errors(run_on_devices(devices, [&](size_t i) {
      ids[i] = std::this_thread::get_id();
      (void)a.matmul(a);
    }));
    return ids;
  };
  const auto first = threads_of_one_call();
  EXPECT_NE(first[0], first[1]);
  const auto count_threads = [] {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return std::distance(begin(tasks), end(tasks));
  };
  const auto threads_before = count_threads();
  for (int call = 0; call < 20; ++call) EXPECT_EQ(threads_of_one_call(), first);
  EXPECT_EQ(count_threads(), threads_before);
}

TEST(Executor, RunOnDevicesRunsTheTasksAtTheSameTime) {
  ThreadBudget budget(2);
  std::atomic<int> arrived{0};
  std::vector<char> met(2, 0);
  expect_no_errors(
      run_on_devices(cpus(2), [&](size_t i) { met[i] = arrive_and_wait(arrived, 2); }));
  EXPECT_TRUE(met[0] && met[1]) << "the two tasks never ran at the same time";
}

TEST(Executor, RunOnDevicesReturnsEachTasksException) {
  const auto errors = run_on_devices(cpus(4), [](size_t i) {
    if (i % 2 == 1) throw std::runtime_error("task " + std::to_string(i) + " failed");
  });
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_FALSE(errors[0]);
  EXPECT_FALSE(errors[2]);
  for (size_t i : {1u, 3u}) {
    ASSERT_TRUE(errors[i]);
    try {
      std::rethrow_exception(errors[i]);
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "task " + std::to_string(i) + " failed");
    }
  }
}

TEST(Executor, NestedRunOnDevicesRunsInlineOnTheCallingExecutor) {
  ThreadBudget budget(2);
  std::vector<std::vector<Device>> inner_devices(2);
  std::vector<char> inline_on_caller(2, 1);
  std::vector<Device> after(2, Device(kCPU));
  expect_no_errors(run_on_devices(cpus(2), [&](size_t i) {
    const auto outer = std::this_thread::get_id();
    const std::vector<Device> inner = {Device(kCPU, 2 + 2 * static_cast<int>(i)),
                                       Device(kCPU, 3 + 2 * static_cast<int>(i))};
    expect_no_errors(run_on_devices(inner, [&](size_t) {
      inner_devices[i].push_back(current_device());
      if (std::this_thread::get_id() != outer) inline_on_caller[i] = 0;
    }));
    after[i] = current_device();
  }));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(inline_on_caller[i]);
    EXPECT_EQ(inner_devices[i],
              (std::vector<Device>{Device(kCPU, 2 + 2 * static_cast<int>(i)),
                                   Device(kCPU, 3 + 2 * static_cast<int>(i))}));
    EXPECT_EQ(after[i], Device(kCPU, static_cast<int>(i)));
  }
}

TEST(Executor, NoMoreDevicesRunAtOnceThanTheBudget) {
  ThreadBudget budget(2);
  std::atomic<int> running{0}, most{0};
  expect_no_errors(run_on_devices(cpus(4), [&](size_t) {
    const int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(20ms);
    --running;
  }));
  EXPECT_GE(most.load(), 1);
  EXPECT_LE(most.load(), 2);
}

TEST(Executor, BusyDevicesShareTheBudget) {
  ThreadBudget budget(4);
  EXPECT_EQ(detail::busy_devices(), 0);
  EXPECT_EQ(intra_op_threads(), 4);
  std::atomic<int> arrived{0}, done{0};
  std::vector<int64_t> share(2), busy(2);
  expect_no_errors(run_on_devices(cpus(2), [&](size_t i) {
    ASSERT_TRUE(arrive_and_wait(arrived, 2));
    share[i] = intra_op_threads();
    busy[i] = detail::busy_devices();
    ASSERT_TRUE(arrive_and_wait(done, 2));
  }));
  EXPECT_EQ(share, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(busy, (std::vector<int64_t>{2, 2}));
  // A device's token is back before run_on_devices returns.
  EXPECT_EQ(detail::busy_devices(), 0);
  EXPECT_EQ(intra_op_threads(), 4);
}

// Counting GEMM threads needs a second core: tandem cuts products into as
// many blocks as the machine has cores, no more.
bool single_core_machine() { return std::thread::hardware_concurrency() < 2; }

TEST(ExecutorGemm, ADeviceAloneUsesEveryCoreAndOneOfTwoBusyDevicesOne) {
  if (single_core_machine()) GTEST_SKIP() << "needs 2 cores";
  ThreadBudget budget(2);
  const Tensor x = randn({256, 784}), w = randn({1024, 784});
  sgemm_calls().reset();
  (void)x.matmul(w.t());
  EXPECT_EQ(sgemm_calls().threads.size(), 2u);
  EXPECT_EQ(openblas_get_num_threads(), 1) << "OpenBLAS must not add threads of its own";

  std::atomic<int> arrived{0}, done{0};
  std::vector<std::thread::id> device_threads(2);
  sgemm_calls().reset();
  expect_no_errors(run_on_devices(cpus(2), [&](size_t i) {
    ASSERT_TRUE(arrive_and_wait(arrived, 2));  // both busy: one core each
    device_threads[i] = std::this_thread::get_id();
    (void)x.matmul(w.t());
    ASSERT_TRUE(arrive_and_wait(done, 2));
  }));
  EXPECT_EQ(sgemm_calls().threads,
            std::set<std::thread::id>(device_threads.begin(), device_threads.end()));
}

TEST(ExecutorGemm, DevicesNeverRunMoreGemmBlocksAtOnceThanTheBudget) {
  const Tensor x = randn({128, 784}), w = randn({1024, 784});
  for (int devices : {2, 3, 4}) {
    ThreadBudget budget(2);
    sgemm_calls().reset();
    expect_no_errors(run_on_devices(cpus(devices), [&](size_t) {
      for (int step = 0; step < 20; ++step) (void)x.matmul(w.t());
    }));
    EXPECT_LE(sgemm_calls().max_in_flight.load(), 2) << devices << " devices";
  }
}

}  // namespace
}  // namespace tandem
