"""MultiheadAttention and the transformer layers in PyTorch: outputs,
attention weights and every gradient for fixed parameters, inputs, masks and
upstream gradients. Dropout is 0 and the modules stay in training mode, so
no fast path runs and the results are exact up to rounding.

Names in attention_<dtype>.txt, for a case "c" of CASES:
  c.param.<name>       every parameter under PyTorch's name
  c.in.<x>             the float inputs (query, key, value, src, tgt, memory)
  c.mask.<m>           masks: bool ones as int64 0/1, float ones as they are;
                       a causal mask (generate_square_subsequent_mask) is not
                       stored (it holds -inf) but c.mask.<m>.isinf is
  c.gout.<k>, c.out.<k> the upstream gradient and the value of result k
                       (MultiheadAttention: output, then the weights)
  c.grad.in.<x>        the gradient of each input
  c.grad.param.<name>  the gradient of each parameter
"""

import zlib

import torch

from golden import GoldenFile

nn = torch.nn
E, H, L, S, N = 8, 2, 3, 4, 2  # embed dim, heads, target and source length, batch


def randn(name, *shape):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen)


def bool_mask(name, *shape):
    """About a third True, never in the last dim's first entry (so no row is
    all masked)."""
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    mask = torch.rand(tuple(shape), generator=gen) < 0.35
    mask[..., 0] = False
    return mask


def mha(**kw):
    return lambda: nn.MultiheadAttention(E, H, **kw)


def mha_call(inputs_of, mask_kw=(), **call_kw):
    """A MultiheadAttention forward: inputs_of maps the inputs dict to
    (query, key, value); mask_kw names the masks passed by keyword."""
    def call(m, x, masks):
        q, k, v = inputs_of(x)
        kw = {name: masks[name] for name in mask_kw}
        out, w = m(q, k, v, **kw, **call_kw)
        return [out] if w is None else [out, w]
    return call


def self_qkv(x):
    return x["x"], x["x"], x["x"]


def cross_qkv(x):
    return x["query"], x["key"], x["value"]


def mem_qkv(x):
    return x["query"], x["memory"], x["memory"]


def enc_layer(**kw):
    return lambda: nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0, **kw)


def dec_layer(**kw):
    return lambda: nn.TransformerDecoderLayer(E, H, dim_feedforward=16, dropout=0.0, **kw)


def call_with(*input_names, **mask_kw):
    """module(*inputs, keyword=mask...) with mask_kw mapping keyword -> mask."""
    def call(m, x, masks):
        kw = {k: masks[v] for k, v in mask_kw.items()}
        return [m(*[x[n] for n in input_names], **kw)]
    return call


SEQ = (L, N, E)
# name: (make module, {input: shape}, {mask: spec}, call). A mask spec is
# ("bool", shape), ("float", shape) or ("causal", size).
CASES = {
    "mha_self": (mha(), {"x": SEQ}, {}, mha_call(self_qkv)),
    "mha_cross_kdim_vdim": (
        mha(kdim=5, vdim=6), {"query": SEQ, "key": (S, N, 5), "value": (S, N, 6)}, {},
        mha_call(cross_qkv)),
    "mha_batch_first": (mha(batch_first=True), {"x": (N, L, E)}, {}, mha_call(self_qkv)),
    "mha_key_padding_mask": (
        mha(), {"query": SEQ, "key": (S, N, E), "value": (S, N, E)},
        {"key_padding_mask": ("bool", (N, S))},
        mha_call(cross_qkv, ["key_padding_mask"])),
    "mha_bool_attn_mask_per_head": (
        mha(), {"query": SEQ, "key": (S, N, E), "value": (S, N, E)},
        {"attn_mask": ("bool", (L, S))},
        mha_call(cross_qkv, ["attn_mask"], average_attn_weights=False)),
    "mha_float_attn_mask_3d": (
        mha(), {"query": SEQ, "key": (S, N, E), "value": (S, N, E)},
        {"attn_mask": ("float", (N * H, L, S))},
        mha_call(cross_qkv, ["attn_mask"])),
    "mha_causal": (mha(), {"x": SEQ}, {"attn_mask": ("causal", L)},
                   mha_call(self_qkv, ["attn_mask"])),
    "mha_bias_kv_zero_attn": (
        mha(add_bias_kv=True, add_zero_attn=True),
        {"query": SEQ, "key": (S, N, E), "value": (S, N, E)},
        {"key_padding_mask": ("bool", (N, S)), "attn_mask": ("bool", (L, S))},
        mha_call(cross_qkv, ["key_padding_mask", "attn_mask"], average_attn_weights=False)),
    "mha_no_bias": (mha(bias=False), {"x": SEQ}, {}, mha_call(self_qkv)),
    "mha_key_is_value": (
        mha(), {"query": SEQ, "memory": (S, N, E)},
        {"key_padding_mask": ("bool", (N, S))},
        mha_call(mem_qkv, ["key_padding_mask"])),
    "mha_unbatched": (
        mha(), {"query": (L, E), "key": (S, E), "value": (S, E)},
        {"key_padding_mask": ("bool", (S,)), "attn_mask": ("float", (L, S))},
        mha_call(cross_qkv, ["key_padding_mask", "attn_mask"])),
    "mha_float_key_padding_mask": (
        mha(batch_first=True), {"query": (N, L, E), "key": (N, S, E), "value": (N, S, E)},
        {"key_padding_mask": ("float", (N, S))},
        mha_call(cross_qkv, ["key_padding_mask"])),
    "mha_no_weights": (
        mha(), {"x": SEQ}, {}, mha_call(self_qkv, need_weights=False)),
    "encoder_layer_relu": (
        enc_layer(), {"src": (S, N, E)},
        {"src_mask": ("causal", S), "src_key_padding_mask": ("bool", (N, S))},
        call_with("src", src_mask="src_mask", src_key_padding_mask="src_key_padding_mask")),
    "encoder_layer_gelu_norm_first_batch_first": (
        enc_layer(activation="gelu", norm_first=True, batch_first=True), {"src": (N, S, E)},
        {"src_key_padding_mask": ("bool", (N, S))},
        call_with("src", src_key_padding_mask="src_key_padding_mask")),
    "encoder_stack_norm": (
        lambda: nn.TransformerEncoder(enc_layer()(), 2, norm=nn.LayerNorm(E)),
        {"src": (S, N, E)}, {"mask": ("bool", (S, S))},
        call_with("src", mask="mask")),
    "encoder_stack_norm_first_gelu": (
        lambda: nn.TransformerEncoder(enc_layer(activation="gelu", norm_first=True)(), 2),
        {"src": (S, N, E)}, {"src_key_padding_mask": ("bool", (N, S))},
        call_with("src", src_key_padding_mask="src_key_padding_mask")),
    "decoder_layer": (
        dec_layer(), {"tgt": SEQ, "memory": (S, N, E)},
        {"tgt_mask": ("causal", L), "memory_key_padding_mask": ("bool", (N, S))},
        call_with("tgt", "memory", tgt_mask="tgt_mask",
                  memory_key_padding_mask="memory_key_padding_mask")),
    "decoder_layer_gelu_norm_first_batch_first": (
        dec_layer(activation="gelu", norm_first=True, batch_first=True),
        {"tgt": (N, L, E), "memory": (N, S, E)},
        {"memory_mask": ("bool", (L, S)), "tgt_key_padding_mask": ("bool", (N, L))},
        call_with("tgt", "memory", memory_mask="memory_mask",
                  tgt_key_padding_mask="tgt_key_padding_mask")),
    "decoder_stack_norm": (
        lambda: nn.TransformerDecoder(dec_layer()(), 2, norm=nn.LayerNorm(E)),
        {"tgt": SEQ, "memory": (S, N, E)}, {"tgt_mask": ("causal", L)},
        call_with("tgt", "memory", tgt_mask="tgt_mask")),
    "transformer": (
        lambda: nn.Transformer(E, H, 2, 2, dim_feedforward=16, dropout=0.0),
        {"src": (S, N, E), "tgt": SEQ},
        {"tgt_mask": ("causal", L), "src_key_padding_mask": ("bool", (N, S)),
         "memory_key_padding_mask": ("bool", (N, S))},
        call_with("src", "tgt", tgt_mask="tgt_mask",
                  src_key_padding_mask="src_key_padding_mask",
                  memory_key_padding_mask="memory_key_padding_mask")),
    "transformer_batch_first_norm_first_gelu": (
        lambda: nn.Transformer(E, H, 1, 2, dim_feedforward=16, dropout=0.0,
                               activation="gelu", batch_first=True, norm_first=True),
        {"src": (N, S, E), "tgt": (N, L, E)}, {"tgt_mask": ("causal", L)},
        call_with("src", "tgt", tgt_mask="tgt_mask")),
}


def make_mask(g, key, spec, dtype):
    kind, shape = spec
    if kind == "causal":
        mask = nn.Transformer.generate_square_subsequent_mask(shape).to(dtype)
        g.add(key + ".isinf", torch.isinf(mask).to(torch.int64))
        return mask
    if kind == "bool":
        mask = bool_mask(key, *shape)
        g.add(key, mask.to(torch.int64))
        return mask
    mask = randn(key, *shape).to(dtype)
    g.add(key, mask)
    return mask


def write_case(g, name, make, input_shapes, mask_specs, call, dtype):
    torch.manual_seed(0)
    module = make().to(dtype)
    with torch.no_grad():
        for pname, p in module.named_parameters():
            p.copy_(randn(f"{name}.param.{pname}", *p.shape) * 0.5)
            g.add(f"{name}.param.{pname}", p)
    inputs = {}
    for x, shape in input_shapes.items():
        inputs[x] = randn(f"{name}.in.{x}", *shape).to(dtype).requires_grad_()
        g.add(f"{name}.in.{x}", inputs[x])
    masks = {m: make_mask(g, f"{name}.mask.{m}", spec, dtype) for m, spec in mask_specs.items()}
    outs = call(module, inputs, masks)
    loss = 0
    for k, out in enumerate(outs):
        gout = randn(f"{name}.gout.{k}", *out.shape).to(dtype)
        g.add(f"{name}.gout.{k}", gout)
        g.add(f"{name}.out.{k}", out)
        loss = loss + (out * gout).sum()
    loss.backward()
    for x, t in inputs.items():
        g.add(f"{name}.grad.in.{x}", t.grad)
    for pname, p in module.named_parameters():
        g.add(f"{name}.grad.param.{pname}", p.grad)


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    for name, (make, inputs, masks, call) in CASES.items():
        write_case(g, name, make, inputs, masks, call, dtype)
    g.write(outdir, f"attention_{dtype_name}.txt")
