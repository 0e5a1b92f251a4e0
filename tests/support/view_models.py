"""Small multi-op int8 .tflite models whose slices and concatenations lower to views."""

from __future__ import annotations

import numpy as np

from tests.support.tflite_build import T, graph_model, options

SCALE, ZP = 0.05, -3


class Builder:
    """Tensors and ops in the order they are added; int8 tensors share one scale and zero point."""

    def __init__(self) -> None:
        self.tensors, self.ops = [], []

    def tensor(self, name: str, shape, dtype: str = "int8", data=None) -> int:
        scale, zp = (SCALE, ZP) if dtype == "int8" else (None, 0)
        self.tensors.append(T(list(shape), dtype, scale, zp, data=data, name=name))
        return len(self.tensors) - 1

    def const(self, name: str, values) -> int:
        v = np.asarray(values, np.int32)
        return self.tensor(name, v.shape, "int32", v)

    def op(self, name: str, inputs, outputs, opts: str | None = None, **fields) -> None:
        self.ops.append(
            (name, inputs, outputs, options(opts, **fields) if opts is not None else None)
        )

    def finish(self, inputs, outputs) -> bytes:
        return graph_model(self.tensors, self.ops, inputs, outputs)


def split_concat() -> bytes:
    """x -> RELU -> r; SPLIT(r, channels) -> a, b; RELU6(a) -> c; MAXIMUM(b, a) -> d;
    CONCATENATION(d, c) -> y; SPLIT(y, rows) -> y0, y1 (outputs)."""
    m = Builder()
    x = m.tensor("x", [1, 4, 4, 8])
    r = m.tensor("r", [1, 4, 4, 8])
    m.op("RELU", [x], [r])
    a, b = m.tensor("a", [1, 4, 4, 4]), m.tensor("b", [1, 4, 4, 4])
    m.op("SPLIT", [m.const("axis_c", [3]), r], [a, b], "SplitOptions", numSplits=2)
    c = m.tensor("c", [1, 4, 4, 4])
    m.op("RELU6", [a], [c])
    d = m.tensor("d", [1, 4, 4, 4])
    m.op("MAXIMUM", [b, a], [d])
    y = m.tensor("y", [1, 4, 4, 8])
    m.op("CONCATENATION", [d, c], [y], "ConcatenationOptions", axis=3)
    y0, y1 = m.tensor("y0", [1, 2, 4, 8]), m.tensor("y1", [1, 2, 4, 8])
    m.op("SPLIT", [m.const("axis_h", [1]), y], [y0, y1], "SplitOptions", numSplits=2)
    return m.finish([x], [y0, y1])


def slices() -> bytes:
    """SLICE and STRIDED_SLICE (strided views into MAXIMUM), SPLIT_V on rows (contiguous
    outputs), a non-unit-step STRIDED_SLICE and two shrinking ones (outputs)."""
    m = Builder()
    x = m.tensor("x", [1, 6, 6, 8])
    s1 = m.tensor("s1", [1, 3, 6, 4])
    m.op("SLICE", [x, m.const("b1", [0, 1, 0, 2]), m.const("n1", [1, 3, 6, 4])], [s1])
    s2 = m.tensor("s2", [1, 3, 6, 4])
    m.op(
        "STRIDED_SLICE",
        [x, m.const("b2", [0, 2, 0, 4]), m.const("e2", [1, 5, 6, 8]), m.const("st2", [1, 1, 1, 1])],
        [s2],
        "StridedSliceOptions",
    )
    mx = m.tensor("mx", [1, 3, 6, 4])
    m.op("MAXIMUM", [s1, s2], [mx])
    sub = m.tensor("sub", [1, 3, 6, 8])
    m.op(
        "STRIDED_SLICE",
        [x, m.const("b3", [0, 0, 0, 0]), m.const("e3", [1, 6, 6, 8]), m.const("st3", [1, 2, 1, 1])],
        [sub],
        "StridedSliceOptions",
    )
    parts = [
        m.tensor("p0", [1, 2, 6, 8]),
        m.tensor("p1", [1, 3, 6, 8]),
        m.tensor("p2", [1, 1, 6, 8]),
    ]
    m.op(
        "SPLIT_V",
        [x, m.const("sizes", [2, -1, 1]), m.const("axis", [1])],
        parts,
        "SplitVOptions",
        numSplits=3,
    )
    row = m.tensor("row", [1, 6, 8])
    m.op(
        "STRIDED_SLICE",
        [x, m.const("b4", [0, 2, 0, 0]), m.const("e4", [1, 3, 6, 8]), m.const("st4", [1, 1, 1, 1])],
        [row],
        "StridedSliceOptions",
        shrinkAxisMask=2,
    )
    col = m.tensor("col", [1, 6, 8])
    m.op(
        "STRIDED_SLICE",
        [x, m.const("b5", [0, 0, 3, 0]), m.const("e5", [1, 6, 4, 8]), m.const("st5", [1, 1, 1, 1])],
        [col],
        "StridedSliceOptions",
        shrinkAxisMask=4,
    )
    return m.finish([x], [mx, sub, *parts, row, col])


def split_reshape() -> bytes:
    """SPLIT on channels whose first piece feeds a RESHAPE (needs a contiguous input)."""
    m = Builder()
    x = m.tensor("x", [1, 2, 2, 8])
    r = m.tensor("r", [1, 2, 2, 8])
    m.op("RELU", [x], [r])
    a, b = m.tensor("a", [1, 2, 2, 4]), m.tensor("b", [1, 2, 2, 4])
    m.op("SPLIT", [m.const("axis", [3]), r], [a, b], "SplitOptions", numSplits=2)
    flat = m.tensor("flat", [1, 16])
    m.op("RESHAPE", [a, m.const("shape", [1, 16])], [flat])
    rb = m.tensor("rb", [1, 2, 2, 4])
    m.op("RELU", [b], [rb])
    return m.finish([x], [flat, rb])
