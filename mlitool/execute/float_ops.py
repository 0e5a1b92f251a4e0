"""`float` mode kernels: TFLite float semantics on real values (float32), batched over samples.

Quantized tensors are represented by their real values (the walker dequantizes constants and
integer inputs); QUANTIZE and DEQUANTIZE are identities, so no activation is re-quantized — float
mode is the accuracy reference. The data-movement kernels (LAYOUT_OPS) work on any dtype and are
shared with `tflite` mode.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.execute.graph import Call
from mlitool.errors import UnsupportedError

f32 = np.float32


def _merge(x: np.ndarray) -> np.ndarray:
    return x.reshape((-1,) + x.shape[2:])


def activate(y: np.ndarray, act: str | None) -> np.ndarray:
    if act in (None, "NONE"):
        return y
    if act == "RELU":
        return np.maximum(y, f32(0))
    if act == "RELU6":
        return np.clip(y, f32(0), f32(6))
    if act == "RELU_N1_TO_1":
        return np.clip(y, f32(-1), f32(1))
    if act == "TANH":
        return np.tanh(y)
    raise UnsupportedError(f"fused activation {act}")


def _fx(c: Call, i: int) -> np.ndarray:
    return np.asarray(c.x(i), dtype=f32)


def _bias(c: Call, idx: int = 2):
    return c.const(idx).astype(f32) if c.has(idx) else f32(0)


def _done(c: Call, y: np.ndarray) -> list:
    return [activate(y.astype(f32), c.opt("fused_activation")).reshape(c.out_shape())]


# --------------------------------------------------------------------------------------------
# Convolutions, fully connected, pooling


def conv_2d(c: Call):
    x = _merge(_fx(c, 0))
    w = c.const(1).astype(f32)
    o, kh, kw, ci = w.shape
    if x.shape[3] != ci:
        raise UnsupportedError(f"{c.op.label}: grouped convolution")
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    y = win.im2col(x, kh, kw, geom) @ w.reshape(o, -1).T + _bias(c)
    return _done(c, y)


def depthwise_conv_2d(c: Call):
    from mlitool.execute.tflite_ops import _depthwise_sum
    x = _merge(_fx(c, 0))
    w = c.const(1).astype(f32)
    y = _depthwise_sum(x, w, w.shape[3], c.op.options) + _bias(c)
    return _done(c, y)


def fully_connected(c: Call):
    w = c.const(1).astype(f32)
    depth = w.shape[-1]
    y = _fx(c, 0).reshape(-1, depth) @ w.reshape(-1, depth).T + _bias(c)
    return _done(c, y)


def _pool(c: Call, value):
    x = _merge(_fx(c, 0))
    kh, kw = c.opt("filter_h"), c.opt("filter_w")
    oh, ow, pt, pl, sh, sw, _, _ = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=value)
    return x, v, (kh, kw, oh, ow, pt, pl, sh, sw)


def average_pool_2d(c: Call):
    x, v, (kh, kw, oh, ow, pt, pl, sh, sw) = _pool(c, 0)
    count = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)
    return _done(c, v.sum(axis=(4, 5)) / count[None, :, :, None].astype(f32))


def max_pool_2d(c: Call):
    _, v, _ = _pool(c, -np.inf)
    return _done(c, v.max(axis=(4, 5)))


# --------------------------------------------------------------------------------------------
# Element-wise


def add(c: Call):
    a, b = c.aligned(0, 1)
    return _done(c, np.asarray(a, f32) + np.asarray(b, f32))


def sub(c: Call):
    a, b = c.aligned(0, 1)
    return _done(c, np.asarray(a, f32) - np.asarray(b, f32))


def mul(c: Call):
    a, b = c.aligned(0, 1)
    return _done(c, np.asarray(a, f32) * np.asarray(b, f32))


def maximum(c: Call):
    return [np.maximum(*c.aligned(0, 1))]


def minimum(c: Call):
    return [np.minimum(*c.aligned(0, 1))]


def relu(c: Call):
    return [np.maximum(_fx(c, 0), f32(0))]


def relu6(c: Call):
    return [np.clip(_fx(c, 0), f32(0), f32(6))]


def relu_n1_to_1(c: Call):
    return [np.clip(_fx(c, 0), f32(-1), f32(1))]


def leaky_relu(c: Call):
    x = _fx(c, 0)
    return [np.where(x >= 0, x, x * f32(c.opt("alpha", 0.2)))]


def prelu(c: Call):
    x, a = (np.asarray(v, f32) for v in c.aligned(0, 1))
    return [np.where(x >= 0, x, x * a)]


def logistic(c: Call):
    x = _fx(c, 0)
    return [(f32(1) / (f32(1) + np.exp(-x))).astype(f32)]


def tanh(c: Call):
    return [np.tanh(_fx(c, 0))]


def softmax(c: Call):
    x = _fx(c, 0) * f32(c.opt("beta", 1.0))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return [(e / e.sum(axis=-1, keepdims=True)).astype(f32)]


def l2_normalization(c: Call):
    x = _fx(c, 0)
    norm = np.sqrt(np.maximum((x * x).sum(axis=-1, keepdims=True), f32(1e-6)))
    return _done(c, x / norm)


def reduce_axes(c: Call) -> tuple[tuple[int, ...], bool]:
    """Reduction axes of input 0 in batched coordinates (shifted past the sample axis)."""
    nd = len(c.tin(0).shape)
    axes = np.asarray(c.const(1)).reshape(-1).astype(int)
    return tuple(sorted({int(a) % nd + 1 for a in axes})), bool(c.opt("keep_dims", False))


def mean(c: Call):
    axes, keep = reduce_axes(c)
    return [_fx(c, 0).mean(axis=axes, keepdims=keep, dtype=np.float64).astype(f32).reshape(c.out_shape())]


def identity(c: Call):
    """QUANTIZE / DEQUANTIZE in float mode: the real value passes unchanged."""
    return [_fx(c, 0)]


# --------------------------------------------------------------------------------------------
# Data movement (any dtype; shared with tflite mode)


def reshape(c: Call):
    return [np.reshape(c.x(0), c.out_shape())]


def transpose(c: Call):
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


def concatenation(c: Call):
    parts = [c.x(i) for i in range(len(c.op.inputs))]
    return [activate(concat_parts(c, parts), c.opt("fused_activation"))]


def pad_with(c: Call, value) -> list:
    paddings = np.asarray(c.const(1)).reshape(-1, 2).astype(int)
    width = ((0, 0),) + tuple((int(a), int(b)) for a, b in paddings)
    return [np.pad(c.x(0), width, constant_values=value)]


def pad(c: Call):
    value = 0
    if c.has(2):
        value = np.asarray(c.const(2)).reshape(-1)[0]
    return pad_with(c, value)


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


def strided_slice(c: Call):
    begin, end, strides = _ints(c, 1), _ints(c, 2), _ints(c, 3)
    if c.opt("ellipsis_mask", 0) or c.opt("new_axis_mask", 0):
        raise UnsupportedError(f"{c.op.label}: ellipsis_mask / new_axis_mask")
    bm, em, sm = c.opt("begin_mask", 0), c.opt("end_mask", 0), c.opt("shrink_axis_mask", 0)
    idx = []
    for d, (b, e, s) in enumerate(zip(begin, end, strides)):
        if c.opt("offset", False):
            e = b + e
        if sm >> d & 1:
            idx.append(slice(b, b + 1 if b != -1 else None, 1))
            continue
        idx.append(slice(None if bm >> d & 1 else b, None if em >> d & 1 else e, s))
    return [c.x(0)[(slice(None),) + tuple(idx)].reshape(c.out_shape())]


LAYOUT_OPS = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "ARG_MAX", "ARG_MIN",
              "SLICE", "SPLIT", "SPLIT_V", "STRIDED_SLICE")

KERNELS = {
    "CONV_2D": conv_2d,
    "DEPTHWISE_CONV_2D": depthwise_conv_2d,
    "FULLY_CONNECTED": fully_connected,
    "AVERAGE_POOL_2D": average_pool_2d,
    "MAX_POOL_2D": max_pool_2d,
    "ADD": add,
    "SUB": sub,
    "MUL": mul,
    "MAXIMUM": maximum,
    "MINIMUM": minimum,
    "RELU": relu,
    "RELU6": relu6,
    "RELU_N1_TO_1": relu_n1_to_1,
    "LEAKY_RELU": leaky_relu,
    "PRELU": prelu,
    "LOGISTIC": logistic,
    "TANH": tanh,
    "SOFTMAX": softmax,
    "L2_NORMALIZATION": l2_normalization,
    "MEAN": mean,
    "QUANTIZE": identity,
    "DEQUANTIZE": identity,
    "CONCATENATION": concatenation,
    "PAD": pad,
    "PADV2": pad,
    "RESHAPE": reshape,
    "SQUEEZE": reshape,
    "EXPAND_DIMS": reshape,
    "TRANSPOSE": transpose,
    "ARG_MAX": arg_max,
    "ARG_MIN": arg_min,
    "SLICE": slice_op,
    "SPLIT": split,
    "SPLIT_V": split_v,
    "STRIDED_SLICE": strided_slice,
}
