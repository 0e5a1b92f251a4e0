"""CUMSUM (plain, exclusive, reverse) along a constant axis.

float and tflite mode: TFLite's float32 kernel, one element after the other from 0 (or from the
end when `reverse`), each output the sum before (`exclusive`) or after adding its element. LiteRT's
CUMSUM takes float32, int32 and int64 only, so an int8 model holds it as a float island (not an
element-wise one: still refused) and tflite mode refuses an int8 CUMSUM. A float model quantized by
mlitool runs the `cumsum8` fallback C (`cumsum_c.py`): the running int32 sums of the raw values,
each requantized as QuantizedMeanOrSum requantizes a sum of that many terms
(MultiplyByQuantizedMultiplier(sum - zero point * terms) + output zero point), its numpy twin
`cumsum_c.requantized_cumsum`.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.ir import FLOAT_ISLAND
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import const_values
from mlitool.mli.types import ElType
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.reduce.cumsum_c import CUMSUM8, CUMSUM_ISLAND8, island_cumsum, running_sums
from mlitool.ops.reduce.reference import mean_or_sum_multiplier

f32 = np.float32


def cumsum_axis(c: Call) -> int:
    """CUMSUM's axis as an axis of the batched array (the sample axis first)."""
    rank = len(c.tin(0).shape)
    axis = int(np.asarray(c.const(1)).reshape(-1)[0])
    if not -rank <= axis < rank:
        raise UnsupportedError(f"{c.op.label}: axis {axis} is outside rank {rank}")
    return axis % rank + 1


def _options(op: ir.Op) -> tuple[bool, bool]:
    return bool(op.options.get("exclusive", False)), bool(op.options.get("reverse", False))


def float_cumsum(c: Call):
    exclusive, reverse = _options(c.op)
    return [running_sums(c.x(0), cumsum_axis(c), exclusive, reverse, f32)]


def tflite_cumsum(c: Call):
    island = c.op.options.get(FLOAT_ISLAND)
    if island is not None and c.tin(0).dtype == c.tout().dtype == "int8":
        exclusive, reverse = _options(c.op)
        out = c.tout()
        scale, zp = float(out.quant.scale[0]), int(out.quant.zero_point[0])
        return [island_cumsum(c.x(0), island, cumsum_axis(c), exclusive, reverse, scale, zp)]
    if np.dtype(c.tin(0).dtype).kind != "f":
        raise c.unsupported(
            f"{c.tin(0).dtype} CUMSUM (LiteRT's kernel takes float32, int32 and int64)"
        )
    return float_cumsum(c)


# --- lowering (a float model quantized by mlitool, or an int8 CUMSUM) ------------------------


def cumsum_axis_constant(s: Subject):
    """CUMSUM's axis is not a constant"""
    return _OK if const_values(s.graph, s.op.inputs[1]) is not None else {}


CHECKS = (*FB.CHECKS, cumsum_axis_constant)


def lower_cumsum(b: Builder, op: ir.Op, fmt: str) -> None:
    in_idx, out_idx = op.inputs[0], op.outputs[0]
    x = b.use(op, in_idx, ElType.SA8)
    out = b.produce(out_idx, ElType.SA8)
    rank = len(b.g.tensors[in_idx].shape)
    axis = int(np.asarray(const_values(b.g, op.inputs[1])).reshape(-1)[0]) % rank
    shape = b.tensors[x].shape
    if rank >= 2 and axis == 0:  # the batch of 1: each sum is its one element
        outer, size = 1, 1
    else:
        ax = b.mli_axis(axis, rank, len(shape))
        outer, size = int(np.prod(shape[:ax])), int(shape[ax])
    inner = int(np.prod(shape)) // (outer * size)
    (s_in, z_in), (s_out, z_out) = FB.sa8_params(b, op, in_idx), FB.sa8_params(b, op, out_idx)
    m, s = mean_or_sum_multiplier(s_in, s_out, 1, mean=False)
    exclusive, reverse = _options(op)
    island = op.options.get(FLOAT_ISLAND)
    if island is not None:  # an int8 model's float island: TFLite's float32 arithmetic
        bits = np.asarray(island, np.float32).view(np.int32)
        note = "DEQUANTIZE of every int8 value, float32 bit patterns (the island's first op)"
        table = b.sa_constant(f"{out.name}_deq", ElType.SA32, bits, notes=[note])
        fscale = int(np.array([s_out], np.float32).view(np.int32)[0])
        cfg = dict(outer=outer, size=size, inner=inner, exclusive=int(exclusive))
        cfg |= dict(reverse=int(reverse), fscale=fscale, out_zp=z_out)
        why = "float island DEQUANTIZE -> CUMSUM -> QUANTIZE in float32, as TFLite"
        b.fallback(
            op,
            CUMSUM_ISLAND8,
            [x],
            [out.name],
            params={"table": table},
            cfg=cfg,
            notes=[f"no MLI kernel for CUMSUM: fallback C ({why})"],
        )
        return
    cfg = dict(outer=outer, size=size, inner=inner, exclusive=int(exclusive))
    cfg |= dict(reverse=int(reverse), zp_in=z_in, multiplier=m, shift=s, out_zp=z_out)
    b.fallback(
        op,
        CUMSUM8,
        [x],
        [out.name],
        cfg=cfg,
        notes=[f"no MLI kernel for CUMSUM: fallback C (running sums of {size}, requantized)"],
    )


tflite_cumsum.runs_float_island = True  # mlitool.passes.islands.RUNS_FLOAT_ISLAND
