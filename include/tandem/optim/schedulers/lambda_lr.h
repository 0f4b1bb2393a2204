// LambdaLR: each group's learning rate is its initial rate times a
// function of the epoch (Python's torch.optim.lr_scheduler.LambdaLR). As in
// Python, the constructor already sets lr = base_lr * lr_lambda(0).
//
//   tandem::optim::LambdaLR scheduler(
//       optimizer, [](int64_t epoch) { return std::pow(0.95, epoch); });
//   scheduler.step();   // lr = base_lr * 0.95
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class LambdaLR : public LRScheduler {
 public:
  using LrLambda = std::function<double(int64_t epoch)>;

  /// One function for every group.
  LambdaLR(Optimizer& optimizer, LrLambda lr_lambda);
  /// One function per group.
  LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas);

 protected:
  std::vector<double> get_lrs() override;

 private:
  std::vector<double> lrs_at(int64_t epoch) const;

  std::vector<LrLambda> lr_lambdas_;
};

}  // namespace tandem::optim
