"""`prelu8`: int8 PRELU with a slope of any shape (TFLite broadcasts alpha against the input),
where MLI's prelu kernel, a slope along one axis, cannot take it.

TFLite's int8 arithmetic (reference `BroadcastPrelu4DSlow`): with x = input - input zero point,
x >= 0 gives MultiplyByQuantizedMultiplier(x, m1, s1) (input scale / output scale), x < 0
gives MultiplyByQuantizedMultiplier(x * (alpha - alpha zero point), m2, s2) (input scale x alpha
scale / output scale); plus the output zero point, clamped to int8. The multipliers are
computed as Prepare() does (`prelu_params`). Shapes are aligned right; an operand's extent-1
dimension repeats its element through a zero stride, so the slope keeps its own shape.

`prelu16`: the same on a 16x8 model's int16 input and output (FX16 tensors, scales 2^-frac_bits,
zero point 0) with an int8 slope, clamped to int16, as TFLite's (and TFLite Micro's) int16 PRELU
(`BroadcastPrelu4DSlow<int16_t, int8_t>`). On FX16 scales the float32 and double multipliers
of LiteRT's and TFLite Micro's Prepare are equal (products and quotients of powers of two).
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference import fixedpoint as fp
from mlitool.mli import quant as Q
from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import ElType, Role
from mlitool.ops.common import fallback_checks as FB

CFG = ("in_zp", "alpha_zp", "out_zp", "pos_mult", "pos_shift", "neg_mult", "neg_shift")
f32 = np.float32

_PRELU = """\
/* Element strides of `in` along each dimension of `out` (shapes aligned right): 0 where `in`
 * has extent 1, so that its element repeats. */
static void @FN@_strides(const mli_tensor *in, const mli_tensor *out, uint32_t *s) {
    uint32_t d, lead = out->rank - in->rank;
    for (d = 0u; d < out->rank; d++) {
        s[d] = (d < lead || in->shape[d - lead] == 1u) ? 0u : (uint32_t)in->mem_stride[d - lead];
    }
}

@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *alpha, const @CFG@ *cfg,
                          mli_tensor *out) {
    const int8_t *a = @P@_in8(in);
    const int8_t *b = @P@_in8(alpha);
    int8_t *y = out->data.mem.pi8;
    uint32_t sa[MLI_MAX_RANK], sb[MLI_MAX_RANK];
    uint32_t i, d, n = @P@_count(out);
    @FN@_strides(in, out, sa);
    @FN@_strides(alpha, out, sb);
    for (i = 0u; i < n; i++) {
        uint32_t r = i, oa = 0u, ob = 0u;
        int32_t x, q;
        for (d = out->rank; d > 0u; d--) {
            uint32_t k = r % out->shape[d - 1u];
            r /= out->shape[d - 1u];
            oa += k * sa[d - 1u];
            ob += k * sb[d - 1u];
        }
        x = (int32_t)a[oa] - cfg->in_zp;
        if (x >= 0) {
            q = @P@_mbqm(x, cfg->pos_mult, cfg->pos_shift);
        } else {
            q = @P@_mbqm(x * ((int32_t)b[ob] - cfg->alpha_zp), cfg->neg_mult, cfg->neg_shift);
        }
        q += cfg->out_zp;
        y[@P@_offset(out, i)] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
    return MLI_STATUS_OK;
}
"""


def prelu_params(qi: tuple[float, int], qa: tuple[float, int], qo: tuple[float, int]) -> dict:
    """The config of int8 PRELU as TFLite's Prepare computes it (float32 scale arithmetic)."""
    si, sa, so = f32(qi[0]), f32(qa[0]), f32(qo[0])
    m1, s1 = fp.quantize_multiplier(np.float64(si / so))
    m2, s2 = fp.quantize_multiplier(np.float64(si * sa / so))
    return {
        "in_zp": int(qi[1]),
        "alpha_zp": int(qa[1]),
        "out_zp": int(qo[1]),
        "pos_mult": int(m1),
        "pos_shift": int(s1),
        "neg_mult": int(m2),
        "neg_shift": int(s2),
    }


def apply(p: dict, x: np.ndarray, alpha: np.ndarray, dtype=np.int8) -> np.ndarray:
    """The `dtype` result of config `p` on a `dtype` input and an int8 slope (broadcast as numpy
    does)."""
    x, alpha = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(alpha, np.int64))
    x = x - p["in_zp"]
    pos = fp.mul_by_quantized_multiplier(x, p["pos_mult"], p["pos_shift"])
    neg = fp.mul_by_quantized_multiplier(x * (alpha - p["alpha_zp"]), p["neg_mult"], p["neg_shift"])
    info = np.iinfo(dtype)
    return np.clip(np.where(x >= 0, pos, neg) + p["out_zp"], info.min, info.max).astype(dtype)


def _run(layer, model, xs, arith, dtype=np.int8) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    ins = []
    for name, x in zip(layer.inputs, xs):
        t = model.tensor(name)
        x = np.asarray(x)
        x = x[None] if t.role == Role.PARAM else x
        ins.append(x.reshape((x.shape[0],) + (1,) * (rank - len(t.shape)) + tuple(t.shape)))
    return apply(layer.cfg, *ins, dtype=dtype)


def _run16(layer, model, xs, arith) -> np.ndarray:
    return _run(layer, model, xs, arith, np.int16)


PRELU8 = register_kernel(
    FallbackKernel(
        name="prelu8",
        doc="int8 PRELU with a slope of any shape (broadcast), as TFLite",
        c_source=_PRELU,
        run=_run,
        cfg=CFG,
    )
)
_PRELU16 = (
    _PRELU.replace("const int8_t *a = @P@_in8(in);", "const int16_t *a = in->data.mem.pi16;")
    .replace("int8_t *y = out->data.mem.pi8;", "int16_t *y = out->data.mem.pi16;")
    .replace(
        "(int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q))",
        "(int16_t)(q < -32768 ? -32768 : (q > 32767 ? 32767 : q))",
    )
)
PRELU16 = register_kernel(
    FallbackKernel(
        name="prelu16",
        doc="int16 (16x8) PRELU with an int8 slope of any shape (broadcast), as TFLite",
        c_source=_PRELU16,
        run=_run16,
        cfg=CFG,
    )
)


def general_slope(g: ir.Graph, op: ir.Op) -> bool:
    """A slope MLI's prelu cannot take: computed at run time, or varying along several axes."""
    alpha = g.slot(op, "alpha")
    return alpha.data is None or sum(d > 1 for d in alpha.shape) > 1


def lower_prelu_general(b: Builder, op: ir.Op, fmt: str) -> None:
    """PRELU on `prelu8`: the input as SA8, the slope an SA8 constant in its own shape (aligned
    to the output's rank, leading ones dropped) or an SA8 activation (int16: `prelu16`)."""
    if b.g.tensors[op.inputs[0]].dtype == "int16":
        return _lower_prelu16(b, op)
    out_idx = op.outputs[0]
    rank = len(b.g.tensors[out_idx].shape)
    x = b.use(op, op.inputs[0], ElType.SA8)
    qi = FB.sa8_params(b, op, op.inputs[0])
    alpha, qa = _slope(b, op, op.inputs[1], rank)
    out = b.produce(out_idx, ElType.SA8)
    cfg = prelu_params(qi, qa, FB.sa8_params(b, op, out_idx))
    shape = list(b.g.tensors[op.inputs[1]].shape)
    note = f"PReLU slope {shape}: MLI's prelu takes one along one axis: fallback C (prelu8)"
    b.fallback(op, PRELU8, [x, alpha], [out.name], cfg=cfg, notes=[note])


def _lower_prelu16(b: Builder, op: ir.Op) -> None:
    """16x8 PRELU on `prelu16`: input and output FX16 (scales 2^-frac_bits, zero point 0), the
    int8 constant slope as stored."""
    out_idx = op.outputs[0]
    rank = len(b.g.tensors[out_idx].shape)
    x = b.use(op, op.inputs[0], ElType.FX16)
    out = b.produce(out_idx, ElType.FX16)
    alpha, qa = _slope(b, op, op.inputs[1], rank)
    qi, qo = (2.0 ** -b.tensors[x].frac_bits, 0), (2.0**-out.frac_bits, 0)
    cfg = prelu_params(qi, qa, qo)
    shape = list(b.g.tensors[op.inputs[1]].shape)
    note = f"int16 PReLU slope {shape}: fallback C (prelu16, TFLite's int16 arithmetic on FX16)"
    b.fallback(op, PRELU16, [x, alpha], [out.name], cfg=cfg, notes=[note])


def _slope(b: Builder, op: ir.Op, idx: int, rank: int) -> tuple[str, tuple[float, int]]:
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, ElType.SA8), FB.sa8_params(b, op, idx)
    if t.dtype == "int8" and t.quant is not None and not t.quant.per_axis:
        q = (float(t.quant.scale[0]), int(t.quant.zero_point[0]))
        data = np.asarray(t.data, np.int8)
    else:  # a float slope (a float model converted): int8 over its own range
        real = P.real(t)
        q = Q.sa8_params_from_range(real.min(), real.max())
        data = Q.int_quantize(real, q[0], q[1], 8)[0].astype(np.int8)
    shape = (1,) * (rank - len(t.shape)) + tuple(t.shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    note = f"PReLU slope {list(t.shape)}: broadcast by the fallback kernel"
    return b.sa_constant(b.base(idx), ElType.SA8, data.reshape(shape), q, [note], t), q
