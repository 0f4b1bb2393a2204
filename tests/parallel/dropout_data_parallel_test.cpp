// Dropout under DataParallel over several devices (Note [Masks keyed by
// sample] in src/parallel/data_parallel.cpp): the replicas' threads share the
// default generator, so masks drawn from it in thread order would differ
// run to run. Keyed by sample, a run repeats from its seed, and a sample's
// mask does not depend on the cut or the device count.
#include <chrono>
#include <optional>
#include <thread>
#include <tuple>

#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::cpu_devices;

// DataParallel(Dropout(0.5)) over ones: the output is the mask itself
// (0 or 2), drawn after seeding the default generator with `seed`.
Tensor masks(const nn::DataParallelOptions& options, uint64_t seed, int64_t rows = 13) {
  nn::Dropout dropout(nn::DropoutOptions(0.5));
  nn::DataParallel dp(dropout, options);
  tandem::manual_seed(seed);
  return dp(tandem::ones({rows, 40}));
}

// Dropout whose replica on `late` waits first, so that the other replicas
// reach the generator before it does (a plain member reaches the replicas).
struct LateDropoutImpl : nn::Cloneable<LateDropoutImpl> {
  LateDropoutImpl() { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x) {
    if (late && tandem::current_device() == *late) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return tandem::dropout(x, 0.5, is_training());
  }
  std::optional<tandem::Device> late;
};
TANDEM_MODULE(LateDropout);

TEST(DropoutDataParallel, ARunRepeatsFromItsSeedWhateverTheThreadOrder) {
  LateDropout dropout;
  nn::DataParallel dp(dropout, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  auto run = [&](std::optional<tandem::Device> late, uint64_t seed) {
    dropout->late = late;
    tandem::manual_seed(seed);
    return dp(tandem::ones({13, 40}));
  };
  const Tensor first = run(std::nullopt, 3);
  EXPECT_TRUE(tandem::equal(run(tandem::Device("cpu:0"), 3), first));
  EXPECT_TRUE(tandem::equal(run(tandem::Device("cpu:1"), 3), first));
  EXPECT_FALSE(tandem::equal(run(std::nullopt, 4), first));
  const double kept = (first != 0).to(tandem::kFloat64).mean().item<double>();
  EXPECT_NEAR(kept, 0.5, 0.08);
}

TEST(DropoutDataParallel, ASampleKeepsItsMaskWhateverTheCut) {
  const Tensor even = masks(nn::DataParallelOptions().device_ids(cpu_devices(2)), 9);
  EXPECT_TRUE(tandem::equal(
      masks(nn::DataParallelOptions().device_ids(cpu_devices(2)).shares({3, 1}), 9),
      even));
  EXPECT_TRUE(tandem::equal(
      masks(nn::DataParallelOptions().device_ids(cpu_devices(3)), 9), even));
  EXPECT_TRUE(tandem::equal(
      masks(nn::DataParallelOptions().device_ids(cpu_devices(4)).shares({1, 0, 2, 5}), 9),
      even));
  // Rows are samples: no two of the 13 draw the same 40-element mask.
  for (int64_t i = 1; i < even.size(0); ++i) {
    EXPECT_FALSE(tandem::equal(even[i], even[0])) << "row " << i;
  }
}

TEST(DropoutDataParallel, TheBatchMayLieAlongAnotherDim) {
  nn::Dropout dropout(nn::DropoutOptions(0.5));
  auto run = [&](int devices) {
    nn::DataParallel dp(
        dropout, nn::DataParallelOptions().device_ids(cpu_devices(devices)).dim(1));
    tandem::manual_seed(1);
    return dp(tandem::ones({3, 10, 7}));
  };
  EXPECT_TRUE(tandem::equal(run(2), run(3)));
}

// Dropout over attention weights laid out [batch * heads, L, S], sample-major
// as multi-head attention packs them, of ones: the output is the masks,
// [batch, heads * L * S].
struct HeadsDropoutImpl : nn::Cloneable<HeadsDropoutImpl> {
  static constexpr int64_t kHeads = 3;
  HeadsDropoutImpl() { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x) {
    const int64_t batch = x.size(0);
    const Tensor weights = tandem::ones({batch * kHeads, 5, 8});
    return tandem::dropout(weights, 0.5, is_training()).reshape({batch, -1});
  }
};
TANDEM_MODULE(HeadsDropout);

// Note [What a mask is keyed by] in src/ops/dropout.cpp: each run of
// `heads` rows is one sample's, so a sample keeps its heads' masks whatever
// the cut, and no two (sample, head) rows of the batch share a mask (keyed
// row by row, the second replica's rows took the first one's keys).
TEST(DropoutDataParallel, MasksOverHeadsAreKeyedBySampleToo) {
  HeadsDropout heads;
  auto run = [&](const nn::DataParallelOptions& options) {
    nn::DataParallel dp(heads, options);
    tandem::manual_seed(2);
    return dp(tandem::ones({13, 1}));
  };
  const Tensor even = run(nn::DataParallelOptions().device_ids(cpu_devices(2)));
  EXPECT_TRUE(
      tandem::equal(run(nn::DataParallelOptions().device_ids(cpu_devices(3))), even));
  EXPECT_TRUE(tandem::equal(
      run(nn::DataParallelOptions().device_ids(cpu_devices(4)).shares({1, 0, 2, 5})),
      even));
  const Tensor rows = even.reshape({13 * HeadsDropoutImpl::kHeads, -1});
  for (int64_t i = 0; i < rows.size(0); ++i) {
    for (int64_t j = i + 1; j < rows.size(0); ++j) {
      EXPECT_FALSE(tandem::equal(rows[i], rows[j])) << "rows " << i << " and " << j;
    }
  }
}

// Self-attention with dropout on its weights, batch first: the weights it
// drops are [batch * heads, L, L].
struct SelfAttentionImpl : nn::Cloneable<SelfAttentionImpl> {
  SelfAttentionImpl() { reset(); }
  void reset() override {
    attention = register_module(
        "attention",
        nn::MultiheadAttention(
            nn::MultiheadAttentionOptions(8, 2).dropout(0.5).batch_first(true)));
  }
  Tensor forward(const Tensor& x) { return std::get<0>(attention->forward(x, x, x)); }
  nn::MultiheadAttention attention{nullptr};
};
TANDEM_MODULE(SelfAttention);

TEST(DropoutDataParallel, AttentionDropoutKeepsASamplesMasksWhateverTheCut) {
  tandem::manual_seed(0);
  SelfAttention attention;
  const Tensor x = tandem::randn({9, 5, 8}, tandem::kFloat64);
  attention->to(tandem::kFloat64);
  auto run = [&](int devices) {
    nn::DataParallel dp(attention,
                        nn::DataParallelOptions().device_ids(cpu_devices(devices)));
    tandem::manual_seed(4);
    return dp(x);
  };
  const Tensor two = run(2);
  // The same masks: the outputs differ only by how the products round.
  EXPECT_TRUE(tandem::allclose(run(3), two, 1e-12, 1e-12));
  EXPECT_TRUE(tandem::allclose(run(4), two, 1e-12, 1e-12));
  nn::DataParallel dp(attention, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  tandem::manual_seed(5);
  EXPECT_FALSE(tandem::allclose(dp(x), two, 1e-3, 1e-3));  // another seed, other masks
}

TEST(DropoutDataParallel, EvalModeDropsNothing) {
  nn::Dropout dropout(nn::DropoutOptions(0.5));
  dropout->eval();
  nn::DataParallel dp(dropout, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  const Tensor x = tandem::randn({6, 5});
  EXPECT_TRUE(tandem::equal(dp(x), x));
}

}  // namespace
