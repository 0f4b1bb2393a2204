// StepLR: multiplies every group's learning rate by gamma once every
// step_size scheduler steps (epochs, usually).
//
//   tandem::optim::SGD optimizer(params, 0.1);
//   tandem::optim::StepLR scheduler(optimizer, /*step_size=*/2, /*gamma=*/0.5);
//   scheduler.step();   // lr 0.1
//   scheduler.step();   // lr 0.05
//
// The count follows Python's torch.optim.lr_scheduler.StepLR: after n calls
// of step(), lr = initial lr * gamma^(n / step_size). (LibTorch's StepLR
// decays one call later, because its first step() stands for the step that
// Python's constructor takes.)
#pragma once

#include <cstdint>
#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, unsigned step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;

 private:
  unsigned step_size_;
  double gamma_;
};

}  // namespace tandem::optim
