"""The normalisation, pooling, convolution and resampling layers of issue 22
in PyTorch: Conv1d, MaxPool1d, AvgPool1d, AdaptiveAvgPool2d,
AdaptiveMaxPool2d, GroupNorm, InstanceNorm2d, Upsample / interpolate.

norms_pooling_<dtype>.txt holds single-op cases, named as in ops.py:
  c.<input>        an input (float64 values rounded to the file's dtype)
  c.out, c.out1    the output; out1: max pooling's indices, or
                   instance_norm's updated running mean (out2: variance)
  c.grad_out       the upstream gradient given to backward from c.out
  c.grad.<input>   the gradient of that input
and two small models whose parameters tandem copies:
  <m>.x, <m>.grad_out, <m>.<key> (state_dict), <m>.out, <m>.grad.x,
  <m>.grad.<key> (parameters), <m>.after.<key> (buffers after the forward)
for m = net2d (Conv2d, GroupNorm, ReLU, Upsample bilinear, InstanceNorm2d
with running statistics, AdaptiveMaxPool2d, AdaptiveAvgPool2d(1), Flatten,
Linear) and net1d (Conv1d, MaxPool1d, Conv1d with dilation and groups,
AvgPool1d).
"""

import zlib

import torch
import torch.nn.functional as F

from golden import GoldenFile


def randn(name, *shape, scale=1.0):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen) * scale


def positive(name, *shape):
    return randn(name, *shape).abs() + 0.5


def define_cases():
    """name -> (fn, inputs, names of the inputs to differentiate)."""
    cases = {}

    def case(name, fn, inputs, grads=None):
        cases[name] = (fn, inputs, list(inputs) if grads is None else grads)

    def x(name, *shape):
        return {"x": randn(name + ".x", *shape)}

    def conv(name, x_shape, w_shape, bias=True, **kwargs):
        inputs = {"input": randn(name + ".x", *x_shape),
                  "weight": randn(name + ".w", *w_shape, scale=0.5)}
        if bias:
            inputs["bias"] = randn(name + ".b", w_shape[0])
        case(name, lambda **t: F.conv1d(**t, **kwargs), inputs)

    conv("conv1d", (2, 4, 9), (6, 4, 3))
    conv("conv1d_stride_padding_groups", (2, 4, 9), (6, 2, 3), stride=2, padding=1,
         groups=2)
    conv("conv1d_dilation_nobias", (2, 3, 10), (5, 3, 3), bias=False, padding=2,
         dilation=2)
    conv("conv1d_unbatched", (3, 7), (2, 3, 4), stride=3)

    case("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True),
         x("max_pool1d", 2, 3, 9))
    case("max_pool1d_dilation_ceil_mode",
         lambda x: F.max_pool1d(x, 2, 2, 0, dilation=2, ceil_mode=True,
                                return_indices=True),
         x("max_pool1d_dilation_ceil_mode", 2, 3, 8))
    case("max_pool1d_unbatched", lambda x: F.max_pool1d(x, 2, return_indices=True),
         x("max_pool1d_unbatched", 3, 7))
    case("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1), x("avg_pool1d", 2, 3, 8))
    case("avg_pool1d_exclude_pad_ceil_mode",
         lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
         x("avg_pool1d_exclude_pad_ceil_mode", 2, 2, 8))

    for size, shape, tag in [(1, (2, 3, 5, 4), "global"), ((3, 4), (2, 2, 5, 7), "uneven"),
                             ((3, 2), (2, 6, 4), "divisible_unbatched"),
                             ((4, 3), (1, 2, 3, 2), "upsampling"),
                             ((2, 5), (2, 2, 7, 11), "mixed")]:
        name = "adaptive_avg_pool2d_" + tag
        case(name, lambda x, size=size: F.adaptive_avg_pool2d(x, size), x(name, *shape))
        name = "adaptive_max_pool2d_" + tag
        case(name,
             lambda x, size=size: F.adaptive_max_pool2d(x, size, return_indices=True),
             x(name, *shape))

    case("group_norm",
         lambda x, weight, bias: F.group_norm(x, 3, weight, bias),
         {"x": randn("group_norm.x", 3, 6, 4), "weight": randn("group_norm.w", 6),
          "bias": randn("group_norm.b", 6)})
    case("group_norm_no_affine_4d", lambda x: F.group_norm(x, 2),
         x("group_norm_no_affine_4d", 2, 4, 3, 3))
    case("group_norm_eps_one_group", lambda x: F.group_norm(x, 1, eps=0.1),
         x("group_norm_eps_one_group", 2, 3, 5))

    case("instance_norm_affine",
         lambda x, weight, bias: F.instance_norm(x, weight=weight, bias=bias),
         {"x": randn("instance_norm_affine.x", 2, 3, 3, 4),
          "weight": randn("instance_norm_affine.w", 3),
          "bias": randn("instance_norm_affine.b", 3)})

    def instance_with_stats(x, running_mean, running_var):
        mean, var = running_mean.detach().clone(), running_var.detach().clone()
        out = F.instance_norm(x, mean, var, momentum=0.3, eps=1e-3)
        return out, mean, var

    case("instance_norm_running_stats", instance_with_stats,
         {"x": randn("instance_norm_running_stats.x", 3, 2, 4, 3),
          "running_mean": randn("instance_norm_running_stats.m", 2),
          "running_var": positive("instance_norm_running_stats.v", 2)}, ["x"])
    case("instance_norm_eval",
         lambda x, running_mean, running_var: F.instance_norm(
             x, running_mean, running_var, use_input_stats=False),
         {"x": randn("instance_norm_eval.x", 2, 3, 2, 2),
          "running_mean": randn("instance_norm_eval.m", 3),
          "running_var": positive("instance_norm_eval.v", 3)}, ["x"])

    interp = [("nearest_size", dict(size=(5, 9)), (2, 3, 3, 4)),
              ("nearest_scale", dict(scale_factor=(2.5, 2.0)), (1, 2, 3, 3)),
              ("nearest_scale_down", dict(scale_factor=0.6), (1, 2, 7, 6)),
              ("nearest_double", dict(scale_factor=2), (1, 2, 3, 3)),
              ("bilinear_size", dict(size=(5, 7), mode="bilinear", align_corners=False),
               (2, 2, 3, 4)),
              ("bilinear_align_corners",
               dict(size=(6, 7), mode="bilinear", align_corners=True), (1, 2, 3, 4)),
              ("bilinear_scale", dict(scale_factor=(1.5, 2.5), mode="bilinear",
                                      align_corners=False), (1, 2, 4, 3)),
              ("bilinear_scale_down", dict(scale_factor=(0.75, 0.5), mode="bilinear",
                                           align_corners=False), (1, 2, 6, 5)),
              ("bilinear_recompute", dict(scale_factor=1.7, mode="bilinear",
                                          align_corners=False,
                                          recompute_scale_factor=True), (1, 1, 3, 5))]
    for tag, kwargs, shape in interp:
        name = "interpolate_" + tag
        case(name, lambda x, kwargs=kwargs: F.interpolate(x, **kwargs), x(name, *shape))
    return cases


def net2d():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.GroupNorm(2, 4), torch.nn.ReLU(),
        torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
        torch.nn.AdaptiveMaxPool2d((3, 5)), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(4, 2))


def net1d():
    return torch.nn.Sequential(
        torch.nn.Conv1d(3, 4, 3, padding=1), torch.nn.MaxPool1d(2), torch.nn.ReLU(),
        torch.nn.Conv1d(4, 6, 3, dilation=2, groups=2), torch.nn.AvgPool1d(2))


def add_model(g, name, model, x_shape, dtype):
    torch.manual_seed(0)
    model = model.to(dtype)
    with torch.no_grad():
        for key, param in model.named_parameters():
            if key.endswith("weight") and param.dim() == 1:  # norms: not just 1s
                param.copy_(randn(f"{name}.{key}", *param.shape) * 0.2 + 1)
            elif key.endswith("bias") and param.dim() == 1:
                param.copy_(randn(f"{name}.{key}", *param.shape) * 0.2)
    for key, value in model.state_dict().items():
        g.add(f"{name}.{key}", value)
    x = randn(name + ".x", *x_shape).to(dtype).requires_grad_()
    out = model(x)
    grad_out = randn(name + ".grad_out", *out.shape).to(dtype)
    out.backward(grad_out)
    g.add(f"{name}.x", x)
    g.add(f"{name}.grad_out", grad_out)
    g.add(f"{name}.out", out)
    g.add(f"{name}.grad.x", x.grad)
    for key, param in model.named_parameters():
        g.add(f"{name}.grad.{key}", param.grad)
    for key, buffer in model.named_buffers():
        g.add(f"{name}.after.{key}", buffer)


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    for name, (fn, inputs, grads) in define_cases().items():
        tensors = {}
        for key, value in inputs.items():
            t = value.to(dtype)
            tensors[key] = t.requires_grad_() if key in grads else t
            g.add(f"{name}.{key}", t)
        outputs = fn(**tensors)
        outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
        out = outputs[0]
        grad_out = randn(name + ".grad_out", *out.shape).to(dtype)
        out.backward(grad_out)
        g.add(f"{name}.out", out)
        for i, extra in enumerate(outputs[1:], start=1):
            g.add(f"{name}.out{i}", extra)
        g.add(f"{name}.grad_out", grad_out)
        for key in grads:
            g.add(f"{name}.grad.{key}", tensors[key].grad)
    add_model(g, "net2d", net2d(), (2, 3, 5, 6), dtype)
    add_model(g, "net1d", net1d(), (2, 3, 16), dtype)
    g.write(outdir, f"norms_pooling_{dtype_name}.txt")
