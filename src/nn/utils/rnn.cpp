#include "tandem/nn/utils/rnn.h"

#include <algorithm>
#include <cstdint>

#include "tandem/core/error.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem::nn::utils::rnn {

Tensor pad_sequence(const std::vector<Tensor>& sequences,
                    bool batch_first,
                    double padding_value) {
  TANDEM_CHECK(!sequences.empty(),
               "pad_sequence: expected at least one sequence, got none");
  const Tensor& first = sequences.front();
  int64_t longest = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& sequence = sequences[i];
    TANDEM_CHECK(
        sequence.defined(), "pad_sequence: sequence ", i, " is an undefined tensor");
    TANDEM_CHECK(sequence.dim() >= 1,
                 "pad_sequence: sequence ",
                 i,
                 " is a 0-dim tensor; expected [length, *]");
    TANDEM_CHECK(sequence.dim() == first.dim() && std::equal(sequence.sizes().begin() + 1,
                                                             sequence.sizes().end(),
                                                             first.sizes().begin() + 1),
                 "pad_sequence: sequence ",
                 i,
                 " has sizes ",
                 sequence.sizes(),
                 " but sequence 0 has ",
                 first.sizes(),
                 "; every sequence must have the same sizes after the first dim");
    TANDEM_CHECK(sequence.dtype() == first.dtype() && sequence.device() == first.device(),
                 "pad_sequence: sequence ",
                 i,
                 " is ",
                 sequence.dtype(),
                 " on ",
                 sequence.device(),
                 " but sequence 0 is ",
                 first.dtype(),
                 " on ",
                 first.device());
    longest = std::max(longest, sequence.size(0));
  }
  std::vector<Tensor> padded;
  padded.reserve(sequences.size());
  for (const Tensor& sequence : sequences) {
    const int64_t missing = longest - sequence.size(0);
    if (missing == 0) {
      padded.push_back(sequence);
      continue;
    }
    std::vector<int64_t> fill_sizes(sequence.sizes().begin(), sequence.sizes().end());
    fill_sizes[0] = missing;
    padded.push_back(
        cat({sequence, full(fill_sizes, padding_value, sequence.options())}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

}  // namespace tandem::nn::utils::rnn
