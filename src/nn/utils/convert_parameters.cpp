#include "tandem/nn/utils/convert_parameters.h"

#include "tandem/graph/grad_mode.h"
#include "tandem/ops/shape.h"

namespace tandem::nn::utils {
namespace {

void check_same_device(const char* op, const std::vector<Tensor>& parameters) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    TANDEM_CHECK(parameters[i].defined(), op, ": parameter ", i, " is undefined");
    TANDEM_CHECK(parameters[i].device() == parameters[0].device(),
                 op,
                 ": found two parameters on different devices: parameter 0 on ",
                 parameters[0].device(),
                 " and parameter ",
                 i,
                 " on ",
                 parameters[i].device());
  }
}

}  // namespace

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  check_same_device("parameters_to_vector", parameters);
  TANDEM_CHECK(!parameters.empty(), "parameters_to_vector: no parameters given");
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (const auto& p : parameters) flat.push_back(p.reshape({-1}));
  return cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  check_same_device("vector_to_parameters", parameters);
  TANDEM_CHECK(
      vec.defined() && vec.dim() == 1,
      "vector_to_parameters: expected a 1-D vector, got ",
      vec.defined() ? tandem::detail::str("shape ", vec.sizes()) : "an undefined tensor");
  int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  TANDEM_CHECK(vec.numel() == total,
               "vector_to_parameters: the vector has ",
               vec.numel(),
               " elements but the parameters have ",
               total);
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (const auto& p : parameters) {
    const int64_t n = p.numel();
    Tensor param = p;
    param.copy_(vec.narrow(0, offset, n).reshape(p.sizes()));
    offset += n;
  }
}

}  // namespace tandem::nn::utils
