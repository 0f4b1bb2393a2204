// The default core budget: the cores this process may run on (its affinity
// mask: taskset, a cgroup cpuset), or OMP_NUM_THREADS when it is set, as
// LibTorch reads it. Each case runs this test binary again as a child, with
// the mask or the variable, and reads what the child reports.
#include <cblas.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tandem/tandem.h"

namespace tandem {
namespace {

constexpr const char* kReportVariable = "TANDEM_TEST_REPORT_BUDGET";

// Run by the child only: one line with what the budget looks like after a
// matrix product (which sets up OpenBLAS).
TEST(CpuBudgetChild, Report) {
  if (std::getenv(kReportVariable) == nullptr) GTEST_SKIP() << "run by the tests below";
  Tensor a = ones({64, 64});
  const double product = a.mm(a).sum().item<double>();
  std::printf("budget=%lld get=%lld intra=%lld cpu_devices=%lld blas=%d product=%g\n",
              static_cast<long long>(num_threads()),
              static_cast<long long>(get_num_threads()),
              static_cast<long long>(intra_op_threads()),
              static_cast<long long>(device_count(kCPU)),
              openblas_get_num_threads(),
              product);
}

// Runs this binary's Report test with `prefix` (env, taskset) before it and
// returns its output.
std::string child_report(const std::string& prefix) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "env -u OMP_NUM_THREADS " + std::string(kReportVariable) +
                              "=1 " + prefix + " '" + self +
                              "' --gtest_filter=CpuBudgetChild.Report 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
  const int status = pclose(pipe);
  if (status != 0) out += "\nchild exit status " + std::to_string(status);
  return out;
}

::testing::AssertionResult reports(const std::string& out, const std::string& line) {
  if (out.find(line) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected \"" << line << "\" in:\n" << out;
}

// Every figure the child reports for a budget of n.
std::string budget_line(int64_t n) {
  const std::string s = std::to_string(n);
  return "budget=" + s + " get=" + s + " intra=" + s + " cpu_devices=" + s +
         " blas=1 product=262144";
}

int64_t allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

TEST(CpuBudget, AvailableCoresCountsTheAffinityMask) {
  EXPECT_EQ(available_cores(), allowed_cores());
}

bool have_taskset() { return std::system("taskset -c 0 true >/dev/null 2>&1") == 0; }

TEST(CpuBudget, DefaultIsTheCoresThisProcessMayRunOn) {
  EXPECT_TRUE(reports(child_report(""), budget_line(allowed_cores())));
}

TEST(CpuBudget, TasksetLimitsTheDefault) {
  if (!have_taskset()) GTEST_SKIP() << "no taskset";
  EXPECT_TRUE(reports(child_report("taskset -c 0"), budget_line(1)));
}

TEST(CpuBudget, OmpNumThreadsSetsTheDefault) {
  EXPECT_TRUE(reports(child_report("OMP_NUM_THREADS=1"), budget_line(1)));
  // As in LibTorch: the variable wins over the affinity mask, and the first
  // level of an OpenMP list counts.
  EXPECT_TRUE(reports(child_report("OMP_NUM_THREADS=3"), budget_line(3)));
  if (have_taskset()) {
    EXPECT_TRUE(reports(child_report("OMP_NUM_THREADS=2 taskset -c 0"), budget_line(2)));
  }
  EXPECT_TRUE(reports(child_report("OMP_NUM_THREADS=2,1"), budget_line(2)));
}

TEST(CpuBudget, InvalidOmpNumThreadsWarnsAndIsIgnored) {
  for (const char* value : {"abc", "0", "-2", ""}) {
    const std::string out = child_report(std::string("OMP_NUM_THREADS='") + value + "'");
    EXPECT_TRUE(reports(out, budget_line(allowed_cores()))) << value;
    if (*value != '\0') {
      EXPECT_TRUE(
          reports(out, "tandem warning: ignoring OMP_NUM_THREADS=" + std::string(value)));
    }
  }
}

TEST(CpuBudget, SetNumThreadsWinsOverTheEnvironment) {
  const int64_t saved = get_num_threads();
  set_num_threads(2);
  EXPECT_EQ(get_num_threads(), 2);
  EXPECT_EQ(num_threads(), 2);
  set_num_threads(saved);
}

}  // namespace
}  // namespace tandem
