// cuBLAS opened on tandem's first cuBLAS call (src/backend/cuda/
// cublas_loader.cpp, Note [Loading cuBLAS lazily]): not in the process
// before, in it after, with every function tandem calls found (the first
// call looks them all up, and throws if one is missing). Needs no GPU: the
// status strings touch no device. ctest runs each test in a process of its
// own, so "before" means since the process started.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

// Whether a file whose path contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(CublasLoader, OpensCublasOnTheFirstCall) {
  ASSERT_FALSE(mapped("libcublas")) << "cuBLAS was loaded at start-up";
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED),
               "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_STRNE(cublasGetStatusString(CUBLAS_STATUS_SUCCESS), "");
  EXPECT_TRUE(mapped("libcublas.so."));
  EXPECT_TRUE(mapped("libcublasLt.so."));
}

}  // namespace
