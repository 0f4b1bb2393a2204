// tandem::optim: optimizers and learning-rate schedules, named as in
// LibTorch's torch::optim.
//
//   tandem::optim::Adam opt(model->parameters(), tandem::optim::AdamOptions(1e-3));
//   tandem::optim::StepLR sched(opt, /*step_size=*/10, /*gamma=*/0.5);
#pragma once

#include "tandem/optim/adam.h"
#include "tandem/optim/adamw.h"
#include "tandem/optim/optimizer.h"
#include "tandem/optim/schedulers/lr_scheduler.h"
#include "tandem/optim/schedulers/step_lr.h"
#include "tandem/optim/sgd.h"
