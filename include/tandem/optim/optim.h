// tandem::optim: optimizers and learning-rate schedules, named as in
// LibTorch's torch::optim.
//
//   tandem::optim::Adam opt(model->parameters(), tandem::optim::AdamOptions(1e-3));
//   tandem::optim::StepLR sched(opt, /*step_size=*/10, /*gamma=*/0.5);
#pragma once

#include "tandem/optim/adagrad.h"
#include "tandem/optim/adam.h"
#include "tandem/optim/adamw.h"
#include "tandem/optim/optimizer.h"
#include "tandem/optim/rmsprop.h"
#include "tandem/optim/schedulers/cosine_annealing_lr.h"
#include "tandem/optim/schedulers/exponential_lr.h"
#include "tandem/optim/schedulers/lambda_lr.h"
#include "tandem/optim/schedulers/lr_scheduler.h"
#include "tandem/optim/schedulers/multi_step_lr.h"
#include "tandem/optim/schedulers/one_cycle_lr.h"
#include "tandem/optim/schedulers/reduce_lr_on_plateau.h"
#include "tandem/optim/schedulers/step_lr.h"
#include "tandem/optim/sgd.h"
