// The hang report's record of a group's last collectives (no MPI needed).
#include "distributed/flight_recorder.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

using tandem::distributed::detail::FlightRecorder;
using namespace std::chrono_literals;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(FlightRecorder, ReportsNothingBeforeTheFirstCollective) {
  FlightRecorder recorder;
  EXPECT_EQ(recorder.report(FlightRecorder::Clock::now()), "");
}

TEST(FlightRecorder, KeepsTheLastCollectivesOldestFirstWithHowEachEnded) {
  FlightRecorder recorder;
  const auto t0 = FlightRecorder::Clock::now();
  const uint64_t last = FlightRecorder::kDepth + 4;
  for (uint64_t seq = 1; seq <= last; ++seq) {
    recorder.called(
        seq, "allreduce #" + std::to_string(seq) + " (sum, 4 float32 elements)", t0);
    if (seq + 2 <= last) recorder.started(seq, t0 + 1ms);
    if (seq + 3 <= last) recorder.finished(seq, t0 + 3ms, /*failed=*/false);
  }
  recorder.finished(last - 2, t0 + 2500ms, /*failed=*/true);

  const auto report = lines(recorder.report(t0 + 2s));
  ASSERT_EQ(report.size(), FlightRecorder::kDepth);
  EXPECT_EQ(report.front(),
            "  allreduce #5 (sum, 4 float32 elements): completed in 3.0 ms");
  EXPECT_EQ(report[report.size() - 4],
            "  allreduce #17 (sum, 4 float32 elements): completed in 3.0 ms");
  EXPECT_EQ(report[report.size() - 3],
            "  allreduce #18 (sum, 4 float32 elements): failed after 2.5 s");
  EXPECT_EQ(report[report.size() - 2],
            "  allreduce #19 (sum, 4 float32 elements): called 2.0 s ago, not started");
  EXPECT_EQ(report.back(),
            "  allreduce #20 (sum, 4 float32 elements): called 2.0 s ago, not started");
}

TEST(FlightRecorder, ReportsAStartedCollectiveByHowLongItHasRun) {
  FlightRecorder recorder;
  const auto t0 = FlightRecorder::Clock::now();
  recorder.called(1, "broadcast #1 (root 0, 2 float64 elements)", t0);
  recorder.started(1, t0 + 400us);
  // A report on entries the ring has dropped, or never had, changes nothing.
  recorder.started(99, t0);
  recorder.finished(98, t0, false);
  EXPECT_EQ(
      recorder.report(t0 + 12400us),
      "  broadcast #1 (root 0, 2 float64 elements): started 12 ms ago, not completed\n");
}

}  // namespace
