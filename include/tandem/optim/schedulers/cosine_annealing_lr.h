// CosineAnnealingLR: anneals each group's learning rate from its initial
// value to eta_min along half a cosine over T_max steps, then back up, and
// so on (Python's torch.optim.lr_scheduler.CosineAnnealingLR). The rates are
// Python's recursive ones: each step scales the current rate's distance to
// eta_min, so a change made to the rate in between carries on, and without
// such changes they equal the closed form
//   eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.
//
//   tandem::optim::CosineAnnealingLR scheduler(optimizer, /*T_max=*/100);
#pragma once

#include <cstdint>
#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lrs() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace tandem::optim
