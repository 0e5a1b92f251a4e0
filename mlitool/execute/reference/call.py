"""What a `float` / `tflite` kernel sees of one op: `Call`, its tensors and the values so far.

The kernel modules (`float_ops`, `tflite_ops`, `layout_ops`) import this, never the walker
(`graph`), which imports them: the dependency runs one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.ops import spec as opspec

Kernel = Callable[["Call"], list]
Slot = int | str  # an input slot: its index, or its name in the op's OpSpec


@dataclass
class Call:
    """One op invocation: the op, its tensors, and the values computed so far."""

    op: ir.Op
    graph: ir.Graph
    mode: str
    values: dict[int, np.ndarray]
    n: int
    consts: dict[int, np.ndarray] = field(default_factory=dict)

    def slot(self, i: Slot) -> int:
        """The index of input slot `i`."""
        return opspec.spec(self.op.type).slot(i) if isinstance(i, str) else i

    def tin(self, i: Slot) -> ir.Tensor | None:
        i = self.slot(i)
        if i >= len(self.op.inputs):
            return None
        return self.graph.tensor(self.op.inputs[i])

    def tout(self, j: int = 0) -> ir.Tensor:
        return self.graph.tensors[self.op.outputs[j]]

    def has(self, i: Slot) -> bool:
        return self.tin(i) is not None

    def opt(self, key: str, default=None):
        return self.op.options.get(key, default)

    def const(self, i: Slot) -> np.ndarray:
        """Data of constant input i, converted for the mode (float mode: real values)."""
        i = self.slot(i)
        t = self.tin(i)
        if t is None:
            raise UnsupportedError(f"{self.op.label}: input {i} is missing")
        if not t.is_constant:
            raise UnsupportedError(
                f"{self.op.label}: input {i} ({t.name}) must be a constant tensor"
            )
        if t.index not in self.consts:
            self.consts[t.index] = const_value(t, self.mode)
        return self.consts[t.index]

    def x(self, i: Slot) -> np.ndarray:
        """Batched value (N,)+shape of input i; constants are broadcast over samples."""
        i = self.slot(i)
        t = self.tin(i)
        if t is None:
            raise UnsupportedError(f"{self.op.label}: input {i} is missing")
        if t.is_constant:
            c = self.const(i)
            return np.broadcast_to(c, (self.n,) + c.shape)
        try:
            return self.values[t.index]
        except KeyError:
            raise UnsupportedError(
                f"{self.op.label}: input tensor {t.name} has no value "
                "(not produced by an earlier op)"
            ) from None

    def aligned(self, *idx: int) -> list[np.ndarray]:
        """Inputs `idx`, batched and right-aligned to their common rank (TFLite broadcasting)."""
        rank = max(len(self.tin(i).shape) for i in idx)
        out = []
        for i in idx:
            shape, v = tuple(self.tin(i).shape), self.x(i)
            out.append(v.reshape((v.shape[0],) + (1,) * (rank - len(shape)) + shape))
        return out

    def out_shape(self, j: int = 0) -> tuple[int, ...]:
        return (self.n,) + tuple(self.tout(j).shape)

    def unsupported(self, what: str) -> UnsupportedError:
        return UnsupportedError(f"{self.op.label}: {what} is not supported in {self.mode} mode")


def const_value(t: ir.Tensor, mode: str) -> np.ndarray:
    data = np.asarray(t.data)
    if mode == "float" and t.quant is not None and data.dtype.kind in "iu":
        return t.quant.dequantize(data).astype(np.float32)
    return data
