// Printing: operator<< must give exactly what Python PyTorch's repr gives
// for the same values (every expected string below was printed by
// PyTorch 1.13), with tandem's dtype names in the suffixes.
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

std::string str(const Tensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

Tensor make(std::vector<double> values,
            const IntList& sizes,
            ScalarType dtype = kFloat32) {
  return from_blob(values.data(), sizes, kFloat64).clone().to(dtype);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Print, FixedPointWithPaddingToACommonWidth) {
  EXPECT_EQ(str(make({0.1, -2.0, 3.0, 4.5}, {2, 2})),
            "tensor([[ 0.1000, -2.0000],\n"
            "        [ 3.0000,  4.5000]])");
  EXPECT_EQ(str(make({-0.0, 0.5}, {2})), "tensor([-0.0000, 0.5000])");
  EXPECT_EQ(str(make({1.5, 2.25}, {2}, kFloat64)),
            "tensor([1.5000, 2.2500], dtype=float64)");
}

TEST(Print, WholeNumbersKeepADecimalPoint) {
  EXPECT_EQ(str(make({1, 2}, {2})), "tensor([1., 2.])");
  EXPECT_EQ(str(make({-1, 20, 3, 0}, {2, 2})),
            "tensor([[-1., 20.],\n"
            "        [ 3.,  0.]])");
  EXPECT_EQ(str(make({100, 1e5}, {2})), "tensor([   100., 100000.])");
  EXPECT_EQ(str(zeros({3})), "tensor([0., 0., 0.])");
}

TEST(Print, ScientificNotationWhenPyTorchUsesIt) {
  EXPECT_EQ(str(make({1e-5, 1.0}, {2})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(make({1.0, 12345.678}, {2})), "tensor([1.0000e+00, 1.2346e+04])");
  EXPECT_EQ(str(make({1e9, 1.0}, {2})), "tensor([1.0000e+09, 1.0000e+00])");
  EXPECT_EQ(str(make({0.001, 1.5}, {2})), "tensor([1.0000e-03, 1.5000e+00])");
  EXPECT_EQ(str(make({123456789., 1.5}, {2})), "tensor([1.2346e+08, 1.5000e+00])");
  EXPECT_EQ(str(make({1e-8, -3.5e3, 2.0, kNaN}, {2, 2})),
            "tensor([[ 1.0000e-08, -3.5000e+03],\n"
            "        [ 2.0000e+00,         nan]])");
}

TEST(Print, NonFiniteValues) {
  EXPECT_EQ(str(make({kNaN, kInf, -kInf, 1.5}, {4})),
            "tensor([   nan,    inf,   -inf, 1.5000])");
  EXPECT_EQ(str(make({kNaN, 2, 0}, {3})), "tensor([nan, 2., 0.])");
}

TEST(Print, IntegersBoolsAndBytes) {
  EXPECT_EQ(str(make({1, 2, 3}, {3}, kInt64)), "tensor([1, 2, 3])");
  EXPECT_EQ(str(make({-5}, {1}, kInt64)), "tensor([-5])");
  EXPECT_EQ(str(make({1, -20, 300, 4}, {2, 2}, kInt64)),
            "tensor([[  1, -20],\n"
            "        [300,   4]])");
  EXPECT_EQ(str(make({1, 0}, {2}, kBool)), "tensor([ True, False])");
  EXPECT_EQ(str(make({1, 200}, {2}, kUInt8)), "tensor([  1, 200], dtype=uint8)");
}

TEST(Print, ScalarsAndEmptyTensors) {
  EXPECT_EQ(str(scalar_tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(str(scalar_tensor(7, kInt64)), "tensor(7)");
  EXPECT_EQ(str(scalar_tensor(2, kFloat64)), "tensor(2., dtype=float64)");
  EXPECT_EQ(str(zeros({0})), "tensor([])");
  EXPECT_EQ(str(zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(str(zeros({0, 3}, kInt64)), "tensor([], size=(0, 3), dtype=int64)");
  EXPECT_EQ(str(zeros({0}, kInt64)), "tensor([], dtype=int64)");
  EXPECT_EQ(str(Tensor()), "[ Tensor (undefined) ]");
}

TEST(Print, HigherDimsAndStridedViews) {
  EXPECT_EQ(str(arange(12, kFloat32).reshape({2, 2, 3})),
            "tensor([[[ 0.,  1.,  2.],\n"
            "         [ 3.,  4.,  5.]],\n"
            "\n"
            "        [[ 6.,  7.,  8.],\n"
            "         [ 9., 10., 11.]]])");
  EXPECT_EQ(str(arange(16, kFloat32).reshape({2, 2, 2, 2})),
            "tensor([[[[ 0.,  1.],\n"
            "          [ 2.,  3.]],\n"
            "\n"
            "         [[ 4.,  5.],\n"
            "          [ 6.,  7.]]],\n"
            "\n"
            "\n"
            "        [[[ 8.,  9.],\n"
            "          [10., 11.]],\n"
            "\n"
            "         [[12., 13.],\n"
            "          [14., 15.]]]])");
  EXPECT_EQ(str(arange(6, kFloat32).reshape({2, 3}).t()),
            "tensor([[0., 3.],\n"
            "        [1., 4.],\n"
            "        [2., 5.]])");
}

TEST(Print, LongRowsWrapAtEightyColumns) {
  EXPECT_EQ(
      str(arange(30, kFloat32) / 3),
      "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
      "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
      "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667,\n"
      "        9.0000, 9.3333, 9.6667])");
  EXPECT_EQ(
      str(arange(40)),
      "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
      "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
      "        36, 37, 38, 39])");
}

TEST(Print, SummarizesAboveAThousandElements) {
  EXPECT_EQ(str(arange(2000, kFloat32)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(str(arange(1200).reshape({40, 30})),
            "tensor([[   0,    1,    2,  ...,   27,   28,   29],\n"
            "        [  30,   31,   32,  ...,   57,   58,   59],\n"
            "        [  60,   61,   62,  ...,   87,   88,   89],\n"
            "        ...,\n"
            "        [1110, 1111, 1112,  ..., 1137, 1138, 1139],\n"
            "        [1140, 1141, 1142,  ..., 1167, 1168, 1169],\n"
            "        [1170, 1171, 1172,  ..., 1197, 1198, 1199]])");
  EXPECT_EQ(str(arange(1500).to(kUInt8)),
            "tensor([  0,   1,   2,  ..., 217, 218, 219], dtype=uint8)");
  std::vector<double> every_third(1001);
  for (size_t i = 0; i < every_third.size(); ++i) every_third[i] = i % 3 == 0;
  EXPECT_EQ(str(make(every_third, {1001}, kBool)),
            "tensor([ True, False, False,  ..., False,  True, False])");
  EXPECT_EQ(str(arange(1100).reshape({11, 10, 10})),
            "tensor([[[   0,    1,    2,  ...,    7,    8,    9],\n"
            "         [  10,   11,   12,  ...,   17,   18,   19],\n"
            "         [  20,   21,   22,  ...,   27,   28,   29],\n"
            "         ...,\n"
            "         [  70,   71,   72,  ...,   77,   78,   79],\n"
            "         [  80,   81,   82,  ...,   87,   88,   89],\n"
            "         [  90,   91,   92,  ...,   97,   98,   99]],\n"
            "\n"
            "        [[ 100,  101,  102,  ...,  107,  108,  109],\n"
            "         [ 110,  111,  112,  ...,  117,  118,  119],\n"
            "         [ 120,  121,  122,  ...,  127,  128,  129],\n"
            "         ...,\n"
            "         [ 170,  171,  172,  ...,  177,  178,  179],\n"
            "         [ 180,  181,  182,  ...,  187,  188,  189],\n"
            "         [ 190,  191,  192,  ...,  197,  198,  199]],\n"
            "\n"
            "        [[ 200,  201,  202,  ...,  207,  208,  209],\n"
            "         [ 210,  211,  212,  ...,  217,  218,  219],\n"
            "         [ 220,  221,  222,  ...,  227,  228,  229],\n"
            "         ...,\n"
            "         [ 270,  271,  272,  ...,  277,  278,  279],\n"
            "         [ 280,  281,  282,  ...,  287,  288,  289],\n"
            "         [ 290,  291,  292,  ...,  297,  298,  299]],\n"
            "\n"
            "        ...,\n"
            "\n"
            "        [[ 800,  801,  802,  ...,  807,  808,  809],\n"
            "         [ 810,  811,  812,  ...,  817,  818,  819],\n"
            "         [ 820,  821,  822,  ...,  827,  828,  829],\n"
            "         ...,\n"
            "         [ 870,  871,  872,  ...,  877,  878,  879],\n"
            "         [ 880,  881,  882,  ...,  887,  888,  889],\n"
            "         [ 890,  891,  892,  ...,  897,  898,  899]],\n"
            "\n"
            "        [[ 900,  901,  902,  ...,  907,  908,  909],\n"
            "         [ 910,  911,  912,  ...,  917,  918,  919],\n"
            "         [ 920,  921,  922,  ...,  927,  928,  929],\n"
            "         ...,\n"
            "         [ 970,  971,  972,  ...,  977,  978,  979],\n"
            "         [ 980,  981,  982,  ...,  987,  988,  989],\n"
            "         [ 990,  991,  992,  ...,  997,  998,  999]],\n"
            "\n"
            "        [[1000, 1001, 1002,  ..., 1007, 1008, 1009],\n"
            "         [1010, 1011, 1012,  ..., 1017, 1018, 1019],\n"
            "         [1020, 1021, 1022,  ..., 1027, 1028, 1029],\n"
            "         ...,\n"
            "         [1070, 1071, 1072,  ..., 1077, 1078, 1079],\n"
            "         [1080, 1081, 1082,  ..., 1087, 1088, 1089],\n"
            "         [1090, 1091, 1092,  ..., 1097, 1098, 1099]]])");
}

TEST(Print, SuffixesForDeviceAndAutograd) {
  EXPECT_EQ(str(make({1, 2}, {2}).to(Device("cpu:1"))),
            "tensor([1., 2.], device='cpu:1')");
  Tensor x = make({1, 2}, {2}).requires_grad_();
  EXPECT_EQ(str(x), "tensor([1., 2.], requires_grad=True)");
  EXPECT_EQ(str(x * 2), "tensor([2., 4.], grad_fn=<MulBackward>)");
  Tensor y = make({1, 2}, {2}, kFloat64).requires_grad_();
  EXPECT_EQ(str(y + 1), "tensor([2., 3.], dtype=float64, grad_fn=<AddBackward>)");
  // A suffix that would pass column 80 goes on its own line.
  Tensor z = (arange(14, kFloat64) / 3).requires_grad_();
  EXPECT_EQ(
      str(z),
      "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
      "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333], dtype=float64,\n"
      "       requires_grad=True)");
}

}  // namespace
}  // namespace tandem
