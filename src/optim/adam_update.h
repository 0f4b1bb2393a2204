// The per-parameter step shared by Adam and AdamW, which differ only in
// their options type and where weight decay goes.
#pragma once

#include <tuple>

#include "optim/fused_steps.h"
#include "tandem/optim/adam.h"

namespace tandem::optim::detail {

template <typename Options>
void adam_update(const char* op,
                 bool decoupled_weight_decay,
                 Tensor& param,
                 const Tensor& grad,
                 const Options& options,
                 AdamParamState& state) {
  const int64_t step = state.step() + 1;
  adam_step(op,
            param,
            grad,
            state.exp_avg(),
            state.exp_avg_sq(),
            state.max_exp_avg_sq(),
            {options.lr(),
             std::get<0>(options.betas()),
             std::get<1>(options.betas()),
             options.eps(),
             options.weight_decay(),
             options.amsgrad(),
             decoupled_weight_decay,
             step});
  // Counted only once the update went through, so a failed check leaves the
  // state as it was.
  state.step() = step;
}

}  // namespace tandem::optim::detail
