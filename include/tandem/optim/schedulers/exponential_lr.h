// ExponentialLR: multiplies every group's learning rate by gamma on every
// step (Python's torch.optim.lr_scheduler.ExponentialLR).
//
//   tandem::optim::ExponentialLR scheduler(optimizer, /*gamma=*/0.9);
#pragma once

#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lrs() override;

 private:
  double gamma_;
};

}  // namespace tandem::optim
