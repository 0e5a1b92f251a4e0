"""Data-movement kernels of `float` and `tflite` modes: reshape, transpose, slices, splits,
arg max/min. They select or move elements without arithmetic, so they work on any dtype and the
two modes share them.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call


def reshape(c: Call):
    return [np.reshape(c.x(0), c.out_shape())]


def transpose(c: Call):
    with np.errstate(invalid="ignore"):  # a float permutation: validation refuses it
        perm = np.asarray(c.const(1)).reshape(-1).astype(int)
    return [np.transpose(c.x(0), (0,) + tuple(int(p) + 1 for p in perm))]


def _arg(c: Call, fn):
    nd = len(c.tin(0).shape)
    axis = int(np.asarray(c.const(1)).reshape(-1)[0]) % nd + 1
    return [fn(c.x(0), axis=axis).astype(c.tout().dtype)]


def arg_max(c: Call):
    return _arg(c, np.argmax)


def arg_min(c: Call):
    return _arg(c, np.argmin)


def concat_parts(c: Call, parts: list) -> np.ndarray:
    nd = len(c.tout().shape)
    axis = int(c.opt("axis", 0)) % nd + 1
    return np.concatenate([np.asarray(p) for p in parts], axis=axis)


def pad_with(c: Call, value) -> list:
    paddings = np.asarray(c.const(1)).reshape(-1, 2).astype(int)
    width = ((0, 0),) + tuple((int(a), int(b)) for a, b in paddings)
    return [np.pad(c.x(0), width, constant_values=value)]


def _ints(c: Call, i: int) -> list[int]:
    return [int(v) for v in np.asarray(c.const(i)).reshape(-1)]


def slice_op(c: Call):
    begin, size = _ints(c, 1), _ints(c, 2)
    dims = c.tin(0).shape
    idx = tuple(slice(b, dims[d] if s < 0 else b + s) for d, (b, s) in enumerate(zip(begin, size)))
    return [c.x(0)[(slice(None),) + idx]]


def _split_at(c: Call, x: np.ndarray, axis: int, sizes: list[int]) -> list:
    nd = len(c.tin(0).shape) if c.op.type == "SPLIT_V" else len(c.tin(1).shape)
    ax = axis % nd + 1
    edges = np.cumsum(sizes)[:-1]
    return [np.ascontiguousarray(p) for p in np.split(x, edges, axis=ax)]


def split(c: Call):
    axis = _ints(c, 0)[0]
    n = len(c.op.outputs)
    x = c.x(1)
    dim = c.tin(1).shape[axis]
    return _split_at(c, x, axis, [dim // n] * n)


def split_v(c: Call):
    sizes, axis = _ints(c, 1), _ints(c, 2)[0]
    dim = c.tin(0).shape[axis]
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    return _split_at(c, c.x(0), axis, sizes)


def _ints(c: Call, i) -> list[int]:
    return [int(v) for v in np.asarray(c.const(i)).reshape(-1)]


def _axis(c: Call, axis: int, rank: int) -> int:
    """`axis` of a rank-`rank` tensor as an axis of the batched array (sample axis first)."""
    if not -rank <= axis < rank:
        raise UnsupportedError(f"{c.op.label}: axis {axis} is outside rank {rank}")
    return axis % rank + 1


def strided_slice(c: Call):
    """TFLite's STRIDED_SLICE: numpy's basic indexing is the same sparse spec (ellipsis, new
    axes, shrunk axes, clamped begin / end, negative strides), so the masks map onto it."""
    begin, end, strides = _ints(c, 1), _ints(c, 2), _ints(c, 3)
    bits = {k: int(c.opt(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask")}
    new_axis, shrink = int(c.opt("new_axis_mask", 0)), int(c.opt("shrink_axis_mask", 0))
    idx: list = [slice(None)]  # the sample axis
    for d, (b, e, s) in enumerate(zip(begin, end, strides)):
        if s == 0:
            raise UnsupportedError(f"{c.op.label}: stride 0")
        if c.opt("offset", False):
            e = b + e
        if bits["ellipsis_mask"] >> d & 1:
            idx.append(Ellipsis)
        elif new_axis >> d & 1:
            idx.append(np.newaxis)
        elif shrink >> d & 1:
            idx.append(b)
        else:
            idx.append(
                slice(
                    None if bits["begin_mask"] >> d & 1 else b,
                    None if bits["end_mask"] >> d & 1 else e,
                    s,
                )
            )
    try:
        return [np.ascontiguousarray(c.x(0)[tuple(idx)])]
    except IndexError as e:  # a shrunk axis indexed outside its dimension
        raise UnsupportedError(f"{c.op.label}: {e}") from None
