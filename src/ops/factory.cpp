#include "tandem/ops/factory.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/op_utils.h"

namespace tandem {
namespace {

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor filled(const IntList& sizes, Scalar value, const TensorOptions& options) {
  detail::check_scalar_fits("full", value, options.dtype());
  Tensor t = detail::make_empty(sizes, options.dtype(), options.device());
  detail::kernels_for(t).fill(t, value);
  return finish(t, options);
}

TensorOptions like(const Tensor& t, const TensorOptions& options) {
  TensorOptions o = options;
  if (!o.has_dtype()) o = o.dtype(t.dtype());
  if (!o.has_device()) o = o.device(t.device());
  return o;
}

}  // namespace

Tensor empty(const IntList& sizes, const TensorOptions& options) {
  return finish(detail::make_empty(sizes, options.dtype(), options.device()), options);
}

Tensor zeros(const IntList& sizes, const TensorOptions& options) {
  return filled(sizes, 0, options);
}

Tensor ones(const IntList& sizes, const TensorOptions& options) {
  return filled(sizes, 1, options);
}

Tensor full(const IntList& sizes, Scalar value, const TensorOptions& options) {
  return filled(sizes, value, options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  return empty(t.sizes(), like(t, options));
}

Tensor zeros_like(const Tensor& t, const TensorOptions& options) {
  return zeros(t.sizes(), like(t, options));
}

Tensor ones_like(const Tensor& t, const TensorOptions& options) {
  return ones(t.sizes(), like(t, options));
}

Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options) {
  return full(t.sizes(), value, like(t, options));
}

Tensor arange(Scalar end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}

Tensor arange(Scalar start, Scalar end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}

Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options) {
  TANDEM_CHECK(step != 0, "arange: step must be nonzero");
  TANDEM_CHECK(std::isfinite(start) && std::isfinite(end),
               "arange: start and end must be finite, got ",
               start,
               " and ",
               end);
  TANDEM_CHECK((end - start) / step >= 0,
               "arange: the range [",
               start,
               ", ",
               end,
               ") cannot be walked with step ",
               step);
  auto n = static_cast<int64_t>(std::ceil((end - start) / step));
  bool whole =
      start == std::floor(start) && end == std::floor(end) && step == std::floor(step);
  TensorOptions o =
      options.has_dtype() ? options : options.dtype(whole ? kInt64 : kFloat32);
  // Computed on the host in double (exact for every int64 a user writes
  // here), then converted, so float32 ranges match PyTorch's values.
  Tensor host = detail::make_empty({n}, kFloat64, Device(kCPU));
  auto* p = host.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<double>(i) * step;
  return finish(host.to(o.device(), o.dtype()), o);
}

Tensor rand(const IntList& sizes, const TensorOptions& options) {
  return rand(sizes, default_generator(), options);
}

Tensor rand(const IntList& sizes, Generator& gen, const TensorOptions& options) {
  Tensor t = detail::make_empty(sizes, options.dtype(), options.device());
  detail::check_floating("rand", t, "dtype");
  detail::kernels_for(t).uniform(t, 0, 1, gen);
  return finish(t, options);
}

Tensor randn(const IntList& sizes, const TensorOptions& options) {
  return randn(sizes, default_generator(), options);
}

Tensor randn(const IntList& sizes, Generator& gen, const TensorOptions& options) {
  Tensor t = detail::make_empty(sizes, options.dtype(), options.device());
  detail::check_floating("randn", t, "dtype");
  detail::kernels_for(t).normal(t, 0, 1, gen);
  return finish(t, options);
}

Tensor randint(int64_t high, const IntList& sizes, const TensorOptions& options) {
  return randint(0, high, sizes, default_generator(), options);
}

Tensor randint(int64_t low,
               int64_t high,
               const IntList& sizes,
               const TensorOptions& options) {
  return randint(low, high, sizes, default_generator(), options);
}

Tensor randint(int64_t low,
               int64_t high,
               const IntList& sizes,
               Generator& gen,
               const TensorOptions& options) {
  TANDEM_CHECK(
      low < high, "randint: expected low < high, got low=", low, " and high=", high);
  Tensor t = detail::make_empty(sizes, options.dtype(), options.device());
  detail::kernels_for(t).randint(t, low, high, gen);
  return finish(t, options);
}

namespace {

// PyTorch's linspace arithmetic, in T (float32 values are computed in
// float, as there; integers step in double). Each value is one fused
// multiply-add, rounded once: PyTorch's CPU kernels are compiled with FMA
// contraction, and a separate multiply and add differ in the last bit
// (linspace(-1.3, 2.9, 7)[3] would be 0.80000019 instead of 0.80000013).
template <typename T>
void fill_linspace(double* out, double start, double end, int64_t steps) {
  using Step = std::conditional_t<std::is_floating_point_v<T>, T, double>;
  const auto s = static_cast<Step>(static_cast<T>(start));
  const auto e = static_cast<Step>(static_cast<T>(end));
  const Step step = (e - s) / static_cast<Step>(steps - 1);
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    const Step v = i < halfway ? std::fma(step, static_cast<Step>(i), s)
                               : std::fma(-step, static_cast<Step>(steps - i - 1), e);
    out[i] = static_cast<double>(static_cast<T>(v));
  }
}

}  // namespace

Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& options) {
  TANDEM_CHECK(
      steps >= 0, "linspace: expected a non-negative number of steps, got ", steps);
  TANDEM_CHECK(options.dtype() != kBool, "linspace: not implemented for bool");
  Tensor host = detail::make_empty({steps}, kFloat64, Device(kCPU));
  auto* p = host.data_ptr<double>();
  if (steps == 1) {
    p[0] = start;
  } else if (steps > 1) {
    switch (options.dtype()) {
      case kFloat32:
        fill_linspace<float>(p, start, end, steps);
        break;
      case kFloat64:
        fill_linspace<double>(p, start, end, steps);
        break;
      case kInt64:
        fill_linspace<int64_t>(p, start, end, steps);
        break;
      default:
        fill_linspace<uint8_t>(p, start, end, steps);
        break;
    }
  }
  return finish(host.to(options.device(), options.dtype()), options);
}

Tensor eye(int64_t n, const TensorOptions& options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  TANDEM_CHECK(
      n >= 0 && m >= 0, "eye: expected non-negative sizes, got n=", n, " and m=", m);
  Tensor host = zeros({n, m}, kFloat64);
  auto* p = host.data_ptr<double>();
  for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = 1;
  return finish(host.to(options.device(), options.dtype()), options);
}

Tensor rand_like(const Tensor& t) { return rand(t.sizes(), t.options()); }
Tensor randn_like(const Tensor& t) { return randn(t.sizes(), t.options()); }

template <typename T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options) {
  using Stored = std::conditional_t<std::is_same_v<T, int>, int64_t, T>;
  constexpr ScalarType natural = dtype_of_v<Stored>;
  Tensor host =
      detail::make_empty({static_cast<int64_t>(values.size())}, natural, Device(kCPU));
  auto* p = host.data_ptr<Stored>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<Stored>(values[i]);
  TensorOptions o = options.has_dtype() ? options : options.dtype(natural);
  return finish(host.to(o.device(), o.dtype()), o);
}

template Tensor tensor<float>(const std::vector<float>&, const TensorOptions&);
template Tensor tensor<double>(const std::vector<double>&, const TensorOptions&);
template Tensor tensor<int64_t>(const std::vector<int64_t>&, const TensorOptions&);
template Tensor tensor<int>(const std::vector<int>&, const TensorOptions&);
template Tensor tensor<uint8_t>(const std::vector<uint8_t>&, const TensorOptions&);
template Tensor tensor<bool>(const std::vector<bool>&, const TensorOptions&);

Tensor scalar_tensor(Scalar value, const TensorOptions& options) {
  return filled({}, value, options);
}

Tensor from_blob(void* data, const IntList& sizes, const TensorOptions& options) {
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data,
                 const IntList& sizes,
                 const IntList& strides,
                 const TensorOptions& options) {
  TANDEM_CHECK(sizes.size() == strides.size(),
               "from_blob: sizes ",
               sizes,
               " and strides ",
               strides,
               " differ in length");
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    TANDEM_CHECK(sizes[d] >= 0 && strides[d] >= 0,
                 "from_blob: sizes and strides must be non-negative");
    if (sizes[d] == 0) extent = 0;
    if (extent > 0) extent += (sizes[d] - 1) * strides[d];
  }
  Storage storage = make_storage_from_blob(
      data, extent * element_size(options.dtype()), options.device(), nullptr);
  return finish(Tensor(std::make_shared<TensorImpl>(
                    std::move(storage), options.dtype(), sizes, strides, 0)),
                options);
}

Tensor from_blob(void* data,
                 const IntList& sizes,
                 std::function<void(void*)> deleter,
                 const TensorOptions& options) {
  Storage storage =
      make_storage_from_blob(data,
                             numel_of(sizes) * element_size(options.dtype()),
                             options.device(),
                             std::move(deleter));
  return finish(
      Tensor(std::make_shared<TensorImpl>(
          std::move(storage), options.dtype(), sizes, contiguous_strides(sizes), 0)),
      options);
}

}  // namespace tandem
