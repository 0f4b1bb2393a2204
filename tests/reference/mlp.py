"""The 2-layer MLP reference: one forward/backward, and 5 training steps per
optimizer configuration.

Weights and data are made once in float64 from fixed seeds; the float32
references start from the same values rounded to float32.
"""

import torch
import torch.nn.functional as F

from golden import GoldenFile

PARAMS = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
STEPS = 5

# name -> (torch.optim class, hyper-parameters). The hyper-parameters are
# written into each file as "hp.<name>" so the C++ side reads them from there.
OPTIMIZERS = {
    "sgd": (torch.optim.SGD, dict(lr=0.1)),
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    "sgd_nesterov": (torch.optim.SGD,
                     dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "sgd_dampening": (torch.optim.SGD,
                      dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.05)),
    "adam": (torch.optim.Adam, dict(lr=0.01)),
    "adam_weight_decay": (torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    "adam_amsgrad": (torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), amsgrad=True)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    "adamw_amsgrad": (torch.optim.AdamW,
                      dict(lr=0.02, betas=(0.85, 0.995), eps=1e-6, amsgrad=True)),
    "rmsprop": (torch.optim.RMSprop, dict(lr=0.01)),
    "rmsprop_weight_decay": (torch.optim.RMSprop,
                             dict(lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    "rmsprop_momentum": (torch.optim.RMSprop, dict(lr=0.01, momentum=0.9)),
    "rmsprop_centered": (torch.optim.RMSprop,
                         dict(lr=0.01, alpha=0.95, momentum=0.5, centered=True,
                              weight_decay=0.01)),
    "adagrad": (torch.optim.Adagrad, dict(lr=0.1)),
    "adagrad_lr_decay": (torch.optim.Adagrad,
                         dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, eps=1e-6)),
    "adagrad_initial_accumulator": (torch.optim.Adagrad,
                                    dict(lr=0.05, initial_accumulator_value=0.5)),
}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8, dtype=torch.float64)
        self.fc2 = torch.nn.Linear(8, 3, dtype=torch.float64)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_problem():
    """The float64 starting point: (model weights, inputs, targets)."""
    torch.manual_seed(1234)
    model = Mlp()
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    target = torch.tensor([0, 2, 1, 2, 0])
    return weights, x, target


def make_model(weights, dtype):
    model = Mlp().to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in weights.items()})
    return model


def write_forward_backward(outdir, dtype, dtype_name):
    weights, x, target = make_problem()
    model = make_model(weights, dtype)
    x = x.to(dtype).requires_grad_()
    logits = model(x)
    loss = F.cross_entropy(logits, target)
    loss.backward()

    g = GoldenFile()
    g.add("x", x)
    g.add("target", target)
    for name, p in model.named_parameters():
        g.add(name, p)
    g.add("logits", logits)
    g.add("loss", loss)
    g.add("grad.x", x.grad)
    for name, p in model.named_parameters():
        g.add("grad." + name, p.grad)
    g.write(outdir, f"mlp_{dtype_name}.txt")


def write_training(outdir, dtype, dtype_name, opt_name):
    optimizer_class, hp = OPTIMIZERS[opt_name]
    weights, x, target = make_problem()
    model = make_model(weights, dtype)
    x = x.to(dtype)
    optimizer = optimizer_class(model.parameters(), foreach=False, **hp)

    g = GoldenFile()
    g.add("x", x)
    g.add("target", target)
    for name, p in model.named_parameters():
        g.add(name, p)
    for key, value in hp.items():
        if key == "betas":
            g.add("hp.beta1", torch.tensor(value[0], dtype=torch.float64))
            g.add("hp.beta2", torch.tensor(value[1], dtype=torch.float64))
        else:
            g.add("hp." + key, torch.tensor(float(value), dtype=torch.float64))
    params = dict(model.named_parameters())
    for step in range(1, STEPS + 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        g.add(f"step{step}.loss", loss)
        for name in PARAMS:
            g.add(f"step{step}.{name}", params[name])
    g.write(outdir, f"optim_{opt_name}_{dtype_name}.txt")


def write_all(outdir, dtype, dtype_name):
    write_forward_backward(outdir, dtype, dtype_name)
    for opt_name in OPTIMIZERS:
        write_training(outdir, dtype, dtype_name, opt_name)
