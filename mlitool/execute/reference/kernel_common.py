"""What the reference kernels of every op family share: the batch merged into the leading
dimension, a float32 tensor's real values, the bias and the fused activation of float mode."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.channels import long_rows
from mlitool.execute.reference import repro
from mlitool.execute.reference.call import Call

f32 = np.float32


def merge_batch(x: np.ndarray) -> np.ndarray:
    """(N, B, ...) → (N*B, ...): the samples and the model's batch as one leading dimension."""
    return x.reshape((-1,) + x.shape[2:])


def is_float(t: ir.Tensor) -> bool:
    return np.dtype(t.dtype).kind == "f"


def activate(y: np.ndarray, act: str | None, out: np.ndarray | None = None) -> np.ndarray:
    """The fused activation of `y`, into `out` when given (y itself for a fresh array)."""
    if act in (None, "NONE"):
        return y
    if act == "RELU":
        return np.maximum(y, f32(0), out=out)
    if act == "RELU6":
        return np.clip(y, f32(0), f32(6), out=out)
    if act == "RELU_N1_TO_1":
        return np.clip(y, f32(-1), f32(1), out=out)
    if act == "TANH":
        t = repro.tanh(y)  # not np.tanh: its last bit depends on the CPU
        if out is None:
            return t
        out[...] = t
        return out
    raise UnsupportedError(f"fused activation {act}")


def real_input(c: Call, i: int | str) -> np.ndarray:
    """Input `i` of a float-mode call as float32."""
    return np.asarray(c.x(i), dtype=f32)


def real_bias(c: Call):
    return c.const("bias").astype(f32) if c.has("bias") else f32(0)


def activated(c: Call, y: np.ndarray) -> list:
    """The fused activation, in place on a fresh kernel result `y`."""
    y = y.astype(f32, copy=False)
    return [activate(y, c.opt("fused_activation"), out=y).reshape(c.out_shape())]


def plus_bias(c: Call, y: np.ndarray) -> np.ndarray:
    """y (fresh, float32, channels last) + the bias, in place."""
    if c.has("bias"):
        rows, b = long_rows(y, real_bias(c))
        rows += b
    return y
