"""An int8 model's float island (`ir.ISLAND_OP`) in numpy: TFLite's float32 arithmetic.

Each int8 input is read through its table (`ISLAND_TERMS`: the float32 value the island computes
of that input alone: its DEQUANTIZE, and unary ops on it; a constant term, one value or one per
channel, is read as it is), the values combine left to right as
the island's ADD / SUB / MUL do (`ISLAND_STEPS`; float32, each operation rounded, then the fused
activation), and the sum is quantized as TFLite's QUANTIZE does (float32 division by the scale,
rounded half away from zero, plus the zero point, clamped). The `float_island<N>` fallback C
(`c_kernel.py`) computes the same, operation for operation.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.fixedpoint import round_away_f32

f32 = np.float32
STEP_CODES = {"ADD": 0, "SUB": 1, "RSUB": 2, "MUL": 3}
_ACT = {
    "NONE": (-np.inf, np.inf),
    "RELU": (0.0, np.inf),
    "RELU6": (0.0, 6.0),
    "RELU_N1_TO_1": (-1.0, 1.0),
    "RELU_0_TO_1": (0.0, 1.0),
}


def act_bounds(act: str) -> tuple[float, float] | None:
    """TFLite's float activation range of a fused activation (None: one it has not)."""
    return _ACT.get(act)


def combine(values: list[np.ndarray], steps) -> np.ndarray:
    """The island's float32 result of its inputs' float values: `steps[k]` ((op, activation
    name or its (lo, hi) range)) combines the result so far with `values[k + 1]`."""
    acc = np.asarray(values[0], f32)
    with np.errstate(all="ignore"):
        for v, (kind, act) in zip(values[1:], steps):
            v = np.asarray(v, f32)
            if kind == "ADD":
                acc = acc + v
            elif kind == "SUB":
                acc = acc - v
            elif kind == "RSUB":
                acc = v - acc
            else:  # MUL
                acc = acc * v
            acc = acc.astype(f32)
            lo, hi = act_bounds(act) if isinstance(act, str) else act
            acc = np.minimum(np.maximum(acc, f32(lo)), f32(hi)).astype(f32)
    return acc


def quantize(v: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """TFLite's QUANTIZE of float32 `v` to int8 (|v / scale| capped at 2^24 before rounding)."""
    with np.errstate(all="ignore"):
        q = np.asarray(v, f32) / f32(scale)
    r = round_away_f32(np.clip(q, f32(-(2.0**24)), f32(2.0**24))).astype(np.int64) + zp
    return np.clip(r, -128, 127).astype(np.int8)


def term_values(xs: list[np.ndarray], tables: list) -> list[np.ndarray]:
    """Each term's float32 values: an int8 input through its table (256 float32), or, where
    the table is None, a constant's float32 values as they are (broadcast on the last axis)."""
    return [
        np.asarray(x, f32)
        if table is None
        else np.asarray(table, f32)[np.asarray(x).astype(np.int16) + 128]
        for x, table in zip(xs, tables)
    ]


def island_int8(xs: list[np.ndarray], tables: list, steps, scale: float, zp: int):
    """The island's int8 output of its terms `xs` (int8 inputs, each with its table of 256
    float32 values; constants, with None)."""
    return quantize(combine(term_values(xs, tables), steps), scale, zp)
