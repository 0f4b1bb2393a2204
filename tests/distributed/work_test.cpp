// Work handles: many collectives in flight, waits from other threads,
// calls from several threads in an agreed order (as a DDP reducer makes
// them from the autograd engine's threads), sequence numbers, results.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed {
namespace {

using testing::expect_values;
using testing::make;
using testing::world;

int64_t triangle(int size) { return int64_t{size} * (size + 1) / 2; }

TEST(Work, ManyCollectivesInFlightThenWaitedInOrder) {
  auto pg = world();
  const int r = pg->rank();
  const auto t = triangle(pg->size());
  std::vector<Tensor> tensors;
  std::vector<Work> works;
  for (int k = 0; k < 64; ++k) {
    const int64_t n = 1 + (k * 997) % 5000;
    if (k % 3 == 0) {
      tensors.push_back(
          make<double>(n, [&](int64_t i) { return double((r + 1) * (k + i)); }));
    } else if (k % 3 == 1) {
      tensors.push_back(
          make<float>(n, [&](int64_t i) { return float((r + 1) * (k + i % 50)); }));
    } else {
      tensors.push_back(make<int64_t>(n, [&](int64_t i) { return (r + 1) * (k + i); }));
    }
    works.push_back(pg->allreduce(tensors.back()));
  }
  for (int k = 0; k < 64; ++k) {
    works[static_cast<size_t>(k)].wait();
    const Tensor& x = tensors[static_cast<size_t>(k)];
    if (k % 3 == 0) {
      expect_values<double>(x, [&](int64_t i) { return double(t * (k + i)); });
    } else if (k % 3 == 1) {
      expect_values<float>(x, [&](int64_t i) { return float(t * (k + i % 50)); });
    } else {
      expect_values<int64_t>(x, [&](int64_t i) { return t * (k + i); });
    }
  }
}

TEST(Work, WaitedOnFromOtherThreads) {
  auto pg = world();
  const auto t = triangle(pg->size());
  std::vector<Tensor> tensors;
  std::vector<Work> works;
  for (int k = 0; k < 8; ++k) {
    tensors.push_back(
        make<double>(1000, [&](int64_t i) { return double(pg->rank() + 1); }));
    works.push_back(pg->allreduce(tensors.back()));
  }
  std::vector<std::thread> waiters;
  for (size_t k = 0; k < works.size(); ++k) {
    waiters.emplace_back([&works, k] { works[k].wait(); });
  }
  for (auto& th : waiters) th.join();
  for (const auto& x : tensors)
    expect_values<double>(x, [&](int64_t) { return double(t); });
}

// Threads take turns (the order every rank agrees on), the way a reducer
// launches buckets strictly in index order from whichever autograd thread
// makes a bucket ready.
TEST(Work, CallsFromSeveralThreadsInAnAgreedOrder) {
  auto pg = world();
  const auto t = triangle(pg->size());
  constexpr int kBuckets = 12;
  std::vector<Tensor> buckets;
  for (int b = 0; b < kBuckets; ++b) {
    buckets.push_back(
        make<float>(100 + b, [&](int64_t i) { return float((pg->rank() + 1) * b); }));
  }
  std::vector<Work> works(kBuckets);
  std::mutex mu;
  std::condition_variable turn_cv;
  int turn = 0;
  std::vector<std::thread> threads;
  for (int th = 0; th < 3; ++th) {
    threads.emplace_back([&, th] {
      for (int b = th; b < kBuckets; b += 3) {
        std::unique_lock<std::mutex> lock(mu);
        turn_cv.wait(lock, [&] { return turn == b; });
        works[static_cast<size_t>(b)] = pg->allreduce(buckets[static_cast<size_t>(b)]);
        ++turn;
        turn_cv.notify_all();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int b = 0; b < kBuckets; ++b) {
    works[static_cast<size_t>(b)].wait();
    expect_values<float>(buckets[static_cast<size_t>(b)],
                         [&](int64_t) { return float(t * b); });
  }
}

TEST(Work, SequenceNumbersAreConsecutiveAndEqualOnEveryRank) {
  auto pg = world();
  auto x = tandem::zeros({4}, kFloat32);
  auto first = pg->allreduce(x);
  auto second = pg->broadcast(x);
  EXPECT_EQ(second.sequence_number(), first.sequence_number() + 1);
  EXPECT_EQ(pg->sequence_number(), second.sequence_number());
  auto seq = tandem::full({1}, double(first.sequence_number()), kInt64);
  auto lo = seq.clone();
  auto hi = seq.clone();
  auto w1 = pg->allreduce(lo, AllreduceOptions().reduce_op(ReduceOp::MIN));
  auto w2 = pg->allreduce(hi, AllreduceOptions().reduce_op(ReduceOp::MAX));
  for (auto* w : {&first, &second, &w1, &w2}) w->wait();
  EXPECT_EQ(lo.item<int64_t>(), hi.item<int64_t>());
}

TEST(Work, ReportsCompletionResultAndDescription) {
  auto pg = world();
  auto x = tandem::ones({2, 2}, kFloat32);
  const auto version = x._version();
  auto work = pg->allreduce(x, AllreduceOptions().timeout(std::chrono::seconds(10)));
  EXPECT_GT(x._version(), version);  // the tensor is written in place
  work.wait(std::chrono::seconds(10));
  EXPECT_TRUE(work.is_completed());
  EXPECT_TRUE(work.is_success());
  EXPECT_EQ(work.exception(), nullptr);
  ASSERT_EQ(work.result().size(), 1u);
  EXPECT_TRUE(work.result()[0].is_same(x));
  EXPECT_EQ(work.description(),
            "allreduce #" + std::to_string(work.sequence_number()) +
                " (sum, 4 float32 elements)");
  EXPECT_EQ(pg->error(), nullptr);
  // A copied handle shares the state; waiting twice is fine.
  Work copy = work;
  copy.wait();
  EXPECT_TRUE(copy.is_completed());
}

TEST(Work, DescriptionsOfEveryKind) {
  auto pg = world();
  const int w = pg->size();
  auto x = tandem::zeros({3}, kFloat64);
  auto out = tandem::zeros({3 * w}, kFloat64);
  const auto next = pg->sequence_number() + 1;
  auto a = pg->broadcast(x, BroadcastOptions().root_rank(w - 1));
  auto b = pg->allgather_into_tensor(out, x);
  auto c =
      pg->reduce_scatter_tensor(x, out, ReduceScatterOptions().reduce_op(ReduceOp::MAX));
  auto d = pg->allreduce(tandem::zeros({1}, kInt64));
  for (auto* work : {&a, &b, &c, &d}) work->wait();
  const auto n = [&](uint64_t k) { return std::to_string(next + k); };
  EXPECT_EQ(
      a.description(),
      "broadcast #" + n(0) + " (root " + std::to_string(w - 1) + ", 3 float64 elements)");
  EXPECT_EQ(b.description(), "allgather #" + n(1) + " (3 float64 elements per rank)");
  EXPECT_EQ(c.description(),
            "reduce_scatter #" + n(2) + " (max, 3 float64 elements per rank)");
  EXPECT_EQ(d.description(), "allreduce #" + n(3) + " (sum, 1 int64 element)");
}

TEST(Work, GroupTimeoutIsConfigurable) {
  auto pg = world();
  const auto before = pg->timeout();
  EXPECT_EQ(before, std::chrono::seconds(20));  // set by mpi_test_main.cpp
  pg->set_timeout(std::chrono::seconds(30));
  EXPECT_EQ(pg->timeout(), std::chrono::seconds(30));
  pg->set_timeout(before);
  EXPECT_EQ(get_rank(), pg->rank());
  EXPECT_EQ(get_world_size(), pg->size());
  EXPECT_GE(get_local_rank(), 0);
  EXPECT_LT(get_local_rank(), get_local_world_size());
  EXPECT_TRUE(is_initialized());
  EXPECT_EQ(pg->backend_name(), "mpi");
}

}  // namespace
}  // namespace tandem::distributed
