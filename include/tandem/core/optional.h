// tandem::optional and tandem::nullopt: std::optional under the names that
// LibTorch programs use (torch::optional is c10::optional, which is
// std::optional since PyTorch 2.1), so `torch::optional<int64_t>` ports by
// renaming.
//
//   tandem::optional<tandem::Tensor> bias = tandem::nullopt;
//   if (use_bias) bias = tandem::zeros({out_features});
#pragma once

#include <optional>

namespace tandem {

template <typename T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;

}  // namespace tandem
