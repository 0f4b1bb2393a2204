"""Single-op references: for each case, its inputs, outputs and the
gradients of its floating-point inputs.

Names in ops_<dtype>.txt, for a case "c":
  c.<input>        an input (float inputs in the file's dtype; indices int64)
  c.out, c.out1    the outputs (out1: the indices of max/min over a dim or of
                   max_pool2d; out1, out2: batch_norm's updated running stats)
  c.grad_out       the upstream gradient given to backward from c.out
  c.grad.<input>   the gradient of that input

Inputs come from a generator seeded by the case name (so adding a case
changes no other), in float64, then rounded to the file's dtype.
"""

import zlib

import torch
import torch.nn.functional as F

import conv_transpose
from golden import GoldenFile

TARGET = torch.tensor([0, 3, 1, 2, 3, 1])
CLASS_WEIGHT = [0.5, 2.0, 1.0, 1.5]
INDICES = torch.tensor([[0, 2, 4, 2], [6, 1, 2, 0]])


def randn(case, *shape, scale=1.0):
    gen = torch.Generator().manual_seed(zlib.crc32(case.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen) * scale


def define_cases():
    """name -> (function of the inputs, {input name: float64 or int64 tensor},
    names of the inputs that get gradients)."""
    cases = {}

    def case(name, fn, inputs, grads):
        cases[name] = (fn, inputs, grads)

    def x(name, *shape, scale=1.0):
        return {"x": randn(name, *shape, scale=scale)}

    case("linear", F.linear,
         {"input": randn("linear.x", 4, 5), "weight": randn("linear.w", 3, 5),
          "bias": randn("linear.b", 3)}, ["input", "weight", "bias"])
    case("linear_nobias", F.linear,
         {"input": randn("linear_nobias.x", 4, 5),
          "weight": randn("linear_nobias.w", 3, 5)},
         ["input", "weight"])
    case("linear_3d", F.linear,
         {"input": randn("linear_3d.x", 2, 3, 5), "weight": randn("linear_3d.w", 4, 5),
          "bias": randn("linear_3d.b", 4)}, ["input", "weight", "bias"])

    case("relu", lambda x: F.relu(x), x("relu", 4, 5), ["x"])
    case("gelu", lambda x: F.gelu(x), x("gelu", 4, 5, scale=2.0), ["x"])
    case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
         x("gelu_tanh", 4, 5, scale=2.0), ["x"])
    case("tanh", lambda x: torch.tanh(x), x("tanh", 4, 5, scale=2.0), ["x"])
    case("sigmoid", lambda x: torch.sigmoid(x), x("sigmoid", 4, 5, scale=2.0), ["x"])
    case("softmax_dim1", lambda x: F.softmax(x, 1), x("softmax_dim1", 4, 5, scale=3.0),
         ["x"])
    case("softmax_dim0", lambda x: F.softmax(x, 0), x("softmax_dim0", 4, 5, scale=3.0),
         ["x"])
    case("softmax_3d_dim_neg1", lambda x: F.softmax(x, -1),
         x("softmax_3d_dim_neg1", 2, 3, 4, scale=3.0), ["x"])
    case("log_softmax_dim1", lambda x: F.log_softmax(x, 1),
         x("log_softmax_dim1", 4, 5, scale=3.0), ["x"])
    case("log_softmax_dim0", lambda x: F.log_softmax(x, 0),
         x("log_softmax_dim0", 4, 5, scale=3.0), ["x"])

    def ce(name, **kwargs):
        inputs = {"input": randn(name, 6, 4, scale=2.0), "target": TARGET}
        if "weight" in kwargs:
            inputs["weight"] = torch.tensor(kwargs.pop("weight"), dtype=torch.float64)
        case(name, lambda **t: F.cross_entropy(**t, **kwargs), inputs, ["input"])

    ce("cross_entropy")
    ce("cross_entropy_sum", reduction="sum")
    ce("cross_entropy_none", reduction="none")
    ce("cross_entropy_weight", weight=CLASS_WEIGHT)
    ce("cross_entropy_ignore_index", ignore_index=1)
    ce("cross_entropy_weight_ignore_index", weight=CLASS_WEIGHT, ignore_index=3)
    ce("cross_entropy_label_smoothing", label_smoothing=0.1)
    ce("cross_entropy_label_smoothing_sum", label_smoothing=0.2, reduction="sum")
    ce("cross_entropy_label_smoothing_none", label_smoothing=0.2, reduction="none")
    ce("cross_entropy_all", weight=CLASS_WEIGHT, ignore_index=1, label_smoothing=0.15)

    def nll(name, **kwargs):
        log_probs = F.log_softmax(randn(name, 6, 4, scale=2.0), 1)
        inputs = {"input": log_probs, "target": TARGET}
        if "weight" in kwargs:
            inputs["weight"] = torch.tensor(kwargs.pop("weight"), dtype=torch.float64)
        case(name, lambda **t: F.nll_loss(**t, **kwargs), inputs, ["input"])

    nll("nll_loss")
    nll("nll_loss_sum", reduction="sum")
    nll("nll_loss_none", reduction="none")
    nll("nll_loss_weight_ignore_index", weight=CLASS_WEIGHT, ignore_index=1)
    nll("nll_loss_weight_sum", weight=CLASS_WEIGHT, reduction="sum")

    for reduction in ["mean", "sum", "none"]:
        name = "mse_loss" if reduction == "mean" else "mse_loss_" + reduction
        case(name,
             lambda input, target, r=reduction: F.mse_loss(input, target, reduction=r),
             {"input": randn(name + ".input", 3, 4),
              "target": randn(name + ".target", 3, 4)},
             ["input", "target"])

    def act(name, fn, scale=2.0, shape=(4, 5)):
        case(name, fn, x(name, *shape, scale=scale), ["x"])

    act("leaky_relu", lambda x: F.leaky_relu(x))
    act("leaky_relu_slope", lambda x: F.leaky_relu(x, 0.2))
    act("elu", lambda x: F.elu(x))
    act("elu_alpha", lambda x: F.elu(x, alpha=0.7))
    act("selu", lambda x: F.selu(x))
    act("silu", lambda x: F.silu(x), scale=3.0)
    act("mish", lambda x: F.mish(x), scale=3.0)
    act("softplus", lambda x: F.softplus(x), scale=3.0)
    act("softplus_beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        scale=3.0)
    act("hardtanh", lambda x: F.hardtanh(x))
    act("hardtanh_range", lambda x: F.hardtanh(x, -0.5, 1.5))
    act("logsigmoid", lambda x: F.logsigmoid(x), scale=3.0)
    # Beyond exp's float32 range (|x| > 88): PyTorch's log_sigmoid is stable,
    # as tandem's is. (Its softplus is not: log1p(exp(x)) is inf there in
    # float32 when the threshold is raised, where tandem's stays x.)
    act("logsigmoid_large", lambda x: F.logsigmoid(x), scale=60.0)
    act("softsign", lambda x: F.softsign(x))
    case("prelu", F.prelu,
         {"input": randn("prelu.x", 2, 3, 4, scale=2.0),
          "weight": randn("prelu.w", 3, scale=0.5)}, ["input", "weight"])
    case("prelu_shared", F.prelu,
         {"input": randn("prelu_shared.x", 4, 5, scale=2.0),
          "weight": torch.tensor([0.25], dtype=torch.float64)}, ["input", "weight"])

    def probabilities(name, *shape):
        return torch.sigmoid(randn(name, *shape, scale=2.0))

    def bce(name, weight=False, **kwargs):
        inputs = {"input": probabilities(name + ".x", 4, 3),
                  "target": probabilities(name + ".y", 4, 3)}
        if weight:
            inputs["weight"] = randn(name + ".w", 3).abs() + 0.5
        # PyTorch 1.13 has no gradient for binary_cross_entropy's target.
        case(name, lambda **t: F.binary_cross_entropy(**t, **kwargs), inputs, ["input"])

    bce("bce")
    bce("bce_weight_sum", weight=True, reduction="sum")
    bce("bce_none", reduction="none")

    def bce_logits(name, weight=False, pos_weight=False, scale=3.0, **kwargs):
        inputs = {"input": randn(name + ".x", 4, 3, scale=scale),
                  "target": probabilities(name + ".y", 4, 3)}
        if weight:
            inputs["weight"] = randn(name + ".w", 4, 1).abs() + 0.5
        if pos_weight:
            inputs["pos_weight"] = randn(name + ".pw", 3).abs() + 0.5
        case(name, lambda **t: F.binary_cross_entropy_with_logits(**t, **kwargs), inputs,
             ["input", "target"])

    bce_logits("bce_with_logits")
    bce_logits("bce_with_logits_pos_weight", pos_weight=True)
    bce_logits("bce_with_logits_weights_none", weight=True, pos_weight=True,
               reduction="none")
    bce_logits("bce_with_logits_large", pos_weight=True, scale=60.0, reduction="sum")

    def pointwise(name, fn):
        case(name, fn, {"input": randn(name + ".input", 3, 4),
                        "target": randn(name + ".target", 3, 4)}, ["input", "target"])

    pointwise("l1_loss", lambda input, target: F.l1_loss(input, target))
    pointwise("l1_loss_sum", lambda input, target: F.l1_loss(input, target, reduction="sum"))
    pointwise("l1_loss_none",
              lambda input, target: F.l1_loss(input, target, reduction="none"))
    pointwise("smooth_l1_loss", lambda input, target: F.smooth_l1_loss(input, target))
    pointwise("smooth_l1_loss_beta_sum",
              lambda input, target: F.smooth_l1_loss(input, target, reduction="sum",
                                                     beta=0.5))
    pointwise("smooth_l1_loss_beta0_none",
              lambda input, target: F.smooth_l1_loss(input, target, reduction="none",
                                                     beta=0.0))
    pointwise("huber_loss", lambda input, target: F.huber_loss(input, target))
    pointwise("huber_loss_delta_sum",
              lambda input, target: F.huber_loss(input, target, reduction="sum",
                                                 delta=0.3))

    def kl(name, zeros=False, log_target=False, **kwargs):
        log_q = F.log_softmax(randn(name + ".x", 4, 5, scale=2.0), 1)
        p = F.softmax(randn(name + ".y", 4, 5, scale=2.0), 1)
        if zeros:
            p[0, 1] = 0.0
            p[2, 3] = 0.0
        target = p.log() if log_target else p
        case(name, lambda **t: F.kl_div(**t, log_target=log_target, **kwargs),
             {"input": log_q, "target": target},
             ["input"] if zeros else ["input", "target"])

    kl("kl_div", reduction="mean")
    kl("kl_div_batchmean", reduction="batchmean")
    kl("kl_div_sum", reduction="sum")
    kl("kl_div_none", reduction="none")
    kl("kl_div_log_target_batchmean", log_target=True, reduction="batchmean")
    kl("kl_div_zero_target_sum", zeros=True, reduction="sum")

    LABELS = torch.tensor([1.0, -1.0, 1.0, -1.0, -1.0], dtype=torch.float64)

    def cosine(name, **kwargs):
        case(name, lambda **t: F.cosine_embedding_loss(**t, **kwargs),
             {"input1": randn(name + ".a", 5, 4), "input2": randn(name + ".b", 5, 4),
              "target": LABELS}, ["input1", "input2"])

    cosine("cosine_embedding_loss")
    cosine("cosine_embedding_loss_margin_sum", margin=-0.2, reduction="sum")
    cosine("cosine_embedding_loss_none", margin=0.1, reduction="none")

    def ranking(name, **kwargs):
        case(name, lambda **t: F.margin_ranking_loss(**t, **kwargs),
             {"input1": randn(name + ".a", 5), "input2": randn(name + ".b", 5),
              "target": LABELS}, ["input1", "input2"])

    ranking("margin_ranking_loss")
    ranking("margin_ranking_loss_margin_sum", margin=0.5, reduction="sum")
    ranking("margin_ranking_loss_none", margin=0.2, reduction="none")

    case("embedding", F.embedding, {"input": INDICES, "weight": randn("embedding", 7, 3)},
         ["weight"])
    case("embedding_padding_idx", lambda input, weight: F.embedding(input, weight, 2),
         {"input": INDICES, "weight": randn("embedding_padding_idx", 7, 3)}, ["weight"])

    def reduction(name, fn):
        case(name, fn, x(name, 3, 4, 5), ["x"])

    reduction("sum_all", lambda x: x.sum())
    reduction("sum_dim1", lambda x: x.sum(1))
    reduction("sum_dims02_keepdim", lambda x: x.sum((0, 2), keepdim=True))
    reduction("mean_all", lambda x: x.mean())
    reduction("mean_dim_neg1", lambda x: x.mean(-1))
    reduction("mean_dims01_keepdim", lambda x: x.mean((0, 1), keepdim=True))
    reduction("max_all", lambda x: x.max())
    reduction("max_dim1", lambda x: x.max(1))
    reduction("max_dim2_keepdim", lambda x: x.max(2, keepdim=True))
    reduction("min_all", lambda x: x.min())
    reduction("min_dim0", lambda x: x.min(0))

    def matmul(name, a_shape, b_shape):
        case(name, lambda a, b: torch.matmul(a, b), {"a": randn(name + ".a", *a_shape),
                                  "b": randn(name + ".b", *b_shape)}, ["a", "b"])

    matmul("matmul_mm", (3, 4), (4, 2))
    matmul("matmul_dot", (4,), (4,))
    matmul("matmul_vec_mat", (4,), (4, 3))
    matmul("matmul_mat_vec", (3, 4), (4,))
    matmul("matmul_batch_vec", (2, 3, 4), (4,))
    matmul("matmul_vec_batch", (4,), (2, 4, 3))
    matmul("matmul_bmm", (2, 3, 4), (2, 4, 5))
    matmul("matmul_broadcast", (2, 1, 3, 4), (5, 4, 2))
    matmul("matmul_broadcast_mat", (2, 3, 4), (4, 5))

    def conv(name, x_shape, w_shape, bias=True, **kwargs):
        inputs = {"input": randn(name + ".x", *x_shape),
                  "weight": randn(name + ".w", *w_shape, scale=0.5)}
        if bias:
            inputs["bias"] = randn(name + ".b", w_shape[0])
        case(name, lambda **t: F.conv2d(**t, **kwargs), inputs, list(inputs))

    conv("conv2d", (2, 3, 6, 5), (4, 3, 3, 3))
    conv("conv2d_stride_padding", (2, 2, 7, 6), (3, 2, 3, 2), stride=(2, 1), padding=(1, 0))
    conv("conv2d_dilation", (1, 2, 9, 8), (2, 2, 3, 3), padding=2, dilation=(2, 3))
    conv("conv2d_groups", (2, 4, 5, 5), (6, 2, 3, 3), padding=1, groups=2)
    conv("conv2d_depthwise", (2, 3, 6, 6), (3, 1, 3, 3), bias=False, stride=2, padding=1,
         groups=3)
    conv("conv2d_pointwise", (2, 3, 4, 4), (5, 3, 1, 1))
    conv("conv2d_unbatched", (3, 6, 6), (4, 3, 3, 3), padding=1)
    conv_transpose.add_op_cases(case)

    def pool(name, fn, *shape):
        case(name, fn, x(name, *shape), ["x"])

    pool("max_pool2d", lambda x: F.max_pool2d(x, 2), 2, 3, 6, 6)
    pool("max_pool2d_stride_padding_indices",
         lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), 2, 2, 7, 6)
    pool("max_pool2d_dilation_ceil_mode",
         lambda x: F.max_pool2d(x, (3, 2), 2, 1, (2, 1), ceil_mode=True), 1, 2, 8, 7)
    pool("max_pool2d_unbatched", lambda x: F.max_pool2d(x, 2), 2, 5, 5)
    pool("avg_pool2d", lambda x: F.avg_pool2d(x, 2), 2, 3, 6, 6)
    pool("avg_pool2d_padding_exclude_pad",
         lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), 2, 2, 7, 6)
    pool("avg_pool2d_ceil_mode_include_pad",
         lambda x: F.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True), 1, 2, 7, 6)
    pool("avg_pool2d_divisor_override",
         lambda x: F.avg_pool2d(x, 2, 1, divisor_override=3), 1, 2, 5, 5)

    def batch_norm(name, shape, training, affine=True, momentum=0.1):
        channels = shape[1]
        inputs = {"input": randn(name + ".x", *shape, scale=2.0) + 0.5,
                  "running_mean": randn(name + ".mean", channels),
                  "running_var": randn(name + ".var", channels).abs() + 0.5}
        if affine:
            inputs["weight"] = randn(name + ".w", channels)
            inputs["bias"] = randn(name + ".b", channels)

        def fn(input, running_mean, running_var, **affine_params):
            # The op updates the statistics in place: out1 and out2 are the
            # updated copies, the inputs stay as written.
            mean, var = running_mean.clone(), running_var.clone()
            out = F.batch_norm(input, mean, var, training=training, momentum=momentum,
                               **affine_params)
            return out, mean, var

        grads = ["input"] + (["weight", "bias"] if affine else [])
        case(name, fn, inputs, grads)

    batch_norm("batch_norm_train", (4, 3, 3, 3), training=True)
    batch_norm("batch_norm_train_2d_momentum", (6, 4), training=True, momentum=0.3)
    batch_norm("batch_norm_train_no_affine", (3, 2, 5), training=True, affine=False)
    batch_norm("batch_norm_eval", (4, 3, 2, 2), training=False)

    def layer_norm(name, shape, normalized_shape, affine=True, eps=1e-5):
        inputs = {"x": randn(name + ".x", *shape, scale=2.0)}
        if affine:
            inputs["weight"] = randn(name + ".w", *normalized_shape)
            inputs["bias"] = randn(name + ".b", *normalized_shape)
        case(name, lambda x, **wb: F.layer_norm(x, normalized_shape, eps=eps, **wb), inputs,
             list(inputs))

    layer_norm("layer_norm_last_dim", (3, 5), (5,))
    layer_norm("layer_norm_last_two_dims", (2, 3, 4), (3, 4))
    layer_norm("layer_norm_no_affine", (4, 6), (6,), affine=False, eps=1e-3)
    return cases


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    for name, (fn, inputs, grads) in define_cases().items():
        tensors = {}
        for key, value in inputs.items():
            t = value.to(dtype) if value.is_floating_point() else value.clone()
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
    g.write(outdir, f"ops_{dtype_name}.txt")
