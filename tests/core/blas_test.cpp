// tandem::blas::info(): the CPU products run on the newest OpenBLAS kernels
// this CPU supports, even where OpenBLAS does not know the CPU's model
// (Note [OpenBLAS kernels] in src/backend/cpu/blas_setup.cpp). That a user's
// OPENBLAS_CORETYPE wins is checked by tests/CMakeLists.txt's
// tool_devices_keeps_openblas_coretype. Both assume Debian's OpenBLAS, which
// chooses its kernels at run time (DYNAMIC_ARCH).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tandem/core/blas.h"

namespace {

bool cpu_runs_avx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool cpu_runs_avx2() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// OpenBLAS's x86 kernel sets for CPUs without AVX2 (what an unknown CPU gets).
const std::set<std::string> kPreAvx2Kernels = {
    "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge"};

// An OpenBLAS that picks its kernels at run time (Debian's).
bool chooses_kernels_at_run_time(const tandem::blas::Info& info) {
  return info.library.find("DYNAMIC_ARCH") != std::string::npos;
}

TEST(Blas, NamesTheLibraryAndItsKernels) {
  const tandem::blas::Info info = tandem::blas::info();
  EXPECT_NE(info.library.find("OpenBLAS"), std::string::npos) << info.library;
  EXPECT_FALSE(info.kernels.empty());
  EXPECT_FALSE(info.detected.empty());
  // "Unknown" would mean OpenBLAS was asked before it had chosen.
  EXPECT_NE(info.kernels, "Unknown");
  EXPECT_NE(info.detected, "Unknown");
}

TEST(Blas, ProductsUseTheNewestKernelsTheCpuRuns) {
  const tandem::blas::Info info = tandem::blas::info();
  if (info.chosen_by_environment) GTEST_SKIP() << "OPENBLAS_CORETYPE is set";
  if (!chooses_kernels_at_run_time(info)) GTEST_SKIP() << info.library;
  if (cpu_runs_avx2()) {
    EXPECT_EQ(kPreAvx2Kernels.count(info.kernels), 0u)
        << info.kernels << " kernels on a CPU with AVX2 (OpenBLAS chose " << info.detected
        << ")";
  }
  const bool openblas_fell_back =
      kPreAvx2Kernels.count(info.detected) > 0 || info.detected == "Haswell";
  if (cpu_runs_avx512() && openblas_fell_back) {
    EXPECT_TRUE(info.kernels == "SkylakeX" || info.kernels == "Cooperlake")
        << info.kernels;
  }
}

}  // namespace
