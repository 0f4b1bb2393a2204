#include "support/tensor_testing.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace tandem::testing {

::testing::AssertionResult all_close(const Tensor& got,
                                     const Tensor& want,
                                     double rtol,
                                     double atol) {
  if (!got.defined() || !want.defined()) {
    return ::testing::AssertionFailure() << "undefined tensor";
  }
  if (got.sizes() != want.sizes()) {
    return ::testing::AssertionFailure()
           << "shape " << got.sizes() << " != expected " << want.sizes();
  }
  NoGradGuard no_grad;
  Tensor a = got.to(Device(kCPU), kFloat64).contiguous();
  Tensor b = want.to(Device(kCPU), kFloat64).contiguous();
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  int64_t worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double diff = std::abs(pa[i] - pb[i]);
    double tol = atol + rtol * std::abs(pb[i]);
    bool bad =
        std::isnan(pa[i]) != std::isnan(pb[i]) || (!std::isnan(pa[i]) && diff > tol);
    if (bad && (worst < 0 || diff - tol > worst_excess)) {
      worst = i;
      worst_excess = diff - tol;
    }
  }
  if (worst < 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "tensors of shape " << got.sizes() << " (" << got.dtype() << " on "
         << got.device() << ") differ; worst at flat index " << worst << ": got "
         << pa[worst] << ", expected " << pb[worst] << " (rtol " << rtol << ", atol "
         << atol << ")";
}

Tensor from_values(const std::vector<double>& values,
                   const IntList& sizes,
                   ScalarType dtype) {
  TANDEM_CHECK(static_cast<int64_t>(values.size()) == numel_of(sizes),
               "from_values: ",
               values.size(),
               " values do not fill shape ",
               sizes);
  return tensor(values, kFloat64).reshape(sizes).to(dtype);
}

std::map<std::string, Tensor> load_golden(const std::string& file) {
  // Format (tests/reference/golden.py): per tensor one header line
  // "name dtype ndim d0 d1 ..." and one line of values.
  std::string path = std::string(TANDEM_GOLDEN_DIR) + "/" + file;
  std::ifstream in(path);
  TANDEM_CHECK(in.good(),
               "golden file ",
               path,
               " is missing; it is written by tests/reference/*.py (ctest runs ",
               "them first as the generate_goldens test)");
  std::map<std::string, Tensor> out;
  std::string header;
  while (std::getline(in, header)) {
    if (header.empty()) continue;
    std::istringstream h(header);
    std::string name, dtype;
    int64_t ndim = 0;
    h >> name >> dtype >> ndim;
    IntList sizes(ndim);
    for (auto& s : sizes) h >> s;
    std::string values;
    std::getline(in, values);
    std::istringstream v(values);
    int64_t n = numel_of(sizes);
    std::vector<double> data(n);
    for (auto& x : data) v >> x;
    TANDEM_CHECK(!v.fail(), "golden file ", path, ": bad values for ", name);
    Tensor t = tensor(data, kFloat64).reshape(sizes);
    if (dtype == "float32") t = t.to(kFloat32);
    if (dtype == "int64") t = t.to(kInt64);
    out[name] = t;
  }
  return out;
}

}  // namespace tandem::testing
