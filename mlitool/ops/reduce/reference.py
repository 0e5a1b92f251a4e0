"""Reductions over any axes (SUM, REDUCE_MAX, REDUCE_MIN; MEAN's integer parameters) in the float
and tflite execution modes, as LiteRT's reference kernels compute them (reduce.cc).

- float: the sum runs in float32, element by element in row-major order (TFLite's Reduce loop),
  then MEAN divides by the count in float32. numpy's pairwise sum would round differently.
- int8 / int16 MEAN: QuantizedMeanOrSum. The int32 sum minus zero point * count is rescaled by
  MultiplyByQuantizedMultiplier with Prepare()'s QuantizeMultiplier(in / out scale) with 1/count
  folded in (`mean_or_sum_multiplier`).
- int8 / int16 SUM: LiteRT's reference SUM is broken for int8 (it sums [-1, -2] to -1; see
  tests/ops/reduce/test_reduce.py), so SUM is its builtin kernel's: in float32,
  round(sum * (in / out scale) - zero point * scale * count) + output zero point, clamped
  (`sum_float_params`, `sum_float_rescale`).
- REDUCE_MAX / REDUCE_MIN: TFLite requires equal input and output parameters; the result is the
  largest (smallest) stored value.

The fallback lowering (`mlitool.ops.reduce.lower`) takes its multiplier from
`mean_or_sum_multiplier`, so C, the mli executor and tflite mode compute one thing.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import scale_of, zp_of

f32 = np.float32


def mode_of(op_type: str) -> str:
    """What a reduction accumulates: "max", "min" or "sum" (MEAN, SUM)."""
    if op_type == "REDUCE_MAX":
        return "max"
    return "min" if op_type == "REDUCE_MIN" else "sum"


def mean_or_sum_multiplier(in_scale, out_scale, count: int, mean: bool) -> tuple[int, int]:
    """(multiplier, shift) QuantizedMeanOrSum applies to sum - zero point * count: Prepare()'s
    QuantizeMultiplier(in / out) (scales as float32 read as double); MEAN multiplies it by
    2^bits / count, bits = floor(log2 count) capped at 32 and at 31 + shift."""
    m, s = (int(v) for v in fp.quantize_multiplier(np.float64(in_scale) / np.float64(out_scale)))
    if mean:
        bits = min(count.bit_length() - 1, 32, 31 + s)
        m, s = int(fp.wrap32((m << bits) // count)), s - bits
    return m, s


def requantize(total: np.ndarray, bias: int, multiplier: int, shift: int, out_zp: int, dtype):
    """clamp(MultiplyByQuantizedMultiplier(int32(total - bias)) + out_zp) in `dtype`."""
    y = fp.mul_by_quantized_multiplier(fp.wrap32(total - bias), multiplier, shift) + out_zp
    info = np.iinfo(np.dtype(dtype))
    return np.clip(y, info.min, info.max).astype(dtype)


def sum_float_params(in_scale, out_scale, in_zp: int, count: int) -> tuple[f32, f32]:
    """(scale, bias) of the builtin quantized SUM, float32 as its C++ computes them."""
    scale = f32(in_scale) / f32(out_scale)
    return scale, f32(f32(-in_zp) * scale) * f32(count)


def sum_float_rescale(total: np.ndarray, scale, bias, out_zp: int, dtype) -> np.ndarray:
    """clamp(roundf(float(total) * scale + bias) + out_zp) in `dtype`, float32 throughout."""
    v = (np.asarray(total).astype(f32) * f32(scale)).astype(f32) + f32(bias)
    y = fp.round_away_f32(np.clip(v, f32(-(1 << 24)), f32(1 << 24))).astype(np.int64) + out_zp
    info = np.iinfo(np.dtype(dtype))
    return np.clip(y, info.min, info.max).astype(dtype)


def reduce_int(x: np.ndarray, mode: str, axes, keep: bool) -> np.ndarray:
    """Sum (int64), max or min of integer `x` over `axes`."""
    if mode == "sum":
        return x.astype(np.int64).sum(axis=axes, keepdims=keep)
    fn = np.max if mode == "max" else np.min
    return fn(x, axis=axes, keepdims=keep)


def float_sum(x: np.ndarray, axes, keep: bool) -> np.ndarray:
    """float32 sum over `axes`, one element after the other in row-major order (TFLite's Reduce
    loop): the reduced axes moved last, in order, and accumulated by a float32 cumsum."""
    x = np.asarray(x, dtype=f32)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + list(axes))
    rows = moved.reshape(moved.shape[: len(kept)] + (-1,))
    total = np.cumsum(rows, axis=-1, dtype=f32)[..., -1] if rows.shape[-1] else rows.sum(-1)
    if keep:
        total = total.reshape([1 if a in axes else d for a, d in enumerate(x.shape)])
    return total.astype(f32)


def _count(c: Call, axes) -> int:
    shape = c.x(0).shape
    return int(np.prod([shape[a] for a in axes]))


def _shaped(c: Call, y: np.ndarray) -> np.ndarray:
    """`y` in the stored output shape; a refusal where the axes (not constant) reduce to another
    shape, which TFLite computes at run time only."""
    if y.size != int(np.prod(c.out_shape())):
        raise c.unsupported("a reduction to a shape known at run time only")
    return y.reshape(c.out_shape())


def float_kernel(name: str):
    mode = mode_of(name)

    def run(c: Call):
        axes, keep = reduce_axes(c)
        x = np.asarray(c.x(0), dtype=f32)
        if mode == "sum":
            y = float_sum(x, axes, keep)
            if name == "MEAN":
                y = (y / f32(_count(c, axes))).astype(f32)
        else:
            y = reduce_int(x, mode, axes, keep)
        return [_shaped(c, np.asarray(y, dtype=f32))]

    run.__name__ = f"float_{name.lower()}"
    return run


def _same_params(a: ir.Tensor, b: ir.Tensor) -> bool:
    return f32(scale_of(a)) == f32(scale_of(b)) and zp_of(a) == zp_of(b)


def tflite_kernel(name: str):
    mode = mode_of(name)

    def run(c: Call):
        tin, tout = c.tin(0), c.tout()
        if np.dtype(tin.dtype).kind == "f":
            return float_kernel(name)(c)
        if tin.dtype not in ("int8", "int16") or tout.dtype != tin.dtype:
            raise c.unsupported(f"{tin.dtype} {name}")
        axes, keep = reduce_axes(c)
        acc = reduce_int(np.asarray(c.x(0)), mode, axes, keep)
        if mode != "sum":
            if not _same_params(tin, tout):  # TFLite's Eval refuses it too
                raise c.unsupported(f"{name} with output parameters unlike its input's")
            return [_shaped(c, acc.astype(tout.dtype))]
        count = _count(c, axes)
        if name == "SUM":
            scale, bias = sum_float_params(scale_of(tin), scale_of(tout), zp_of(tin), count)
            y = sum_float_rescale(acc, scale, bias, zp_of(tout), tout.dtype)
        else:
            m, s = mean_or_sum_multiplier(scale_of(tin), scale_of(tout), count, mean=True)
            y = requantize(acc, zp_of(tin) * count, m, s, zp_of(tout), tout.dtype)
        return [_shaped(c, y)]

    run.__name__ = f"tflite_{name.lower()}"
    return run


def reduce_axes(c: Call) -> tuple[tuple[int, ...], bool]:
    """Reduction axes of input 0 in batched coordinates (shifted past the sample axis)."""
    nd = len(c.tin(0).shape)
    axes = np.asarray(c.const(1)).reshape(-1).astype(int)
    return tuple(sorted({int(a) % nd + 1 for a in axes})), bool(c.opt("keep_dims", False))
