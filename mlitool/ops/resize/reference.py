"""RESIZE_BILINEAR and the depth / space / batch rearrangements in the float and tflite modes.

RESIZE_BILINEAR on integers is TFLite's ResizeBilinearInteger: positions in 1/1024 steps, a
weighted sum of the four neighbours in 2^20 units, rounded half away from zero; it needs no
requantization (input and output share their parameters). `bilinear_int` is that arithmetic on
raw arrays, shared with the fallback C's numpy twin. The others move elements only; the padding
of SPACE_TO_BATCH_ND is the output's zero point, as TFLite pads.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import zp_of

f32 = np.float32
ONE = 1 << 10  # ResizeBilinearInteger's unit of position


def scale_10(in_size: int, out_size: int, align: bool) -> int:
    """The integer step between output positions, in 1/1024 of an input pixel."""
    if align and out_size > 1:
        return (ONE * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return (ONE * in_size + out_size // 2) // out_size


def _tdiv(a: np.ndarray, d: int) -> np.ndarray:
    """C's integer division (toward zero)."""
    q = np.abs(a) // d
    return np.where(a < 0, -q, q)


def positions(out_size: int, in_size: int, scale: int, half: bool):
    """(position in 1/1024, lower index, upper index) of each output row or column."""
    v = np.arange(out_size, dtype=np.int64) * scale
    if half:
        v += scale // 2 - (1 << 9)
    lo = np.maximum(_tdiv(v, ONE), 0)
    hi = np.minimum(_tdiv(v + ONE - 1, ONE), in_size - 1)
    return v, lo, hi


def bilinear_int(x: np.ndarray, oh: int, ow: int, sh: int, sw: int, half: bool) -> np.ndarray:
    """ResizeBilinearInteger of x (n, H, W, C) to (n, oh, ow, C), scales `scale_10`."""
    h, w = x.shape[1], x.shape[2]
    ys, y0, y1 = positions(oh, h, sh, half)
    xs, x0, x1 = positions(ow, w, sw, half)
    dy, dx = (ys - ONE * y0)[:, None, None], (xs - ONE * x0)[None, :, None]
    v = x.astype(np.int64)
    acc = (
        v[:, y0][:, :, x0] * (ONE - dy) * (ONE - dx)
        + v[:, y1][:, :, x0] * dy * (ONE - dx)
        + v[:, y0][:, :, x1] * (ONE - dy) * dx
        + v[:, y1][:, :, x1] * dy * dx
    )
    return _tdiv(acc + np.where(acc > 0, 1 << 19, -(1 << 19)), 1 << 20).astype(x.dtype)


def _bilinear_float(x: np.ndarray, oh: int, ow: int, align: bool, half: bool) -> np.ndarray:
    """TFLite's float ResizeBilinear, float32 throughout."""

    def axis(out_size, in_size):
        if align and out_size > 1:
            scale = f32(in_size - 1) / f32(out_size - 1)
        else:
            scale = f32(in_size) / f32(out_size)
        v = np.arange(out_size, dtype=f32)
        pos = (v + f32(0.5)) * scale - f32(0.5) if half else v * scale
        lo = np.maximum(np.floor(pos).astype(np.int64), 0)
        hi = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
        return pos, lo, hi

    ys, y0, y1 = axis(oh, x.shape[1])
    xs, x0, x1 = axis(ow, x.shape[2])
    dy = (ys - y0.astype(f32))[:, None, None]
    dx = (xs - x0.astype(f32))[None, :, None]
    one = f32(1)
    y = (
        x[:, y0][:, :, x0] * (one - dy) * (one - dx)
        + x[:, y1][:, :, x0] * dy * (one - dx)
        + x[:, y0][:, :, x1] * (one - dy) * dx
        + x[:, y1][:, :, x1] * dy * dx
    )
    return y.astype(f32)


def _size(c: Call) -> tuple[int, int]:
    oh, ow = (int(v) for v in np.asarray(c.const(1)).reshape(-1))
    return oh, ow


def resize_bilinear(c: Call):
    x = np.asarray(c.x(0))
    if x.ndim != 5:
        raise UnsupportedError(f"{c.op.label}: input of rank {x.ndim - 1}, expected 4")
    oh, ow = _size(c)
    align, half = bool(c.opt("align_corners", False)), bool(c.opt("half_pixel_centers", False))
    n, b = x.shape[:2]
    flat = x.reshape((n * b,) + x.shape[2:])
    if x.dtype.kind == "f":
        y = _bilinear_float(flat.astype(f32), oh, ow, align, half)
    else:
        sh, sw = scale_10(x.shape[2], oh, align), scale_10(x.shape[3], ow, align)
        y = bilinear_int(flat, oh, ow, sh, sw, half)
    return [y.reshape((n, b) + y.shape[1:])]


def _block(c: Call) -> int:
    bs = int(c.opt("block_size", 0))
    if bs < 1:
        raise UnsupportedError(f"{c.op.label}: block size {bs}")
    return bs


def space_to_depth(c: Call):
    """out[b, h, w, (by * bs + bx) * C + c] = in[b, h * bs + by, w * bs + bx, c]."""
    x, bs = np.asarray(c.x(0)), _block(c)
    n, b, h, w, ch = x.shape
    y = x.reshape(n, b, h // bs, bs, w // bs, bs, ch).transpose(0, 1, 2, 4, 3, 5, 6)
    return [np.ascontiguousarray(y).reshape(n, b, h // bs, w // bs, bs * bs * ch)]


def depth_to_space(c: Call):
    """out[b, h * bs + by, w * bs + bx, c] = in[b, h, w, (by * bs + bx) * C + c]."""
    x, bs = np.asarray(c.x(0)), _block(c)
    n, b, h, w, ch = x.shape
    y = x.reshape(n, b, h, w, bs, bs, ch // (bs * bs)).transpose(0, 1, 2, 4, 3, 5, 6)
    return [np.ascontiguousarray(y).reshape(n, b, h * bs, w * bs, ch // (bs * bs))]


def _pad_value(c: Call, x: np.ndarray):
    t = c.tout()
    if x.dtype.kind == "f" or t.quant is None:
        return x.dtype.type(0)
    return x.dtype.type(zp_of(t))


def _ints(c: Call, i: int) -> np.ndarray:
    return np.asarray(c.const(i), dtype=np.int64)


def space_to_batch_nd(c: Call):
    """Spatial dims padded (with the output's zero point), then each block offset becomes a
    batch: out[(sy * bw + sx) * B + b, h, w, c] = padded[b, h * bh + sy, w * bw + sx, c]."""
    x = np.asarray(c.x(0))
    block, pads = _ints(c, 1).reshape(-1), _ints(c, 2).reshape(-1, 2)
    if any(int(k) < 1 for k in block):
        raise UnsupportedError(f"{c.op.label}: a block size below 1")
    m = len(block)
    width = [(0, 0), (0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 2 - m)
    x = np.pad(x, width, constant_values=_pad_value(c, x))
    n, b = x.shape[:2]
    spatial, rest = x.shape[2 : 2 + m], x.shape[2 + m :]
    if any(s % k for s, k in zip(spatial, block)):
        raise UnsupportedError(f"{c.op.label}: padded shape not a multiple of the block")
    split = [v for s, k in zip(spatial, block) for v in (s // k, int(k))]
    y = x.reshape((n, b, *split, *rest))
    order = [0] + [3 + 2 * i for i in range(m)] + [1] + [2 + 2 * i for i in range(m)]
    order += list(range(2 + 2 * m, y.ndim))
    y = np.ascontiguousarray(y.transpose(order))
    return [
        y.reshape((n, b * int(np.prod(block)), *(s // k for s, k in zip(spatial, block)), *rest))
    ]


def batch_to_space_nd(c: Call):
    """The inverse of SPACE_TO_BATCH_ND, then the crops."""
    x = np.asarray(c.x(0))
    block, crops = _ints(c, 1).reshape(-1), _ints(c, 2).reshape(-1, 2)
    m, nb = len(block), int(np.prod(block))
    n, bb = x.shape[:2]
    if bb % nb:  # TFLite's Prepare refuses it too
        raise UnsupportedError(f"{c.op.label}: batch {bb} not a multiple of the block {nb}")
    spatial, rest = x.shape[2 : 2 + m], x.shape[2 + m :]
    y = x.reshape((n, *(int(k) for k in block), bb // nb, *spatial, *rest))
    # (n, k1..km, B, s1..sm, rest) -> (n, B, s1, k1, ..., sm, km, rest)
    order = [0, 1 + m] + [v for i in range(m) for v in (2 + m + i, 1 + i)]
    order += list(range(2 + 2 * m, y.ndim))
    y = np.ascontiguousarray(y.transpose(order))
    y = y.reshape((n, bb // nb, *(s * int(k) for s, k in zip(spatial, block)), *rest))
    box = tuple(slice(int(lo), y.shape[2 + i] - int(hi)) for i, (lo, hi) in enumerate(crops))
    return [np.ascontiguousarray(y[(slice(None), slice(None), *box)])]
