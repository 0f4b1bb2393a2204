#include "tandem/optim/schedulers/step_lr.h"

namespace tandem::optim {

StepLR::StepLR(Optimizer& optimizer, unsigned step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  TANDEM_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  // Decay on the step that completes each step_size steps, multiplying the
  // current rate (as PyTorch does) so changes made in between are kept.
  if ((step_count() + 1) % step_size_ == 0) {
    for (double& lr : lrs) lr *= gamma_;
  }
  return lrs;
}

}  // namespace tandem::optim
