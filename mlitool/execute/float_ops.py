"""`float` mode kernels: TFLite float semantics on real values (float32), batched over samples.

Quantized tensors are represented by their real values (the walker dequantizes constants and
integer inputs); QUANTIZE and DEQUANTIZE are identities, so no activation is re-quantized — float
mode is the accuracy reference. The data-movement kernels shared with `tflite` mode are in
`layout_ops`.
"""

from __future__ import annotations

import numpy as np

from mlitool import lstm_slots as lstm
from mlitool.errors import UnsupportedError
from mlitool.execute import repro
from mlitool.execute import windows as win
from mlitool.execute.call import Call
from mlitool.execute.channels import long_rows
from mlitool.execute.layout_ops import concat_parts, pad_with
from mlitool.execute.repro import matmul

f32 = np.float32


def _merge(x: np.ndarray) -> np.ndarray:
    return x.reshape((-1,) + x.shape[2:])


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


def _fx(c: Call, i: int | str) -> np.ndarray:
    return np.asarray(c.x(i), dtype=f32)


def _bias(c: Call):
    return c.const("bias").astype(f32) if c.has("bias") else f32(0)


def _done(c: Call, y: np.ndarray) -> list:
    """The fused activation, in place on a fresh kernel result `y`."""
    y = y.astype(f32, copy=False)
    return [activate(y, c.opt("fused_activation"), out=y).reshape(c.out_shape())]


def _plus_bias(c: Call, y: np.ndarray) -> np.ndarray:
    """y (fresh, float32, channels last) + the bias, in place."""
    if c.has("bias"):
        rows, b = long_rows(y, _bias(c))
        rows += b
    return y


# --------------------------------------------------------------------------------------------
# Convolutions, fully connected, pooling


def conv_2d(c: Call):
    x = _merge(_fx(c, "input"))
    w = c.const("weights").astype(f32)
    o, kh, kw, ci = w.shape
    if x.shape[3] != ci:
        raise UnsupportedError(f"{c.op.label}: grouped convolution")
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    w = w.reshape(o, -1).T
    if not repro.finite(x, w):
        return _done(c, _plus_bias(c, matmul(win.im2col(x, kh, kw, geom), w)))
    # The grid of each sample's input, before im2col: a K-times smaller array to round
    xi, scale = repro.on_grid(x, w.shape[0])
    rows = np.repeat(scale, geom[0] * geom[1])
    return _done(c, _plus_bias(c, repro.grid_matmul(win.im2col(xi, kh, kw, geom), rows, w)))


def depthwise_conv_2d(c: Call):
    x = _merge(_fx(c, "input"))
    w = c.const("weights").astype(f32)
    return _done(c, _plus_bias(c, win.depthwise_sum(x, w, c.op.options)))


def transpose_conv(c: Call):
    """TRANSPOSE_CONV: inputs output_shape, weights (O, KH, KW, I), input, optional bias."""
    x = _merge(_fx(c, "input"))
    w = c.const("weights").astype(f32)
    out_h, out_w = c.tout().shape[1:3]
    y = win.transpose_conv_sum(x, w, c.op.options, out_h, out_w, matmul) + _bias(c)
    return _done(c, y)


def fully_connected(c: Call):
    w = c.const("weights").astype(f32)
    depth = w.shape[-1]
    x = _fx(c, "input").reshape(-1, depth)
    return _done(c, _plus_bias(c, matmul(x, w.reshape(-1, depth).T)))


def _pool(c: Call, value):
    x = _merge(_fx(c, 0))
    kh, kw, geom = win.pool_geometry(
        c.op.options, x.shape[1], x.shape[2], c.opt("filter_h"), c.opt("filter_w")
    )
    oh, ow, pt, pl, sh, sw, _, _ = geom
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
    return [(f32(1) / (f32(1) + repro.exp(-x))).astype(f32)]


def tanh(c: Call):
    return [repro.tanh(_fx(c, 0))]


def softmax(c: Call):
    x = _fx(c, 0) * f32(c.opt("beta", 1.0))
    e = repro.exp(x - x.max(axis=-1, keepdims=True))
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


def identity(c: Call):
    """QUANTIZE / DEQUANTIZE in float mode: the real value passes unchanged."""
    return [_fx(c, 0)]


# --------------------------------------------------------------------------------------------
# Concatenation and padding (the fused activation / the padding value are float semantics)


def concatenation(c: Call):
    parts = [c.x(i) for i in range(len(c.op.inputs))]
    return [activate(concat_parts(c, parts), c.opt("fused_activation"))]


def pad(c: Call):
    value = 0
    if c.has(2):
        value = np.asarray(c.const(2)).reshape(-1)[0]
    return pad_with(c, value)


# --------------------------------------------------------------------------------------------
# Recurrent


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return (f32(1) / (f32(1) + repro.exp(-v))).astype(f32)


def unidirectional_sequence_lstm(c: Call):
    """UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's float kernel (lstm_eval.cc): peephole, projection
    (bias, clip) and a model batch of B sequences; no layer normalization. CIFG (no input gate
    weights) uses 1 - forget. The state starts at zero for every sample: one inference is B
    sequences."""
    if any(c.has(k) for k in lstm.LAYER_NORM):
        raise c.unsupported("an LSTM with layer normalization")
    time_major = bool(c.opt("time_major", False))
    x = _fx(c, 0)
    if time_major:
        x = x.swapaxes(1, 2)  # (n, B, T, N)
    n, batch, steps = x.shape[:3]
    x = x.reshape(n * batch, steps, -1)  # sequences are independent
    w = {
        k: c.const(k).astype(f32)
        for k in lstm.INPUT_WEIGHTS
        + lstm.RECURRENT_WEIGHTS
        + lstm.PEEPHOLE
        + lstm.BIASES
        + lstm.PROJECTION
        if c.has(k)
    }
    m = w[lstm.RECURRENT_WEIGHTS[3]].shape[0]
    proj, proj_bias = (w.get(k) for k in lstm.PROJECTION)
    act = c.opt("fused_activation", "TANH")
    clip = float(c.opt("cell_clip", 0.0) or 0.0)
    proj_clip = float(c.opt("proj_clip", 0.0) or 0.0)

    peephole = dict(zip((0, 1, 3), lstm.PEEPHOLE))  # the cell gate has none

    def gate(g: int, xt: np.ndarray, h: np.ndarray, cell: np.ndarray | None = None):
        v = (
            matmul(xt, w[lstm.INPUT_WEIGHTS[g]].T)
            + matmul(h, w[lstm.RECURRENT_WEIGHTS[g]].T)
            + w.get(lstm.BIASES[g], f32(0))
        )
        return v + cell * w[peephole[g]] if peephole.get(g) in w else v

    h = np.zeros((x.shape[0], w[lstm.RECURRENT_WEIGHTS[3]].shape[1]), f32)
    cell = np.zeros((x.shape[0], m), f32)
    outs, cells = [], []
    for t in range(steps):
        xt = x[:, t]
        f = _sigmoid(gate(1, xt, h, cell))
        i = _sigmoid(gate(0, xt, h, cell)) if lstm.INPUT_WEIGHTS[0] in w else f32(1) - f
        cell = f * cell + i * activate(gate(2, xt, h), act)
        if clip > 0:
            cell = np.clip(cell, f32(-clip), f32(clip))
        h = (_sigmoid(gate(3, xt, h, cell)) * activate(cell, act)).astype(f32)
        if proj is not None:
            h = matmul(h, proj.T) + (f32(0) if proj_bias is None else proj_bias)
            if proj_clip > 0:
                h = np.clip(h, f32(-proj_clip), f32(proj_clip))
        outs.append(h)
        cells.append(cell)
    if c.has(lstm.CELL_STATE):
        # Every step's cell state, under the state tensor: what calibration takes its range from
        # (no graph tensor holds it; nothing reads a variable's value).
        c.values[c.op.inputs[lstm.CELL_STATE]] = np.stack(cells, axis=1).reshape(n, batch, steps, m)
    y = np.stack(outs, axis=1).reshape(n, batch, steps, -1)
    return [(y.swapaxes(1, 2) if time_major else y).reshape(c.out_shape())]
