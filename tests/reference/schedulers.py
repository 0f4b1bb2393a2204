"""Learning-rate schedules: each group's rate (and momentum, where
OneCycleLR cycles it) after the scheduler is made and after every step.

One file, lr_schedulers.txt, all float64. Per case "<case>":
  <case>.lr        [steps + 1, groups]: row 0 right after construction
  <case>.momentum  the same for SGD's momentum / Adam's beta1 (OneCycleLR)
  <case>.metrics   [steps]: the metric given to each step (ReduceLROnPlateau)
The C++ side (tests/parity/lr_scheduler_test.cpp) builds the same
optimizer and schedule per case name.
"""

import math
import warnings

import torch
from torch.optim import lr_scheduler as S

from golden import GoldenFile


def two_groups(cls, lrs, **kw):
    a = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    groups = [{"params": [a], "lr": lrs[0]}]
    if len(lrs) > 1:
        groups.append({"params": [b], "lr": lrs[1]})
    return cls(groups, **kw)


def momentum_of(group):
    if "betas" in group:
        return group["betas"][0]
    return group["momentum"]


# name -> (make optimizer, make scheduler, steps, metrics or None, records momentum)
def cases():
    plateau_metrics = [1.0, 0.9, 0.95, 0.91, 0.9, 0.8, 0.85, 0.84, 0.83, 0.82,
                       0.9, 0.95, 0.7, 0.7, 0.7, 0.7, 0.7, 0.69999, 0.7, 0.71]
    accuracy = [0.1, 0.2, 0.25, 0.4, 0.45, 0.41, 0.43, 0.6, 0.62, 0.65, 0.64, 0.64]
    return {
        "lambda": (lambda: two_groups(torch.optim.SGD, [0.1, 0.05]),
                   lambda o: S.LambdaLR(o, lambda e: 0.9 ** e), 6, None, False),
        "lambda_per_group": (lambda: two_groups(torch.optim.SGD, [0.1, 0.05]),
                             lambda o: S.LambdaLR(o, [lambda e: 0.9 ** e,
                                                      lambda e: 1.0 / (1 + e)]),
                             6, None, False),
        "multistep": (lambda: two_groups(torch.optim.SGD, [0.1, 0.3]),
                      lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.5),
                      10, None, False),
        "exponential": (lambda: two_groups(torch.optim.Adam, [0.01]),
                        lambda o: S.ExponentialLR(o, gamma=0.9), 8, None, False),
        "cosine": (lambda: two_groups(torch.optim.SGD, [0.1, 0.02]),
                   lambda o: S.CosineAnnealingLR(o, T_max=4, eta_min=0.001),
                   14, None, False),
        "cosine_eta0": (lambda: two_groups(torch.optim.SGD, [0.5]),
                        lambda o: S.CosineAnnealingLR(o, T_max=3), 10, None, False),
        "plateau_min_rel": (lambda: two_groups(torch.optim.SGD, [0.1]),
                            lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=2,
                                                          cooldown=1, min_lr=0.01),
                            len(plateau_metrics), plateau_metrics, False),
        "plateau_max_abs": (lambda: two_groups(torch.optim.SGD, [0.1, 0.05]),
                            lambda o: S.ReduceLROnPlateau(o, mode="max", factor=0.3,
                                                          patience=1, threshold=0.1,
                                                          threshold_mode="abs",
                                                          min_lr=[0.001, 0.02]),
                            len(accuracy), accuracy, False),
        "onecycle_cos_sgd": (lambda: two_groups(torch.optim.SGD, [0.1], momentum=0.9),
                             lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=10),
                             10, None, True),
        "onecycle_linear_three_phase_adam": (
            lambda: two_groups(torch.optim.Adam, [0.01, 0.01]),
            lambda o: S.OneCycleLR(o, max_lr=[0.01, 0.02], epochs=3, steps_per_epoch=4,
                                   pct_start=0.25, anneal_strategy="linear",
                                   three_phase=True, div_factor=10.0,
                                   final_div_factor=100.0, base_momentum=0.8,
                                   max_momentum=0.9),
            12, None, True),
        "onecycle_no_momentum_adagrad": (
            lambda: two_groups(torch.optim.Adagrad, [0.01]),
            lambda o: S.OneCycleLR(o, max_lr=0.2, total_steps=7, pct_start=0.4,
                                   cycle_momentum=False),
            7, None, False),
    }


def write_all(outdir):
    g = GoldenFile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make_opt, make_sched, steps, metrics, momentum) in cases().items():
            opt = make_opt()
            sched = make_sched(opt)
            lrs = [[group["lr"] for group in opt.param_groups]]
            moms = [[momentum_of(group) for group in opt.param_groups]] if momentum else []
            for s in range(steps):
                opt.step()
                if metrics is None:
                    sched.step()
                else:
                    sched.step(metrics[s])
                lrs.append([group["lr"] for group in opt.param_groups])
                if momentum:
                    moms.append([momentum_of(group) for group in opt.param_groups])
            g.add(f"{name}.lr", torch.tensor(lrs, dtype=torch.float64))
            if momentum:
                g.add(f"{name}.momentum", torch.tensor(moms, dtype=torch.float64))
            if metrics is not None:
                g.add(f"{name}.metrics", torch.tensor(metrics, dtype=torch.float64))
    g.write(outdir, "lr_schedulers.txt")
