"""Kernels of ops the second Keras corpus brought (issue 23's hidden corpus): SQUARE (an int8
model holds it as a float island, DEQUANTIZE -> SQUARE -> QUANTIZE) and REVERSE_V2 (a
Bidirectional RNN's backward sequence)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.call import Call
from mlitool.execute.unary import QParams, Unary


def _square(x: np.ndarray) -> np.ndarray:
    return np.multiply(x, x, dtype=np.float32)  # TFLite's float kernel: f * f in float32


def _no_int8_square(op: ir.Op, qin: QParams, qout: QParams):
    # TFLite's SQUARE kernel takes float32 only: an int8 one is a file TFLite refuses.
    raise UnsupportedError(f"{op.label}: TFLite has no int8 SQUARE kernel (float32 only)")


SQUARE = Unary("SQUARE", _square, _no_int8_square, options="SquareOptions")


def reverse_v2(c: Call):
    """REVERSE_V2: the elements in reverse order along each axis listed (one kernel for both
    modes: it moves elements)."""
    x = np.asarray(c.x(0))
    rank = x.ndim - 1  # the leading sample axis is not the tensor's
    axes = sorted({int(a) % rank for a in np.asarray(c.const(1)).reshape(-1)}) if rank else []
    if len(axes) != np.asarray(c.const(1)).size:
        raise UnsupportedError(f"{c.op.label}: an axis listed twice")
    return [np.ascontiguousarray(np.flip(x, axis=[a + 1 for a in axes]))]
