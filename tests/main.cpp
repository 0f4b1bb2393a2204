// The GoogleTest entry point for every tandem test binary. Tests named
// *_CUDA, *_MultiCUDA or *_NCCL need hardware this build or machine may
// lack; they are filtered out here with one line saying why.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tandem/core/device_guard.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (tandem::device_count(tandem::kCUDA) == 0) {
    std::string filter = testing::GTEST_FLAG(filter);
    std::string negative = "*_CUDA*:*_MultiCUDA*:*_NCCL*";
    testing::GTEST_FLAG(filter) = filter.find('-') == std::string::npos
                                      ? filter + "-" + negative
                                      : filter + ":" + negative;
    std::cerr << "tandem tests: no CUDA device in this build or machine; "
                 "skipping *_CUDA, *_MultiCUDA and *_NCCL tests\n";
  }
  return RUN_ALL_TESTS();
}
