#include "tandem/data/transforms.h"

#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem::data::transforms {
namespace {

template <typename Example>
void check_not_empty(const std::vector<Example>& examples) {
  TANDEM_CHECK(!examples.empty(), "Stack: expected at least one example to collate");
}

}  // namespace

namespace detail {

Tensor channel_values(const std::vector<double>& values, const char* what) {
  TANDEM_CHECK(!values.empty(), "Normalize: expected at least one ", what, " value");
  const auto channels = static_cast<int64_t>(values.size());
  return tensor(values, kFloat32).view({channels, 1, 1});
}

}  // namespace detail

Example<> Stack<Example<>>::apply_batch(std::vector<Example<>> examples) {
  check_not_empty(examples);
  std::vector<Tensor> data;
  std::vector<Tensor> targets;
  data.reserve(examples.size());
  targets.reserve(examples.size());
  for (Example<>& example : examples) {
    data.push_back(std::move(example.data));
    targets.push_back(std::move(example.target));
  }
  return {stack(data), stack(targets)};
}

TensorExample Stack<TensorExample>::apply_batch(std::vector<TensorExample> examples) {
  check_not_empty(examples);
  std::vector<Tensor> data;
  data.reserve(examples.size());
  for (TensorExample& example : examples) data.push_back(std::move(example.data));
  return stack(data);
}

}  // namespace tandem::data::transforms
