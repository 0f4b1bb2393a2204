// The gradient reduction shared out over the devices' executor threads
// (parallel_for_on_devices): bit for bit the left-to-right sum
// ((g0 + g1) + g2) + ..., whoever adds which block, for tensors smaller and
// larger than a block, odd sizes, several dtypes and 2-3 devices; through
// reduce_add_coalesced and through backward (BroadcastBackward); and never
// stuck behind a device that is busy with something else.
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
namespace parallel = tandem::parallel;
using tandem::Device;
using tandem::Executor;
using tandem::ScalarType;
using tandem::Tensor;
using tandem::testing::cpu_devices;
using namespace std::chrono_literals;

// Comm's block is 2^15 elements: sizes on both sides of it and of its
// multiples, and odd ones.
const std::vector<int64_t> kSizes = {1, 7, 32767, 32768, 32769, 3 * 32768 + 5, 100003};

class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t n) : saved_(tandem::num_threads()) {
    tandem::set_num_threads(n);
  }
  ~ThreadBudget() { tandem::set_num_threads(saved_); }

 private:
  int64_t saved_;
};

::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "got " << got.sizes() << " " << got.dtype() << ", want " << want.sizes()
           << " " << want.dtype();
  }
  const Tensor a = got.to("cpu:0").contiguous(), b = want.to("cpu:0").contiguous();
  const auto* pa = static_cast<const unsigned char*>(a.data_ptr());
  const auto* pb = static_cast<const unsigned char*>(b.data_ptr());
  const size_t size = tandem::element_size(a.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::memcmp(pa + i * size, pb + i * size, size) != 0) {
      return ::testing::AssertionFailure()
             << "element " << i << " of " << a.numel() << " differs in its bits";
    }
  }
  return ::testing::AssertionSuccess();
}

// One tensor per size on each of `devices`.
std::vector<std::vector<Tensor>> gradients_on(const std::vector<Device>& devices,
                                              ScalarType dtype) {
  std::vector<std::vector<Tensor>> grads(devices.size());
  for (size_t j = 0; j < devices.size(); ++j) {
    for (int64_t n : kSizes) grads[j].push_back(tandem::randn({n}, dtype).to(devices[j]));
  }
  return grads;
}

// ((g0 + g1) + g2) + ... on cpu:0, one op at a time.
Tensor sequential_sum(const std::vector<std::vector<Tensor>>& grads, size_t i) {
  Tensor sum = grads[0][i].to("cpu:0");
  for (size_t j = 1; j < grads.size(); ++j) sum = sum + grads[j][i].to("cpu:0");
  return sum;
}

TEST(SplitReduction, ReduceAddCoalescedIsTheSequentialSumBitForBit) {
  for (int n : {2, 3}) {
    for (int64_t budget : {1, 2, 3}) {
      ThreadBudget threads(budget);
      for (ScalarType dtype : {tandem::kFloat32, tandem::kFloat64}) {
        const auto grads = gradients_on(cpu_devices(n), dtype);
        const auto from_main = parallel::reduce_add_coalesced(grads, Device("cpu:0"));
        // On cpu:0's own thread, as BroadcastBackward runs it: that thread
        // takes blocks too, and the other devices' threads help.
        std::vector<Tensor> from_executor;
        Executor::of(Device("cpu:0"))
            .submit([&] {
              from_executor = parallel::reduce_add_coalesced(grads, Device("cpu:0"));
            })
            .get();
        for (size_t i = 0; i < kSizes.size(); ++i) {
          const Tensor want = sequential_sum(grads, i);
          EXPECT_TRUE(same_bits(from_main[i], want))
              << kSizes[i] << " elements, " << n << " devices, budget " << budget;
          EXPECT_TRUE(same_bits(from_executor[i], want))
              << kSizes[i] << " elements, " << n << " devices, budget " << budget;
          EXPECT_EQ(from_executor[i].device(), Device("cpu:0"));
        }
      }
    }
  }
}

TEST(SplitReduction, BackwardSumsReplicaGradientsBitForBit) {
  for (int n : {2, 3}) {
    ThreadBudget threads(n);
    // 5000 x 7 = 35000 weights: two blocks, the second short; 5000 biases:
    // less than one block.
    nn::Sequential net(nn::Linear(7, 5000), nn::ReLU(), nn::Linear(5000, 3));
    const std::vector<Device> devices = cpu_devices(n);
    auto replicas = parallel::replicate(net, devices);
    // What each replica's backward hands to the reduction, copied before
    // the reduction adds into replica 0's.
    std::mutex mutex;
    std::vector<std::vector<Tensor>> per_replica(n);
    for (int j = 0; j < n; ++j) {
      for (const Tensor& p : replicas[j]->parameters()) {
        per_replica[j].emplace_back();
        const size_t slot = per_replica[j].size() - 1;
        p.register_hook([&mutex, &per_replica, j, slot](const Tensor& g) {
          std::lock_guard<std::mutex> lock(mutex);
          per_replica[j][slot] = g.clone();
          return Tensor();
        });
      }
    }
    const auto inputs = parallel::scatter(tandem::randn({10 * n, 7}), devices);
    const std::vector<Tensor> outputs =
        parallel::parallel_apply(replicas, inputs, devices);
    const Tensor y = parallel::gather(outputs, Device("cpu:0"));
    (y * y).sum().backward();
    const auto params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      ASSERT_TRUE(params[i].grad().defined());
      EXPECT_TRUE(same_bits(params[i].grad(), sequential_sum(per_replica, i)))
          << "parameter " << i << ", " << n << " devices";
    }
  }
}

TEST(SplitReduction, EveryItemRunsOnceOnNoMoreThreadsThanTheBudget) {
  for (int64_t budget : {1, 2, 3}) {
    ThreadBudget threads(budget);
    for (int64_t items : {1, 2, 5, 64}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(items));
      std::mutex mutex;
      std::set<std::thread::id> ids;
      std::atomic<int> running{0}, most{0};
      auto count = [&](int64_t begin, int64_t end) {
        const int now = ++running;
        for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        {
          std::lock_guard<std::mutex> lock(mutex);
          ids.insert(std::this_thread::get_id());
        }
        for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
        std::this_thread::sleep_for(1ms);
        --running;
      };
      Executor::of(Device("cpu:0"))
          .submit(
              [&] { tandem::parallel_for_on_devices(0, items, cpu_devices(3), count); })
          .get();
      for (int64_t i = 0; i < items; ++i) {
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "item " << i;
      }
      EXPECT_LE(most.load(), budget) << items << " items";
      EXPECT_LE(static_cast<int64_t>(ids.size()), budget) << items << " items";
    }
  }
}

TEST(SplitReduction, TheOtherDevicesThreadsTakePart) {
  ThreadBudget threads(2);
  // Two items that each wait for the other to start: they finish only if
  // cpu:1's thread takes one while cpu:0's (the caller's) holds the other.
  std::atomic<int> started{0};
  std::vector<std::thread::id> ran_on(2);
  std::vector<char> met(2, 0);
  Executor::of(Device("cpu:0"))
      .submit([&] {
        tandem::parallel_for_on_devices(
            0, 2, cpu_devices(2), [&](int64_t begin, int64_t end) {
              for (int64_t i = begin; i < end; ++i) {
                ran_on[i] = std::this_thread::get_id();
                ++started;
                const auto deadline = std::chrono::steady_clock::now() + 10s;
                while (started < 2 && std::chrono::steady_clock::now() < deadline) {
                  std::this_thread::yield();
                }
                met[i] = started == 2;
              }
            });
      })
      .get();
  EXPECT_TRUE(met[0] && met[1]) << "the items never ran at the same time";
  EXPECT_NE(ran_on[0], ran_on[1]);
}

TEST(SplitReduction, ABusyHelperDoesNotHoldUpTheCaller) {
  ThreadBudget threads(2);
  // cpu:1 is busy until the reduction on cpu:0 is over (or 10 s pass, so a
  // wrong implementation fails instead of hanging).
  std::atomic<bool> reduced{false};
  auto busy = Executor::of(Device("cpu:1")).submit([&] {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!reduced && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
  });
  const auto grads = gradients_on(cpu_devices(2), tandem::kFloat32);
  std::vector<Tensor> sums;
  const auto start = std::chrono::steady_clock::now();
  Executor::of(Device("cpu:0"))
      .submit([&] { sums = parallel::reduce_add_coalesced(grads, Device("cpu:0")); })
      .get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  reduced = true;
  busy.get();
  for (size_t i = 0; i < kSizes.size(); ++i) {
    EXPECT_TRUE(same_bits(sums[i], sequential_sum(grads, i))) << kSizes[i];
  }
}

TEST(SplitReduction, TheFirstExceptionPropagatesAfterEveryItemRan) {
  ThreadBudget threads(2);
  for (bool from_executor : {false, true}) {
    std::atomic<int> ran{0};
    // Caught where it is thrown: an exception that crossed threads through
    // a future would be released on the executor's thread, unordered with
    // this one for ThreadSanitizer (see run_on_devices).
    std::string message;
    auto call = [&] {
      try {
        tandem::parallel_for_on_devices(
            0, 40, cpu_devices(2), [&](int64_t begin, int64_t end) {
              for (int64_t i = begin; i < end; ++i) {
                ++ran;
                if (i == 17) throw std::runtime_error("item 17 failed");
              }
            });
      } catch (const std::runtime_error& e) {
        message = e.what();
      }
    };
    if (from_executor) {
      Executor::of(Device("cpu:0")).submit(call).get();
    } else {
      call();
    }
    EXPECT_EQ(message, "item 17 failed");
    EXPECT_EQ(ran.load(), 40);  // one item per claim: only 17 failed
  }
}

}  // namespace
