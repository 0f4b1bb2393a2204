// Tensor handles: item/data_ptr, to(dtype/device), clone, contiguous, copy_,
// version counters, set_data, and the mixed-device error.
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

TEST(Tensor, ItemConvertsAndRequiresOneElement) {
  EXPECT_EQ(tensor({2.75}).item<double>(), 2.75);
  EXPECT_EQ(tensor({2.75f}).item<int64_t>(), 2);
  EXPECT_EQ(tensor({int64_t{-3}}).item<float>(), -3.0f);
  EXPECT_EQ(tensor({true}).item<bool>(), true);
  EXPECT_EQ(scalar_tensor(4, kUInt8).item(), 4.0);
  EXPECT_TRUE(throws_with([] { zeros({2}).item<float>(); }, "[2]"));
  EXPECT_TRUE(throws_with([] { zeros({0}).item<float>(); }, "one element"));
  EXPECT_TRUE(throws_with([] { Tensor().item<float>(); }, "undefined"));
}

TEST(Tensor, DataPtrChecksTheDtype) {
  Tensor t = tensor({1.0f, 2.0f});
  EXPECT_EQ(t.data_ptr<float>()[1], 2.0f);
  EXPECT_EQ(t.data_ptr(), static_cast<void*>(t.data_ptr<float>()));
  EXPECT_TRUE(throws_with([&] { t.data_ptr<double>(); }, "float32"));
  EXPECT_TRUE(throws_with([&] { t.data_ptr<int64_t>(); }, "int64"));
}

TEST(Tensor, ToDtypeConverts) {
  Tensor t = tensor({1.75, -2.5});
  Tensor i = t.to(kInt64);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.data_ptr<int64_t>()[0], 1);
  EXPECT_EQ(i.data_ptr<int64_t>()[1], -2);  // truncation, like PyTorch
  Tensor b = tensor({0.0, 3.0}).to(kBool);
  EXPECT_EQ(b.data_ptr<bool>()[0], false);
  EXPECT_EQ(b.data_ptr<bool>()[1], true);
  EXPECT_EQ(t.to(kFloat32).data_ptr<float>()[0], 1.75f);
}

TEST(Tensor, ToAnotherDeviceCopies) {
  Tensor a = tensor({1.0f, 2.0f, 3.0f});
  Tensor b = a.to("cpu:1");
  EXPECT_EQ(b.device(), Device("cpu:1"));
  EXPECT_EQ(a.device(), Device("cpu:0"));
  EXPECT_NE(b.data_ptr(), a.data_ptr());
  EXPECT_TRUE(all_close(b, a));
  a.fill_(9);
  EXPECT_EQ(b.data_ptr<float>()[0], 1.0f);
  Tensor c = a.to(Device("cpu:2"), kFloat64);
  EXPECT_EQ(c.device(), Device("cpu:2"));
  EXPECT_EQ(c.dtype(), kFloat64);
  Tensor d = a.to(TensorOptions().device("cpu:3"));
  EXPECT_EQ(d.device(), Device("cpu:3"));
  EXPECT_EQ(d.dtype(), kFloat32);
  EXPECT_EQ(d.to(kCPU).device(), Device("cpu:0"));
  EXPECT_EQ(d.to(std::string("cpu:2")).device(), Device("cpu:2"));
  EXPECT_EQ(d.cpu().device(), Device("cpu:0"));
}

TEST(Tensor, ToSameDeviceAndDtypeReturnsTheSameTensor) {
  Tensor a = ones({2});
  EXPECT_TRUE(a.to(kFloat32).is_same(a));
  EXPECT_TRUE(a.to("cpu").is_same(a));
  EXPECT_TRUE(a.to(TensorOptions()).is_same(a));
  Tensor copy = a.to(kFloat32, /*non_blocking=*/false, /*copy=*/true);
  EXPECT_FALSE(copy.is_same(a));
  EXPECT_NE(copy.data_ptr(), a.data_ptr());
}

TEST(Tensor, CloneAndContiguous) {
  float data[4] = {1, 2, 3, 4};
  Tensor cols = from_blob(data, {2, 2}, {1, 2});  // [[1, 3], [2, 4]]
  EXPECT_FALSE(cols.is_contiguous());
  Tensor c = cols.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (IntList{2, 1}));
  const float* p = c.data_ptr<float>();
  EXPECT_EQ((std::vector<float>(p, p + 4)), (std::vector<float>{1, 3, 2, 4}));
  Tensor row = from_blob(data, {2, 2});
  EXPECT_TRUE(row.contiguous().is_same(row));
  Tensor k = row.clone();
  EXPECT_NE(k.data_ptr(), row.data_ptr());
  data[0] = 100;
  EXPECT_EQ(k.data_ptr<float>()[0], 1.0f);
  EXPECT_EQ(k.sizes(), row.sizes());
}

TEST(Tensor, CopyBroadcastsAndConvertsDtype) {
  Tensor dst = zeros({2, 3}, kFloat64);
  dst.copy_(tensor({1, 2, 3}));  // int64 [3] into float64 [2, 3]
  const double* p = dst.data_ptr<double>();
  EXPECT_EQ((std::vector<double>(p, p + 6)), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  Tensor ints = zeros({2}, kInt64);
  ints.copy_(tensor({2.9, -1.5}));
  EXPECT_EQ(ints.data_ptr<int64_t>()[0], 2);
  EXPECT_EQ(ints.data_ptr<int64_t>()[1], -1);
  EXPECT_TRUE(throws_with([&] { dst.copy_(ones({4})); }, "[4]"));
  EXPECT_TRUE(throws_with([&] { ints.copy_(ones({2, 2})); }, "cannot copy"));
}

TEST(Tensor, CopyAcrossDevicesIsAllowed) {
  Tensor dst = zeros({3}, Device("cpu:1"));
  dst.copy_(tensor({4.0f, 5.0f, 6.0f}));
  EXPECT_EQ(dst.device(), Device("cpu:1"));
  EXPECT_EQ(dst.data_ptr<float>()[2], 6.0f);
}

TEST(Tensor, InPlaceOpsBumpTheVersionCounter) {
  Tensor t = zeros({3});
  uint32_t v = t._version();
  Tensor alias = t.detach();  // shares storage, and so the counter
  auto expect_bump = [&](const char* what) {
    EXPECT_EQ(t._version(), v + 1) << what;
    EXPECT_EQ(alias._version(), v + 1) << what;
    v = t._version();
  };
  t.add_(1);
  expect_bump("add_ scalar");
  t.add_(ones({3}), 2);
  expect_bump("add_");
  t.sub_(ones({3}));
  expect_bump("sub_");
  t.mul_(ones({3}));
  expect_bump("mul_");
  t.div_(2);
  expect_bump("div_");
  t.clamp_(0, 1);
  expect_bump("clamp_");
  t.relu_();
  expect_bump("relu_");
  t.fill_(3);
  expect_bump("fill_");
  t.zero_();
  expect_bump("zero_");
  t.copy_(ones({3}));
  expect_bump("copy_");
  t.uniform_();
  expect_bump("uniform_");
  Tensor out = t + 1;
  EXPECT_EQ(t._version(), v) << "out-of-place ops leave the counter alone";
  EXPECT_EQ(out._version(), 0u);
}

TEST(Tensor, SetDataSwapsStorageKeepingIdentity) {
  Tensor w = ones({2}, requires_grad());
  Tensor handle = w;
  w.set_data(zeros({3}, TensorOptions(kFloat64).device("cpu:1")));
  EXPECT_EQ(handle.sizes(), (IntList{3}));
  EXPECT_EQ(handle.dtype(), kFloat64);
  EXPECT_EQ(handle.device(), Device("cpu:1"));
  EXPECT_TRUE(handle.requires_grad());
  EXPECT_TRUE(handle.is_leaf());
  EXPECT_EQ(handle.data_ptr<double>()[2], 0.0);
  EXPECT_TRUE(throws_with([&] { w.set_data(Tensor()); }, "undefined"));
}

TEST(Tensor, SetDataAfterAGraphUsedTheLeafStillBackpropagates) {
  Tensor w = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor old_graph = w * 2;  // keeps the leaf's gradient accumulator alive
  w.set_data(ones({3}, kFloat64));
  (w * 3).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(all_close(w.grad(), full({3}, 3.0, kFloat64)));
}

TEST(Tensor, MixedDevicesAreRefusedNamingOpAndDevices) {
  Tensor a = ones({2});
  Tensor b = ones({2}, Device("cpu:1"));
  for (auto [op, fn] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"add", [&] { add(a, b); }},
           {"mul", [&] { mul(a, b); }},
           {"sub", [&] { a - b; }},
           {"maximum", [&] { maximum(a, b); }},
           {"where", [&] { where(a > 0, a, b); }},
           {"add_", [&] { a.add_(b); }},
       }) {
    EXPECT_TRUE(throws_with(fn, op + ":")) << op;
    EXPECT_TRUE(throws_with(fn, "cpu:0 and cpu:1")) << op;
  }
  EXPECT_TRUE(throws_with([&] { where(b > 0, a, a); },
                          "where: expected all tensors "
                          "on the same device, got cpu:1 "
                          "and cpu:0"));
}

}  // namespace
}  // namespace tandem
