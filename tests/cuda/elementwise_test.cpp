// Elementwise ops on the device under test, forward only, in every dtype
// (bool, uint8, int64, float32, float64) and mixed dtypes: integral and bool
// results equal the CPU's bit for bit, floating ones the float64 reference;
// an op the CPU refuses for a dtype must be refused on the device too. Then
// special values (inf, NaN, -0, huge, tiny) against the CPU in the same
// dtype, and in-place ops, also through views.
#include <cmath>
#include <limits>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using L = const std::vector<Tensor>&;

const std::vector<ScalarType> kAllDtypes = {kBool, kUInt8, kInt64, kFloat32, kFloat64};

// `fn` on cpu:0 and on the device: the same verdict (error or not), and
// outputs of the same dtype and shape whose values agree. Floating results
// are held to the float64 reference computed from the same (widened) inputs.
void expect_same_as_cpu(const std::string& what,
                        const Fn& fn,
                        const std::vector<Tensor>& inputs) {
  Tensor want;
  std::string refusal;
  try {
    want = fn(inputs);
  } catch (const Error& e) {
    refusal = e.what();
  }
  std::vector<Tensor> on_device;
  for (const Tensor& t : inputs) on_device.push_back(to_dut(t));
  if (!refusal.empty()) {
    EXPECT_THROW(fn(on_device), Error)
        << what << ": the CPU refuses it (" << refusal << ")";
    return;
  }
  Tensor got;
  try {
    got = fn(on_device);
  } catch (const Error& e) {
    ADD_FAILURE() << what << ": the CPU computes it but the device throws: " << e.what();
    return;
  }
  EXPECT_EQ(got.device(), device_under_test()) << what;
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  if (!want.is_floating_point()) {
    EXPECT_TRUE(identical(got, want)) << what;
    return;
  }
  bool any_floating = false;
  std::vector<Tensor> widened;
  for (const Tensor& t : inputs) {
    any_floating = any_floating || t.is_floating_point();
    widened.push_back(t.is_floating_point() ? t.to(kFloat64) : t);
  }
  const Tensor reference = any_floating ? fn(widened) : want;
  EXPECT_TRUE(close_to(got, reference)) << what;
}

// Inputs of `dtype` for ops whose domain is `positive` or anything: floats
// uniform in [-2, 2) (or [0.5, 2)), int64 in [-5, 6) (or [1, 6)), uint8 in
// [0, 10) (or [1, 10)), bool either.
Tensor input_of(const IntList& sizes, ScalarType dtype, bool positive, Generator& gen) {
  switch (dtype) {
    case kBool:
      return testing::integers(sizes, gen, positive ? 1 : 0, 2, kBool);
    case kUInt8:
      return testing::integers(sizes, gen, positive ? 1 : 0, 10, kUInt8);
    case kInt64:
      return testing::integers(sizes, gen, positive ? 1 : -5, 6);
    default:
      return testing::uniform(sizes, gen, positive ? 0.5 : -2, 2).to(dtype);
  }
}

struct UnaryCase {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
  bool positive = false;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](const Tensor& x) { return neg(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return log(x); }, true},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, true},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, true},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"sign", [](const Tensor& x) { return sign(x); }},
      {"square", [](const Tensor& x) { return square(x); }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }, true},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"clamp", [](const Tensor& x) { return clamp(x, -1.5, 2.5); }},
      {"clamp_whole_bounds", [](const Tensor& x) { return clamp(x, -1, 3); }},
      {"clamp_min", [](const Tensor& x) { return clamp_min(x, 0.3); }},
      {"clamp_max", [](const Tensor& x) { return clamp_max(x, -0.3); }},
      {"pow_2", [](const Tensor& x) { return pow(x, 2); }},
      {"pow_3", [](const Tensor& x) { return pow(x, 3); }},
      {"pow_half", [](const Tensor& x) { return pow(x, 0.5); }, true},
      {"pow_minus_1_5", [](const Tensor& x) { return pow(x, -1.5); }, true},
      {"scalar_pow", [](const Tensor& x) { return pow(2, x); }},
      {"add_scalar_alpha", [](const Tensor& x) { return add(x, 1.5, 2); }},
      {"add_whole_scalar", [](const Tensor& x) { return add(x, 2); }},
      {"sub_scalar", [](const Tensor& x) { return sub(x, 1); }},
      {"mul_scalar", [](const Tensor& x) { return mul(x, 3); }},
      {"mul_fraction", [](const Tensor& x) { return mul(x, 0.25); }},
      {"div_scalar", [](const Tensor& x) { return div(x, 2); }},
      {"rsub_scalar", [](const Tensor& x) { return 3 - x; }},
      {"rdiv_scalar", [](const Tensor& x) { return 2 / x; }, true},
      {"eq_scalar", [](const Tensor& x) { return eq(x, 1); }},
      {"ne_scalar", [](const Tensor& x) { return ne(x, 0); }},
      {"lt_scalar", [](const Tensor& x) { return lt(x, 0.5); }},
      {"le_scalar", [](const Tensor& x) { return le(x, 1); }},
      {"gt_scalar", [](const Tensor& x) { return gt(x, -1); }},
      {"ge_scalar", [](const Tensor& x) { return ge(x, 2); }},
  };
}

class CudaElementwise : public testing::CudaTest {};

TEST_F(CudaElementwise, UnaryOpsInEveryDtypeAndLayout) {
  for (const UnaryCase& c : unary_cases()) {
    for (ScalarType dtype : kAllDtypes) {
      const std::string what = detail::str(c.name, " ", dtype);
      const Tensor x = input_of({37, 129}, dtype, c.positive, gen);
      auto one = [&](L in) { return c.fn(in[0]); };
      expect_same_as_cpu(what, one, {x});
      expect_same_as_cpu(
          what + " transposed", [&](L in) { return c.fn(in[0].t()); }, {x});
      expect_same_as_cpu(what + " expanded",
                         [&](L in) {
                           return c.fn(in[0].expand({3, 37, 129}));
                         },
                         {x.narrow(0, 0, 1)});
      expect_same_as_cpu(
          what + " narrowed", [&](L in) { return c.fn(in[0].narrow(1, 5, 100)); }, {x});
      expect_same_as_cpu(what + " 0-dim", one, {x.reshape({-1})[3]});
      expect_same_as_cpu(what + " empty", one, {x.narrow(0, 0, 0)});
    }
  }
}

TEST_F(CudaElementwise, UnaryOpsOverAMillionElements) {
  for (const char* name :
       {"exp", "sigmoid", "gelu", "clamp", "mul_fraction", "lt_scalar"}) {
    for (ScalarType dtype : {kFloat32, kFloat64, kInt64}) {
      for (const UnaryCase& c : unary_cases()) {
        if (c.name != name) continue;
        // 2^20 + 3: a length that is no multiple of any vector width.
        const Tensor x = input_of({(1 << 20) + 3}, dtype, c.positive, gen);
        expect_same_as_cpu(
            detail::str(name, " ", dtype, " 1M"), [&](L in) { return c.fn(in[0]); }, {x});
        // Odd offsets: a view whose data pointer is not 16-byte aligned.
        expect_same_as_cpu(detail::str(name, " ", dtype, " 1M offset by 1"),
                           [&](L in) { return c.fn(in[0].narrow(0, 1, 1 << 20)); },
                           {x});
      }
    }
  }
}

struct BinaryCase {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> fn;
  bool positive_b = false;  // divisors
  bool positive_a = false;  // pow's base
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"add_alpha", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"sub_alpha", [](const Tensor& a, const Tensor& b) { return sub(a, b, 0.5); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, true},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, false, true},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a, b); }},
  };
}

TEST_F(CudaElementwise, BinaryOpsInEveryDtypeWithBroadcasting) {
  struct Shapes {
    const char* name;
    IntList a, b;
    bool transpose_a;
  };
  const std::vector<Shapes> shapes = {
      {"same", {37, 129}, {37, 129}, false},
      {"broadcast_both", {5, 1, 7}, {3, 1}, false},
      {"against_0_dim", {4, 5}, {}, false},
      {"0_dim_first", {}, {6}, false},
      {"empty", {0, 3}, {3}, false},
      {"size_one", {1, 1}, {1}, false},
      {"transposed", {129, 37}, {37, 129}, true},
      {"row_broadcast_large", {1024, 1025}, {1025}, false},
  };
  for (const BinaryCase& c : binary_cases()) {
    for (ScalarType dtype : kAllDtypes) {
      for (const Shapes& s : shapes) {
        const Tensor a = input_of(s.a, dtype, c.positive_a, gen);
        // Small whole numbers make eq/le/ge ties common in every dtype, and
        // keep pow's results in range (9^2 fits in uint8).
        const Tensor b = c.positive_b ? input_of(s.b, dtype, true, gen)
                         : c.positive_a
                             ? testing::integers(s.b, gen, 0, 3, dtype)
                             : input_of(s.b, dtype, false, gen).to(kInt64).to(dtype);
        expect_same_as_cpu(
            detail::str(c.name, " ", dtype, " ", s.name),
            [&](L in) { return c.fn(s.transpose_a ? in[0].t() : in[0], in[1]); },
            {a, b});
      }
    }
  }
}

TEST_F(CudaElementwise, BinaryOpsPromoteMixedDtypes) {
  for (const char* name : {"add", "mul", "div", "lt", "maximum", "where"}) {
    for (const BinaryCase& c : binary_cases()) {
      if (c.name != name) continue;
      for (ScalarType da : kAllDtypes) {
        for (ScalarType db : kAllDtypes) {
          if (da == db) continue;
          const Tensor a = input_of({33, 17}, da, false, gen);
          const Tensor b = input_of({17}, db, c.positive_b, gen);
          expect_same_as_cpu(detail::str(name, " ", da, " with ", db),
                             [&](L in) { return c.fn(in[0], in[1]); },
                             {a, b});
        }
      }
    }
  }
}

TEST_F(CudaElementwise, WhereBroadcastsAllThreeOperands) {
  for (ScalarType dtype : kAllDtypes) {
    const Tensor cond = testing::integers({3, 1, 5}, gen, 0, 2, kBool);
    const Tensor a = input_of({4, 1}, dtype, false, gen);
    const Tensor b = input_of({}, dtype, false, gen);
    expect_same_as_cpu(detail::str("where ", dtype),
                       [](L in) { return where(in[0], in[1], in[2]); },
                       {cond, a, b});
    expect_same_as_cpu(detail::str("where transposed ", dtype),
                       [](L in) { return where(in[0].t(), in[1].t(), in[2]); },
                       {testing::integers({40, 30}, gen, 0, 2, kBool),
                        input_of({40, 30}, dtype, false, gen),
                        input_of({30, 40}, dtype, false, gen)});
  }
}

// inf, NaN, signed zeros, huge and tiny values: the device agrees with the
// CPU in the same dtype, NaN for NaN.
TEST_F(CudaElementwise, SpecialValuesMatchTheCpu) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {
      -inf, -1e30, -2.5, -1, -0.0, 0.0, 1e-30, 0.5, 1, 2.5, 1e30, inf, nan};
  const auto n = static_cast<int64_t>(values.size());
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const Tensor x = testing::from_values(values, {n}, dtype);
    for (const UnaryCase& c : unary_cases()) {
      const Tensor want = c.fn(x);
      const Tensor got = c.fn(to_dut(x));
      EXPECT_TRUE(testing::all_close(got, want, 1e-5, 1e-30))
          << c.name << " " << dtype << " of " << x;
    }
    // Every pair of values.
    const Tensor a = x.unsqueeze(1), b = x.unsqueeze(0);
    for (const BinaryCase& c : binary_cases()) {
      const Tensor want = c.fn(a, b);
      const Tensor got = c.fn(to_dut(a), to_dut(b));
      EXPECT_TRUE(testing::all_close(got, want, 1e-5, 1e-30))
          << c.name << " " << dtype << " over every pair of " << x;
    }
  }
}

TEST_F(CudaElementwise, InPlaceOpsAlsoThroughViews) {
  for (ScalarType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor x = input_of({30, 40}, dtype, false, gen);
    const Tensor y = input_of({40}, dtype, false, gen);
    const Tensor p = input_of({40, 30}, dtype, true, gen);
    auto check = [&](const char* what, const std::function<void(Tensor&)>& op) {
      Tensor want = x.clone();
      op(want);
      Tensor got = to_dut(x);
      op(got);
      EXPECT_EQ(got.device(), device_under_test()) << what;
      EXPECT_TRUE(close_to(got, want)) << what << " " << dtype;
    };
    const Tensor y_dev = to_dut(y), p_dev = to_dut(p);
    auto same = [&](const Tensor& t, const Tensor& on_device, const Tensor& target) {
      return target.device() == device_under_test() ? on_device : t;
    };
    check("add_ broadcast", [&](Tensor& t) { t.add_(same(y, y_dev, t), 2); });
    check("sub_ scalar", [&](Tensor& t) { t.sub_(3); });
    check("mul_ transposed operand", [&](Tensor& t) { t.mul_(same(p, p_dev, t).t()); });
    check("transposed view mul_", [&](Tensor& t) {
      Tensor v = t.t();
      v.mul_(same(p, p_dev, t));
    });
    check("narrowed view fill_", [&](Tensor& t) {
      Tensor v = t.narrow(1, 7, 20);
      v.fill_(7);
    });
    check("row zero_", [&](Tensor& t) {
      Tensor v = t.select(0, 4);
      v.zero_();
    });
    check("strided column clamp_", [&](Tensor& t) {
      Tensor v = t.select(1, 3);
      v.clamp_(-1, 1);
    });
    check("copy_ from broadcast", [&](Tensor& t) { t.copy_(same(y, y_dev, t)); });
    if (dtype != kInt64) {
      check("div_", [&](Tensor& t) { t.div_(same(p, p_dev, t).t()); });
      check("relu_", [](Tensor& t) { t.relu_(); });
    }
  }
}

TEST_F(CudaElementwise, CopyBetweenDevicesAndDtypesIntoViews) {
  const Tensor src = testing::uniform({20, 30}, gen);
  // Host to device, into a transposed destination, converting the dtype.
  Tensor dst = to_dut(testing::uniform({30, 20}, gen), kFloat32);
  Tensor view = dst.t();
  view.copy_(src);
  EXPECT_TRUE(close_to(dst.t(), src));
  // Device to host, into a narrowed CPU destination.
  Tensor host = zeros({20, 40}, kFloat64);
  Tensor window = host.narrow(1, 5, 30);
  window.copy_(to_dut(src));
  EXPECT_TRUE(identical(host.narrow(1, 5, 30), src));
  EXPECT_EQ(host.narrow(1, 0, 5).abs().sum().item<double>(), 0.0);
  // Device to device, float64 into an int64 view (truncation as the CPU).
  Tensor ints = to_dut(zeros({20, 30}, kInt64));
  ints.copy_(to_dut(src * 10));
  EXPECT_TRUE(identical(ints, (src * 10).to(kInt64)));
}

}  // namespace
}  // namespace tandem
