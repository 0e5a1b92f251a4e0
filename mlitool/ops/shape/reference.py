"""Kernels of the shape-arithmetic ops, one for both executor modes (they move or count elements):
SHAPE, ZEROS_LIKE, PACK, UNPACK, REDUCE_PROD, CAST, FILL, RANGE, BROADCAST_ARGS."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call


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


def zeros_like(c: Call):
    """ZEROS_LIKE: stored zeros of the input's shape and type (float mode: the real value of a
    stored 0 of a quantized tensor)."""
    out, shape = c.tout(), (c.n, *c.tin(0).shape)
    if c.mode == "float" and out.quant is not None and np.dtype(out.dtype).kind in "iu":
        zero = out.quant.dequantize(np.zeros(1, out.dtype))
        return [np.full(shape, zero.reshape(-1)[0], np.float32)]
    return [np.zeros(shape, out.dtype)]


def pack(c: Call):
    rank = len(c.tin(0).shape) + 1
    parts = [c.x(i) for i in range(len(c.op.inputs))]
    return [np.stack(parts, axis=_axis(c, int(c.opt("axis", 0)), rank))]


def unpack(c: Call):
    x = c.x(0)
    ax = _axis(c, int(c.opt("axis", 0)), len(c.tin(0).shape))
    return [np.ascontiguousarray(p) for p in np.moveaxis(x, ax, 0)]


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
    if x.dtype.kind == "c" and not out.dtype.startswith("complex"):
        x = np.real(x)  # TFLite's cast of complex64 to a real type: the real part
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


def broadcast_args(c: Call):
    """BROADCAST_ARGS: the shape two shapes broadcast to (numpy's rule, as TFLite's kernel), per
    sample (shape vectors computed at run time have one row each)."""
    a, b = np.asarray(c.x(0)), np.asarray(c.x(1))
    a, b = np.broadcast_to(a, (c.n, *a.shape[1:])), np.broadcast_to(b, (c.n, *b.shape[1:]))
    rows = []
    for sa, sb in zip(a, b):
        try:
            rows.append(np.broadcast_shapes(tuple(sa.tolist()), tuple(sb.tolist())))
        except ValueError:
            raise UnsupportedError(
                f"{c.op.label}: shapes {sa.tolist()} and {sb.tolist()} do not broadcast"
            ) from None
    return [np.asarray(rows, dtype=c.tout().dtype).reshape(c.n, -1)]
