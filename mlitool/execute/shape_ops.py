"""Kernels of the shape-arithmetic and index ops, one for both `float` and `tflite` modes: SHAPE,
STRIDED_SLICE (every mask), PACK, UNPACK, GATHER, REDUCE_PROD, CAST, FILL, RANGE, TILE and
RESIZE_NEAREST_NEIGHBOR.

They select, repeat or count elements; the only arithmetic (REDUCE_PROD, RANGE, CAST) is on
unquantized tensors, done in the tensor's own type as TFLite's reference kernels do it. Output
shapes are computed from the inputs, never read from the stored output tensor, so constant
folding (`mlitool.passes.constant_fold`) gets the shapes TFLite computes at run time.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.call import Call


def _ints(c: Call, i) -> list[int]:
    return [int(v) for v in np.asarray(c.const(i)).reshape(-1)]


def _axis(c: Call, axis: int, rank: int) -> int:
    """`axis` of a rank-`rank` tensor as an axis of the batched array (sample axis first)."""
    if not -rank <= axis < rank:
        raise UnsupportedError(f"{c.op.label}: axis {axis} is outside rank {rank}")
    return axis % rank + 1


def shape(c: Call):
    dims = np.asarray(c.tin(0).shape, dtype=c.tout().dtype)
    return [np.broadcast_to(dims, (c.n,) + dims.shape).copy()]


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


def pack(c: Call):
    rank = len(c.tin(0).shape) + 1
    parts = [c.x(i) for i in range(len(c.op.inputs))]
    return [np.stack(parts, axis=_axis(c, int(c.opt("axis", 0)), rank))]


def unpack(c: Call):
    x = c.x(0)
    ax = _axis(c, int(c.opt("axis", 0)), len(c.tin(0).shape))
    return [np.ascontiguousarray(p) for p in np.moveaxis(x, ax, 0)]


def gather(c: Call):
    """output[p, i, q] = params[p, indices[i], q], with `batch_dims` leading axes shared by
    params and indices (the sample axis is one more of them)."""
    params, idx = c.x(0), np.asarray(c.x(1)).astype(np.int64)
    rank = len(c.tin(0).shape)
    ax = _axis(c, int(c.opt("axis", 0)), rank) - 1
    bd = int(c.opt("batch_dims", 0)) % max(len(c.tin(1).shape) + 1, 1)
    dim = params.shape[ax + 1]
    if idx.size and (idx.min() < 0 or idx.max() >= dim):
        raise UnsupportedError(f"{c.op.label}: an index is outside [0, {dim})")
    lead = params.shape[: bd + 1]  # the shared batch axes, sample axis included
    nb = int(np.prod(lead))
    p = params.reshape(nb, int(np.prod(params.shape[bd + 1 : ax + 1])), dim, -1)
    i = np.broadcast_to(idx, lead + idx.shape[bd + 1 :]).reshape(nb, -1)
    out = p[np.arange(nb)[:, None, None], np.arange(p.shape[1])[None, :, None], i[:, None, :]]
    want = params.shape[: ax + 1] + idx.shape[bd + 1 :] + params.shape[ax + 2 :]
    return [np.ascontiguousarray(out).reshape(want)]


def reduce_prod(c: Call):
    t = c.tin(0)
    if t.quant is not None and np.dtype(t.dtype).kind in "iu":
        raise c.unsupported(f"quantized {t.dtype} REDUCE_PROD")
    x = np.asarray(c.x(0))
    rank = len(t.shape)
    axes = sorted({_axis(c, a, rank) for a in _ints(c, 1)})
    kept = [k for k in range(x.ndim) if k not in axes]
    # TFLite's reference loop multiplies the reduced elements in the input's row-major order
    # (float products depend on it; integer ones wrap in the tensor's type): the reduced axes
    # moved last and merged, then one sequential product per output.
    rows = np.transpose(x, kept + axes).reshape([x.shape[k] for k in kept] + [-1])
    y = np.multiply.reduce(rows, axis=-1, dtype=x.dtype)
    if c.opt("keep_dims", False):
        y = y.reshape([1 if k in axes else d for k, d in enumerate(x.shape)])
    return [y.astype(c.tout().dtype)]


def cast(c: Call):
    out = c.tout()
    if c.mode == "float" and out.quant is not None:
        return [np.asarray(c.x(0), dtype=np.float32)]  # real values stay real
    x = np.asarray(c.x(0))
    if out.dtype == "bool":
        return [x != 0]
    with np.errstate(invalid="ignore"):  # out-of-range floats: undefined in C as well
        return [x.astype(out.dtype)]


def fill(c: Call):
    dims = tuple(_ints(c, 0))
    if any(d < 0 for d in dims):
        raise UnsupportedError(f"{c.op.label}: negative dimension in {list(dims)}")
    value = np.asarray(c.x(1)).reshape((c.n,) + (1,) * len(dims))
    return [np.broadcast_to(value, (c.n,) + dims).copy()]


def range_op(c: Call):
    """RANGE as TFLite counts it: the size from (limit - start) / delta, the values by adding
    delta again and again (so float values carry the running sum's rounding)."""
    start, limit, delta = (np.asarray(c.const(i)).reshape(()) for i in range(3))
    if delta == 0 or (limit - start) * np.sign(delta) < 0:
        n = 0 if delta != 0 and limit == start else -1
        if n < 0:
            raise UnsupportedError(f"{c.op.label}: delta does not move start toward limit")
    elif start.dtype.kind == "f":
        n = int(np.ceil(np.abs((limit - start) / delta)))
    else:
        n = int((abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta)))
    steps = np.full(n, delta, dtype=start.dtype)
    if n:
        steps[0] = start
    values = np.cumsum(steps, dtype=start.dtype)
    return [np.broadcast_to(values, (c.n, n)).copy()]


def tile(c: Call):
    reps = _ints(c, 1)
    if any(r < 0 for r in reps):
        raise UnsupportedError(f"{c.op.label}: negative multiples {reps}")
    return [np.tile(c.x(0), [1, *reps])]


def nearest_sources(out_size: int, in_size: int, align: bool, half: bool) -> np.ndarray:
    """Source index of each output row or column, in TFLite's float32 arithmetic."""
    f32 = np.float32
    if align and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    pos = (np.arange(out_size, dtype=f32) + f32(0.5 if half else 0.0)) * scale
    # align_corners rounds half away from zero, otherwise floor
    src = np.trunc(pos + np.copysign(f32(0.5), pos)) if align else np.floor(pos)
    src = np.minimum(src.astype(np.int64), in_size - 1)
    return np.maximum(src, 0) if half else src


def resize_nearest_neighbor(c: Call):
    x = c.x(0)
    if x.ndim != 5:
        raise UnsupportedError(f"{c.op.label}: input of rank {x.ndim - 1}, expected 4")
    oh, ow = _ints(c, 1)
    align, half = bool(c.opt("align_corners", False)), bool(c.opt("half_pixel_centers", False))
    rows = nearest_sources(oh, x.shape[2], align, half)
    cols = nearest_sources(ow, x.shape[3], align, half)
    return [np.ascontiguousarray(x[:, :, rows][:, :, :, cols])]
