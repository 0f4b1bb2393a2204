// Balance::kAuto's search of the cut by the step's wall time (cut_search.h)
// behind its rate model (share_balancer.h), on machines made of formulas:
// no clock, so every run of these tests sees the same numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "tandem/parallel/cut_search.h"
#include "tandem/parallel/share_balancer.h"

namespace {

namespace parallel = tandem::parallel;

constexpr int64_t kRows = 256;

// What one step on a machine took: each device's own work, and the step.
struct StepTimes {
  std::vector<double> work_seconds;
  double step_seconds = 0;
};
using Machine = std::function<StepTimes(const std::vector<int64_t>& cut)>;

// Two devices that share two cores, as logical CPU devices share the core
// budget's tokens: device i does speed[i] rows a second on its own core,
// and once the other one has finished its part, takes the freed core as a
// helper and goes twice as fast. Each device's work time is its finish.
Machine sharing_cores(double speed0, double speed1) {
  return [=](const std::vector<int64_t>& cut) {
    const double alone[2] = {static_cast<double>(cut[0]) / speed0,
                             static_cast<double>(cut[1]) / speed1};
    const int first = alone[0] <= alone[1] ? 0 : 1;
    const int last = 1 - first;
    const double speed_last = last == 0 ? speed0 : speed1;
    const double rows_left =
        static_cast<double>(cut[static_cast<size_t>(last)]) - speed_last * alone[first];
    std::vector<double> work(2);
    work[static_cast<size_t>(first)] = alone[first];
    work[static_cast<size_t>(last)] = alone[first] + rows_left / (2 * speed_last);
    return StepTimes{work, std::max(work[0], work[1])};
  };
}

// A step time shaped as a V around device 0's share `best`, as the longer of
// two parts is, while the devices' own times put the rate model's guess at
// `guess`: the rate model is wrong in a way a search on the step time sees.
Machine misleading(double best, double guess) {
  return [=](const std::vector<int64_t>& cut) {
    const double share0 = static_cast<double>(cut[0]) / kRows;
    const double step = 0.01 * (1 + 1.4 * std::abs(share0 - best));
    return StepTimes{{static_cast<double>(cut[0]) / guess * 1e-4,
                      static_cast<double>(cut[1]) / (1 - guess) * 1e-4},
                     step};
  };
}

// Multiplies every time by 1 + u, u uniform in [-spread, spread], from a
// seeded generator (its raw output, the same on every platform).
Machine noisy(Machine machine, double spread, uint32_t seed) {
  auto generator = std::make_shared<std::mt19937>(seed);
  return [=](const std::vector<int64_t>& cut) {
    StepTimes times = machine(cut);
    const auto wobble = [&] {
      const double u = static_cast<double>((*generator)()) / 4294967296.0;
      return 1 + spread * (2 * u - 1);
    };
    for (double& w : times.work_seconds) w *= wobble();
    times.step_seconds *= wobble();
    return times;
  };
}

// Runs `steps` steps of kRows rows on `machine`; returns each step's cut.
std::vector<std::vector<int64_t>> run(parallel::ShareBalancer& balancer,
                                      const Machine& machine,
                                      int steps) {
  std::vector<std::vector<int64_t>> cuts;
  for (int step = 0; step < steps; ++step) {
    const std::vector<int64_t> cut = balancer.cut(kRows);
    const StepTimes times = machine(cut);
    balancer.observe(cut, times.work_seconds, times.step_seconds);
    cuts.push_back(cut);
  }
  return cuts;
}

// The rows the search leaves the device it takes rows from: 1/16 of its
// equal share.
constexpr int64_t kFloorRows = kRows / 2 / 16;

TEST(CutSearch, FindsTheCutTheRatesCannotSee) {
  // Device 1 at 0.45 of device 0. Whichever finishes first lends the other
  // its core, so device 1's rate looks better than it is, and the rate
  // model settles at 0.62 of the batch on device 0 (bench/balance sees
  // 0.62-0.66). Past the cut that ends both together (0.69), device 0 runs
  // with a helper: the step is shortest with device 1 at its floor.
  const Machine machine = sharing_cores(1.0, 0.45);
  parallel::ShareBalancer balancer({1, 1});
  const std::vector<std::vector<int64_t>> cuts = run(balancer, machine, 50);
  EXPECT_NEAR(static_cast<double>(cuts[8][0]) / kRows, 0.62, 0.01)
      << "the rate model's guess";
  ASSERT_TRUE(balancer.search() && balancer.search()->converged());
  EXPECT_EQ(balancer.cut(kRows), (std::vector<int64_t>{kRows - kFloorRows, kFloorRows}));
  EXPECT_LT(machine(balancer.cut(kRows)).step_seconds,
            0.8 * machine(cuts[8]).step_seconds);
}

TEST(CutSearch, FindsTheBestCutBetweenTheEnds) {
  const Machine machine = misleading(0.75, 0.64);
  parallel::ShareBalancer balancer({1, 1});
  const std::vector<std::vector<int64_t>> cuts = run(balancer, machine, 60);
  EXPECT_NEAR(static_cast<double>(cuts[6][0]) / kRows, 0.64, 0.01) << "the guess";
  ASSERT_TRUE(balancer.search() && balancer.search()->converged());
  EXPECT_NEAR(static_cast<double>(balancer.cut(kRows)[0]) / kRows,
              0.75,
              parallel::CutSearch::kFinestMove);
}

TEST(CutSearch, EqualDevicesStayEven) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    parallel::ShareBalancer balancer({1, 1});
    const std::vector<std::vector<int64_t>> cuts =
        run(balancer, noisy(sharing_cores(1.0, 1.0), 0.1, seed), 200);
    for (const std::vector<int64_t>& cut : cuts) {
      ASSERT_EQ(cut, (std::vector<int64_t>{128, 128})) << "seed " << seed;
    }
  }
}

TEST(CutSearch, NoiseDoesNotMakeItWander) {
  // +-10% on every time: a probe of four steps can lose a move it should
  // have won, so the search ends near the best cut rather than on it; but
  // it converges as quickly, and then the cut holds.
  const Machine exact = misleading(0.75, 0.64);
  double total_miss = 0;
  const int seeds = 10;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    parallel::ShareBalancer balancer({1, 1});
    const std::vector<std::vector<int64_t>> cuts =
        run(balancer, noisy(exact, 0.1, seed), 300);
    ASSERT_TRUE(balancer.search() && balancer.search()->converged()) << "seed " << seed;
    for (size_t step = 60; step < cuts.size(); ++step) {
      ASSERT_EQ(cuts[step], cuts.back()) << "seed " << seed << ", step " << step;
    }
    const double miss = std::abs(static_cast<double>(cuts.back()[0]) / kRows - 0.75);
    EXPECT_LE(miss, 1.0 / 8) << "seed " << seed;
    EXPECT_LT(exact(cuts.back()).step_seconds, exact(cuts[6]).step_seconds)
        << "seed " << seed << ": not better than the rate model's guess";
    total_miss += miss;
  }
  EXPECT_LT(total_miss / seeds, 1.0 / 32);
}

TEST(CutSearch, ASmallGainDoesNotMoveTheCut) {
  // Every cut but the guess is 1% faster, less than kGain: the guess holds.
  parallel::CutSearch search({0.64, 0.36});
  const std::vector<double> guess = search.shares();
  for (int step = 0; step < 100; ++step) {
    search.observe(search.shares() == guess ? 1e-4 : 0.99e-4);
  }
  EXPECT_TRUE(search.converged());
  EXPECT_EQ(search.shares(), guess);
}

TEST(CutSearch, AChangeOfSpeedReopensTheSearch) {
  parallel::ShareBalancer balancer({1, 1});
  run(balancer, sharing_cores(1.0, 0.45), 80);
  ASSERT_EQ(balancer.cut(kRows), (std::vector<int64_t>{kRows - kFloorRows, kFloorRows}));
  // A neighbour moves from device 1 to device 0.
  const std::vector<std::vector<int64_t>> cuts =
      run(balancer, sharing_cores(0.45, 1.0), 100);
  for (size_t step = 0; step < 4; ++step) {
    EXPECT_EQ(cuts[step], cuts.front()) << "the held cut is timed before it moves";
  }
  ASSERT_TRUE(balancer.search() && balancer.search()->converged());
  EXPECT_NEAR(
      balancer.cut(kRows)[0], kFloorRows, kRows * parallel::CutSearch::kFinestMove);
}

TEST(CutSearch, AnEqualGuessHasNothingToSearch) {
  parallel::CutSearch search({2, 2});
  EXPECT_EQ(search.shares(), (std::vector<double>{0.5, 0.5}));
  for (int step = 0; step < parallel::CutSearch::kStepsPerProbe; ++step) {
    EXPECT_FALSE(search.observe(1e-4));
  }
  EXPECT_TRUE(search.converged());
  EXPECT_FALSE(search.observe(0.9e-4));  // a wobble
  for (int step = 1; step < parallel::CutSearch::kStepsPerProbe; ++step) {
    search.observe(1.5e-4);
  }
  EXPECT_TRUE(search.drifted());
  EXPECT_EQ(search.shares(), (std::vector<double>{0.5, 0.5}));
}

TEST(CutSearch, MovesAlongTheLineFromEqualThroughTheGuess) {
  // Three devices, the third slow: the first two keep equal shares.
  parallel::CutSearch search({0.4, 0.4, 0.2});
  EXPECT_NEAR(search.shares()[2], 0.2, 1e-12);
  for (int step = 0; step < parallel::CutSearch::kStepsPerProbe; ++step)
    search.observe(1e-4);
  const std::vector<double> probe = search.shares();
  EXPECT_NEAR(probe[2], 0.2 - parallel::CutSearch::kFirstMove, 1e-12);
  EXPECT_NEAR(probe[0], probe[1], 1e-12);
  EXPECT_NEAR(probe[0] + probe[1] + probe[2], 1, 1e-12);
}

}  // namespace
