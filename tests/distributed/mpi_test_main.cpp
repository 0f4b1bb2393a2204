// The GoogleTest entry point of the distributed tests. Every rank runs the
// same binary under mpiexec (or alone, as a group of one) and checks its
// own results; a failure on any rank makes that rank, and so mpiexec, exit
// non-zero. Rank 0 prints GoogleTest's usual report; the other ranks print
// only their failures, each line prefixed with "[rank r]".
//
// The group's timeout is short (20 s) so that a test that breaks the
// same-order rule fails the run instead of hanging it.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "tandem/distributed/process_group.h"

namespace {

class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cerr << "[rank " << rank_ << "] "
              << (result.file_name() ? result.file_name() : "?") << ":"
              << result.line_number() << ": " << result.summary() << std::endl;
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed()) {
      std::cerr << "[rank " << rank_ << "] FAILED " << info.test_suite_name() << "."
                << info.name() << std::endl;
    }
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  namespace dist = tandem::distributed;
  auto pg = dist::init_process_group(
      dist::ProcessGroupOptions().timeout(std::chrono::seconds(20)));
  if (pg->rank() != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(pg->rank()));  // GoogleTest takes ownership
  }
  return RUN_ALL_TESTS();
}
