"""Reductions over any axes (MEAN, SUM, REDUCE_MAX, REDUCE_MIN) onto the `reduce8` fallback C.

MEAN over H and W of a 4-D tensor stays MLI average pooling (`activations.lower_pool`). Over other
axes no MLI composition is TFLite's arithmetic: avepool divides by the count through MLI's 16-bit
reciprocal and takes the output's scale through MLI's 16-bit SA8 scales, where TFLite's int8
MEAN folds 1/count into one 31-bit multiplier (QuantizedMeanOrSum); so it is fallback C that
computes TFLite's integers, the multiplier and shift computed here as TFLite's Prepare() does.

int16 tensors (16x8 models, in fx16 / fx8w16d) stay FX16 (`reduce16`): TFLite's int16 arithmetic
(zero point 0) on the scales 2^-frac_bits of the MLI tensors, so with power-of-two scales in the
model it is TFLite's result bit for bit; an SA8 detour would lose 8 bits.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import axis_list, mean_is_pool
from mlitool.mli.types import ElType
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.pool import lower as activations
from mlitool.ops.reduce import c_kernel as R
from mlitool.ops.reduce.reference import mean_or_sum_multiplier, mode_of, sum_float_params

SA8, FX16 = ElType.SA8, ElType.FX16


# --- checks ----------------------------------------------------------------------------------


def axes_constant(s: Subject):
    """axis is not constant"""
    return {} if axis_list(s.graph, s.op) is None else _OK


def _unless_pool(check):
    """`check`, skipped for a MEAN that lowers onto average pooling."""

    def wrapped(s: Subject):
        return _OK if s.op.type == "MEAN" and mean_is_pool(s.graph, s.op) else check(s)

    wrapped.__doc__, wrapped.__name__ = check.__doc__, check.__name__
    return wrapped


def fallback_int8_or_int16(s: Subject):
    """fallback C reduces int8 or int16 tensors only; tensor {name!r} is {dtype}"""
    for i in (s.op.inputs[0], *s.op.outputs):
        t = s.graph.tensors[i]
        if t.data is None and t.dtype not in ("int8", "int16", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


CHECKS = (
    axes_constant,
    *(_unless_pool(c) for c in (FB.fallback_needs_mli2, fallback_int8_or_int16)),
)


# --- lowering --------------------------------------------------------------------------------


def lower_mean(b: Builder, op: ir.Op, fmt: str) -> None:
    """MEAN: average pooling over H and W of a 4-D tensor, else fallback C."""
    if mean_is_pool(b.g, op):
        activations.lower_pool(b, op, fmt)
    else:
        lower_reduce(b, op, fmt)


def _mli_axes(b: Builder, op: ir.Op) -> int:
    """Bit mask of the reduced MLI dimensions (the batch axis, size 1, is dropped)."""
    rank = len(b.g.tensors[op.inputs[0]].shape)
    mask = 0
    for a in axis_list(b.g, op):
        a %= max(rank, 1)
        if rank < 2 or a > 0:
            mask |= 1 << b.mli_axis(a, rank)
    return mask


def lower_reduce(b: Builder, op: ir.Op, fmt: str) -> None:
    """One `reduce8` layer over SA8 tensors (`reduce16` over FX16 ones for int16); the
    multiplier is TFLite's for these parameters."""
    in_idx, out_idx = op.inputs[0], op.outputs[0]
    kernel, el = (R.REDUCE16, FX16) if b.g.tensors[in_idx].dtype == "int16" else (R.REDUCE8, SA8)
    x = b.use(op, in_idx, el)
    out = b.produce(out_idx, el)
    if el == FX16:  # scale 2^-frac_bits, zero point 0
        (s_in, z_in), (s_out, z_out) = (2.0 ** -b.tensors[x].frac_bits, 0), (2.0**-out.frac_bits, 0)
    else:
        (s_in, z_in), (s_out, z_out) = FB.sa8_params(b, op, in_idx), FB.sa8_params(b, op, out_idx)
    mode = mode_of(op.type)
    count = b.g.tensors[in_idx].size // max(b.g.tensors[out_idx].size, 1)
    cfg = {"mode": R.MODE[mode], "axes": _mli_axes(b, op), "out_zp": z_out, "fscale": 0, "fbias": 0}
    if op.type == "SUM":
        scale, bias = sum_float_params(s_in, s_out, z_in, count)
        fscale, fbias = (int(np.array([v], np.float32).view(np.int32)[0]) for v in (scale, bias))
        cfg.update(rescale=2, bias=0, multiplier=0, shift=0, fscale=fscale, fbias=fbias)
        how = f"sum of {count}, rescaled in float32 as LiteRT's SUM"
    elif mode == "sum":
        m, s = mean_or_sum_multiplier(s_in, s_out, count, mean=True)
        cfg.update(rescale=1, bias=z_in * count, multiplier=m, shift=s)
        how = f"mean of {count}, rescaled by {m} * 2^{s - 31} as TFLite's QuantizedMeanOrSum"
    elif (s_in, z_in) == (s_out, z_out):  # TFLite: equal parameters, the stored extreme
        cfg.update(rescale=0, bias=0, multiplier=0, shift=0)
        how = f"{mode} of {count}"
    else:  # a calibrated float model: the output range may be narrower
        m, s = mean_or_sum_multiplier(s_in, s_out, 1, mean=False)
        cfg.update(rescale=1, bias=z_in, multiplier=m, shift=s)
        how = f"{mode} of {count}, requantized to the output's parameters"
    b.fallback(
        op,
        kernel,
        [x],
        [out.name],
        cfg={k: cfg[k] for k in R.CFG},
        notes=[f"no MLI kernel for {op.type} over these axes: fallback C ({how})"],
    )
