"""DYNAMIC_UPDATE_SLICE's kernels: the operand with the update written over it from the start
indices, which TFLite clamps so that the update fits (start in 0..operand - update along each
axis). One copy for both modes; an int8 model's float island DEQUANTIZE -> DYNAMIC_UPDATE_SLICE
-> QUANTIZE (the update a float constant) runs as TFLite: the DEQUANTIZE values (`FLOAT_ISLAND`),
the float copy, QUANTIZE's rounding."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import affine_quantize
from mlitool.ir import FLOAT_ISLAND


def clamped_starts(starts: np.ndarray, shape, update_shape) -> np.ndarray:
    """TFLite's start indices (rows of one sample each), clamped to 0..shape - update shape."""
    hi = np.asarray(shape, np.int64) - np.asarray(update_shape, np.int64)
    return np.clip(np.asarray(starts, np.int64), 0, np.maximum(hi, 0))


def update_slice(x: np.ndarray, update: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """`x` (samples first) with `update` written from clamped `starts` (one row per sample)."""
    y = np.array(x, copy=True)
    u = np.broadcast_to(update, (y.shape[0], *update.shape[1:])).astype(y.dtype)
    rows = [starts[0]] if np.all(starts == starts[0]) else list(starts)
    for k, s in enumerate(rows):  # one slice for all samples where the starts agree
        window = tuple(slice(int(a), int(a) + n) for a, n in zip(s, u.shape[1:]))
        samples = slice(None) if len(rows) == 1 else slice(k, k + 1)
        y[(samples, *window)] = u[samples]
    return y


def _starts(c: Call) -> np.ndarray:
    rank = len(c.tin(0).shape)
    s = np.asarray(c.x(2)).astype(np.int64)
    # constant starts come without the sample axis: the same for every sample
    s = np.broadcast_to(s.reshape(1, rank), (c.n, rank)) if s.size == rank else s.reshape(c.n, rank)
    return clamped_starts(s, c.tin(0).shape, c.tin(1).shape)


def _check(c: Call) -> None:
    if len(c.tin(1).shape) != len(c.tin(0).shape) or np.size(c.tin(2).shape) != 1:
        raise c.unsupported("an update of another rank than the operand's")
    if any(u > d for u, d in zip(c.tin(1).shape, c.tin(0).shape)):
        raise c.unsupported(f"an update {list(c.tin(1).shape)} larger than the operand")


def float_dynamic_update_slice(c: Call):
    _check(c)
    return [update_slice(c.x(0), np.asarray(c.x(1), np.float32), _starts(c))]


def tflite_dynamic_update_slice(c: Call):
    _check(c)
    island = c.op.options.get(FLOAT_ISLAND)
    if island is not None and c.tin(0).dtype == c.tout().dtype == "int8":
        deq = np.asarray(island, np.float32)[np.asarray(c.x(0)).astype(np.int16) + 128]
        y = update_slice(deq, np.asarray(c.x(1), np.float32), _starts(c))
        return [affine_quantize(y, c.tout())]
    if c.tin(1).dtype != c.tin(0).dtype:
        raise c.unsupported(f"a {c.tin(1).dtype} update of a {c.tin(0).dtype} operand")
    return [update_slice(c.x(0), np.asarray(c.x(1)), _starts(c))]


tflite_dynamic_update_slice.runs_float_island = True  # mlitool.passes.islands.RUNS_FLOAT_ISLAND
