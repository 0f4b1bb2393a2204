// MultiStepLR: multiplies every group's learning rate by gamma at each
// milestone epoch (Python's torch.optim.lr_scheduler.MultiStepLR; a
// milestone listed twice multiplies by gamma twice).
//
//   tandem::optim::MultiStepLR scheduler(optimizer, {30, 80}, /*gamma=*/0.1);
#pragma once

#include <cstdint>
#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

}  // namespace tandem::optim
