// Reducing in shared memory (Note [Reducing on the host] in
// src/distributed/host_allreduce.cpp): the window every rank of this host
// maps, the chunked sum in rank order into every rank's region over many
// passes and dtypes, and DistributedDataParallel's buckets living there,
// giving MPI's gradients. Under mpiexec every rank is on this host.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/host_allreduce.h"
#include "distributed/host_window.h"
#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using detail::allreduce_on_host;
using detail::HostWindow;
using tandem::testing::all_close;
using testing::world;

// TANDEM_SHARED_MEMORY=0 for the scope's collectives (set on every rank).
class SharedMemoryOff {
 public:
  SharedMemoryOff() { setenv("TANDEM_SHARED_MEMORY", "0", 1); }
  ~SharedMemoryOff() { unsetenv("TANDEM_SHARED_MEMORY"); }
};

TEST(HostWindow, EveryRankMapsTheOthersRegions) {
  auto pg = world();
  auto window = HostWindow::create(*pg, 100, 1, /*wanted=*/true);
  if (pg->size() == 1) {
    EXPECT_EQ(window, nullptr) << "one rank has nothing to share";
    return;
  }
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(window->ranks(), pg->size());
  EXPECT_GE(window->region_bytes(), 100u);
  Tensor mine = window->tensor(0, 25, kFloat32, Device("cpu:0"));
  mine.fill_(static_cast<double>(pg->rank() + 1));
  pg->barrier().wait();
  for (int r = 0; r < pg->size(); ++r) {
    const auto* theirs = reinterpret_cast<const float*>(window->region(r));
    EXPECT_EQ(theirs[0], static_cast<float>(r + 1))
        << "rank " << pg->rank() << " sees " << r;
    EXPECT_EQ(theirs[24], static_cast<float>(r + 1));
  }
  pg->barrier().wait();  // nobody unmaps before every rank has looked
}

TEST(HostWindow, AnyRankSayingNoMeansNoWindowAnywhere) {
  auto pg = world();
  EXPECT_EQ(HostWindow::create(*pg, 100, 1, /*wanted=*/pg->rank() != pg->size() - 1),
            nullptr);
  {
    SharedMemoryOff off;
    EXPECT_EQ(HostWindow::create(*pg, 100, 1, /*wanted=*/true), nullptr);
  }
  // No segment is left in /dev/shm either way (the name goes at creation).
  pg->barrier().wait();
}

// value(rank, pass, i): different on every rank and pass, not exactly
// representable sums, so that the order of the additions shows.
template <typename T>
T value(int rank, int pass, int64_t i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>((rank + 1) * 1000003LL * (i + 1) + pass);
  } else {
    return static_cast<T>(0.1 * (rank + 1) + 1.0 / static_cast<double>(i + 3 + pass) +
                          1e-3 * rank * pass);
  }
}

// `parts`: every rank's part of the adding (empty: none given).
template <typename T>
void sums_in_rank_order(ScalarType dtype, const std::vector<int64_t>& parts = {}) {
  auto pg = world();
  // Three channels of sizes that straddle the 128 KiB chunks, the middle
  // one at an offset that is not a chunk's.
  const std::vector<int64_t> counts{1, 3 * 32768 + 17, 40000};
  const size_t element = sizeof(T);
  std::vector<size_t> offsets;
  size_t bytes = 0;
  for (int64_t n : counts) {
    offsets.push_back(bytes);
    bytes += (static_cast<size_t>(n) * element + 63) / 64 * 64;
  }
  auto window = HostWindow::create(*pg, bytes, counts.size(), true);
  if (pg->size() == 1) return;
  ASSERT_NE(window, nullptr);
  std::vector<Tensor> tensors;
  for (size_t c = 0; c < counts.size(); ++c) {
    tensors.push_back(window->tensor(offsets[c], counts[c], dtype, Device("cpu:0")));
  }
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<Work> works;
    for (size_t c = 0; c < counts.size(); ++c) {
      T* p = tensors[c].data_ptr<T>();
      for (int64_t i = 0; i < counts[c]; ++i) p[i] = value<T>(pg->rank(), pass, i);
      detail::Part part;
      for (size_t r = 0; r < parts.size(); ++r) part.total += parts[r];
      if (!parts.empty()) part.rows = parts[static_cast<size_t>(pg->rank())];
      works.push_back(
          allreduce_on_host(*pg, window, c, offsets[c], tensors[c], "test", part));
    }
    for (size_t c = 0; c < counts.size(); ++c) {
      works[c].wait();
      const T* p = tensors[c].data_ptr<T>();
      int64_t wrong = 0;
      for (int64_t i = 0; i < counts[c]; ++i) {
        T sum = value<T>(0, pass, i);
        for (int r = 1; r < pg->size(); ++r) sum += value<T>(r, pass, i);
        wrong += p[i] != sum;
      }
      EXPECT_EQ(wrong, 0) << "rank " << pg->rank() << ", pass " << pass << ", channel "
                          << c;
    }
  }
}

TEST(HostAllreduce, SumsInRankOrderIntoEveryRankOverManyPassesFloat32) {
  sums_in_rank_order<float>(kFloat32);
}

TEST(HostAllreduce, SumsInRankOrderIntoEveryRankOverManyPassesFloat64) {
  sums_in_rank_order<double>(kFloat64);
}

TEST(HostAllreduce, SumsInRankOrderIntoEveryRankOverManyPassesInt64) {
  sums_in_rank_order<int64_t>(kInt64);
}

// Uneven parts (as shares give them): a rank with less than an even part
// adds at most its part, one with none adds nothing, and every chunk is
// still added, by the others.
TEST(HostAllreduce, UnevenPartsStillAddEveryChunk) {
  const int size = world()->size();
  std::vector<int64_t> parts(static_cast<size_t>(size), 1);
  parts[0] = 5;
  if (size > 2) parts.back() = 0;
  sums_in_rank_order<float>(kFloat32, parts);
}

TEST(HostAllreduce, IsNumberedAsEveryOtherCollective) {
  auto pg = world();
  auto window = HostWindow::create(*pg, 64, 1, true);
  if (pg->size() == 1) return;
  ASSERT_NE(window, nullptr);
  Tensor t = window->tensor(0, 4, kFloat32, Device("cpu:0"));
  t.fill_(1.0);
  const uint64_t before = pg->sequence_number();
  Work work = allreduce_on_host(*pg, window, 0, 0, t, "bucket 0 of 1");
  EXPECT_EQ(work.sequence_number(), before + 1);
  EXPECT_NE(work.description().find("in shared memory"), std::string::npos)
      << work.description();
  work.wait();
  EXPECT_EQ(t.data_ptr<float>()[3], static_cast<float>(pg->size()));
}

// Gradients after a few momentum-SGD steps of a DDP, with the buckets in
// shared memory or not.
std::vector<Tensor> trained(bool shared, bool* reduced_in_shared_memory) {
  auto pg = world();
  manual_seed(7);
  nn::Sequential model(
      nn::Linear(20, 64), nn::ReLU(), nn::Linear(64, 64), nn::ReLU(), nn::Linear(64, 3));
  std::unique_ptr<SharedMemoryOff> off;
  if (!shared) off = std::make_unique<SharedMemoryOff>();
  // Small buckets: several channels, rebuilt after the first backward.
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().bucket_cap_mb(0.01));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  Generator g(300 + static_cast<uint64_t>(pg->rank()));
  for (int step = 0; step < 4; ++step) {
    sgd.zero_grad();
    ddp->forward(randn({8, 20}, g)).pow(2).mean().backward();
    sgd.step();
  }
  *reduced_in_shared_memory = ddp->stats().reduced_in_shared_memory;
  std::vector<Tensor> out;
  for (const Tensor& p : model->parameters()) {
    out.push_back(p.detach().clone());
    out.push_back(p.grad().clone());
  }
  return out;
}

TEST(HostAllreduce, DdpBucketsThereTrainAsOverMpi) {
  auto pg = world();
  bool shared = false;
  bool over_mpi_shared = true;
  const auto there = trained(true, &shared);
  const auto over_mpi = trained(false, &over_mpi_shared);
  EXPECT_EQ(shared, pg->size() > 1);
  EXPECT_FALSE(over_mpi_shared);
  ASSERT_EQ(there.size(), over_mpi.size());
  // Two ranks' sum has one order; with more, MPI's order may differ from
  // rank order in the last bits.
  const double rtol = pg->size() <= 2 ? 0 : 1e-5;
  const double atol = pg->size() <= 2 ? 0 : 1e-7;
  for (size_t i = 0; i < there.size(); ++i) {
    EXPECT_TRUE(all_close(there[i], over_mpi[i], rtol, atol))
        << "rank " << pg->rank() << ", tensor " << i;
  }
  // And every rank holds the same weights.
  for (size_t i = 0; i < there.size(); i += 2) {
    EXPECT_TRUE(all_close(there[i], testing::root_copy(pg, there[i]), 0, 0))
        << "rank " << pg->rank() << ", parameter " << i / 2;
  }
}

// A model on the logical device cpu:1 gets its gradients there, reduced in
// shared memory all the same.
TEST(HostAllreduce, BucketsTakeTheParametersDevice) {
  auto pg = world();
  manual_seed(3);
  nn::Linear fc(4, 2);
  fc->to(Device("cpu:1"));
  nn::DistributedDataParallel ddp(fc);
  ddp->forward(ones({2, 4}, TensorOptions().device(Device("cpu:1")))).sum().backward();
  EXPECT_EQ(fc->weight.grad().device(), Device("cpu:1"));
  EXPECT_EQ(ddp->stats().reduced_in_shared_memory, pg->size() > 1);
  // Every rank's input is the same: the average is one rank's gradient.
  EXPECT_TRUE(all_close(fc->bias.grad(), full({2}, 2.0), 0, 0)) << fc->bias.grad();
}

}  // namespace
}  // namespace tandem::distributed
