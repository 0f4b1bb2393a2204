// Device parsing, comparison, hashing and printing; dtype sizes, names and
// promotion.
#include <sstream>
#include <unordered_set>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(Device, ParsesTypeAndIndex) {
  Device cpu("cpu");
  EXPECT_TRUE(cpu.is_cpu());
  EXPECT_FALSE(cpu.is_cuda());
  EXPECT_EQ(cpu.index(), 0);
  Device cpu3("cpu:3");
  EXPECT_EQ(cpu3.type(), kCPU);
  EXPECT_EQ(cpu3.index(), 3);
  Device cuda1(std::string("cuda:1"));
  EXPECT_TRUE(cuda1.is_cuda());
  EXPECT_EQ(cuda1.index(), 1);
  EXPECT_EQ(Device("cuda").index(), 0);
  EXPECT_EQ(Device(kCUDA, -1).index(), 0);
}

TEST(Device, RejectsMalformedStrings) {
  for (const char* bad :
       {"gpu", "CPU", "cpu:", "cpu:-1", "cpu:1x", "cuda:a", " cpu", "cpu:1:2", ""}) {
    EXPECT_TRUE(throws_with([&] { Device d(bad); }, "device:")) << bad;
  }
  EXPECT_TRUE(throws_with([] { Device d("tpu:0"); }, "'tpu:0'"));
  EXPECT_TRUE(throws_with([] { Device d(kCPU, -2); }, "non-negative"));
}

TEST(Device, EqualityHashAndPrinting) {
  EXPECT_EQ(Device("cpu"), Device("cpu:0"));
  EXPECT_EQ(Device(kCPU), Device("cpu"));
  EXPECT_NE(Device("cpu:0"), Device("cpu:1"));
  EXPECT_NE(Device("cpu:1"), Device("cuda:1"));
  EXPECT_LT(Device("cpu:1"), Device("cpu:2"));
  EXPECT_LT(Device("cpu:7"), Device("cuda:0"));
  std::unordered_set<Device> set{
      Device("cpu:0"), Device("cpu"), Device("cpu:1"), Device("cuda:0")};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_NE(std::hash<Device>()(Device("cpu:0")), std::hash<Device>()(Device("cuda:0")));
  std::ostringstream out;
  out << Device("cuda:2") << ' ' << Device("cpu") << ' ' << kCUDA;
  EXPECT_EQ(out.str(), "cuda:2 cpu:0 cuda");
  EXPECT_EQ(Device("cpu:5").str(), "cpu:5");
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(element_size(kUInt8), 1u);
  EXPECT_EQ(element_size(kInt64), 8u);
  EXPECT_EQ(element_size(kFloat32), 4u);
  EXPECT_EQ(element_size(kFloat64), 8u);
  EXPECT_EQ(dtype_name(kBool), "bool");
  EXPECT_EQ(dtype_name(kUInt8), "uint8");
  EXPECT_EQ(dtype_name(kInt64), "int64");
  EXPECT_EQ(dtype_name(kFloat32), "float32");
  EXPECT_EQ(dtype_name(kFloat64), "float64");
  std::ostringstream out;
  out << kDouble << ' ' << kLong;
  EXPECT_EQ(out.str(), "float64 int64");
  EXPECT_TRUE(is_floating_point(kFloat32));
  EXPECT_FALSE(is_floating_point(kInt64));
  EXPECT_TRUE(is_integral(kBool));
  EXPECT_FALSE(is_integral(kBool, /*include_bool=*/false));
  EXPECT_TRUE(is_integral(kUInt8, false));
  EXPECT_EQ(dtype_of_v<double>, kFloat64);
  EXPECT_EQ(dtype_of_v<uint8_t>, kUInt8);
}

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(kInt64, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kUInt8, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
  EXPECT_EQ(promote_types(kFloat64, kBool), kFloat64);
  for (ScalarType a : {kBool, kUInt8, kInt64, kFloat32, kFloat64}) {
    for (ScalarType b : {kBool, kUInt8, kInt64, kFloat32, kFloat64}) {
      EXPECT_EQ(promote_types(a, b), promote_types(b, a));
    }
  }
}

}  // namespace
}  // namespace tandem

// Outside namespace tandem, as user code is: the operator must be found by
// argument-dependent lookup.
TEST(IntList, PrintsLikePyTorchFromAnyNamespace) {
  std::ostringstream out;
  out << tandem::IntList{15, 5} << tandem::IntList{} << tandem::zeros({2, 0}).sizes();
  EXPECT_EQ(out.str(), "[15, 5][][2, 0]");
}
