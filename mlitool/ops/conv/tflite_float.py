"""`tflite` mode kernels of float32 CONV_2D, TRANSPOSE_CONV and FULLY_CONNECTED: each sum added
term by term in the order of TFLite's reference kernels (`sequential.ordered_matmul`), so the
float32 results are LiteRT's BUILTIN_REF bits, not merely within float32 rounding of them.
Float mode keeps its order-free sums (`float_mode.py`, `repro.matmul`): on BLAS they cost about
two thirds of these at a batch of 32, and calibration runs float mode over every sample.

- reference_ops::Conv: per output, `total += input * filter` over filter y, filter x, input
  channel (of the group), from 0.0, then `total + bias`, then the activation clamp. Padding taps
  are skipped there and added as 0 * w here: the same sum for finite weights.
- reference_ops::FullyConnected: over the input depth, from 0.0, then `+ bias`, then the clamp.
- reference_ops::TransposeConv: a scatter from output 0.0 in the order batch, input y, input x,
  input channel (so, for one output, filter y and x descending), then `+ bias` in a second pass,
  then the clamp.
- DEPTHWISE_CONV_2D needs nothing new: `windows.tap_sum` already adds its taps in filter y,
  filter x order (float mode's kernel).
"""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import (
    activated,
    merge_batch,
    plus_bias,
    real_input,
)
from mlitool.execute.reference.sequential import ordered_matmul
from mlitool.geometry import transpose_conv_padding
from mlitool.ops.conv.float_mode import groups

f32 = np.float32


def conv_2d(c: Call):
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    kh, kw = w.shape[1:3]
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    sums = [
        ordered_matmul(_patches(xg, kh, kw, geom).T, wg.reshape(len(wg), -1).T)
        for xg, wg in groups(c, x, w)
    ]
    y = np.concatenate(sums, axis=-1) if len(sums) > 1 else sums[0]
    return activated(c, plus_bias(c, y))


def _patches(x: np.ndarray, kh: int, kw: int, geom) -> np.ndarray:
    """im2col transposed, (KH*KW*C, B*OH*OW) contiguous: one row per term, in the reference
    loop's order (filter y, filter x, channel), which `ordered_matmul` walks (transposed when
    there are fewer filters than positions: then without another copy)."""
    v = win.windows(x, kh, kw, *geom)  # (B, OH, OW, C, KH, KW)
    return np.ascontiguousarray(v.transpose(4, 5, 3, 0, 1, 2)).reshape(kh * kw * x.shape[3], -1)


def fully_connected(c: Call):
    w = c.const("weights").astype(f32)
    depth = w.shape[-1]
    x = real_input(c, "input").reshape(-1, depth)
    return activated(c, plus_bias(c, ordered_matmul(x, w.reshape(-1, depth).T)))


def transpose_conv(c: Call):
    """TRANSPOSE_CONV: inputs output_shape, weights (O, KH, KW, I), input, optional bias."""
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    out_h, out_w = c.tout().shape[1:3]
    y = transpose_conv_scatter(x, w, c.op.options, out_h, out_w)
    return activated(c, plus_bias(c, y))


def transpose_conv_scatter(
    x: np.ndarray, w: np.ndarray, options: dict, out_h: int, out_w: int
) -> np.ndarray:
    """reference_ops::TransposeConv's float sums (no bias) of NHWC `x` and filter w (O, KH, KW, I).

    One output receives its terms in input (y, x, channel) order; input y = (out y + pad - filter
    y) / stride grows as filter y falls, so the taps run filter y, then filter x, descending, each
    adding its I channels in turn onto the strided slice of outputs it reaches. Outputs outside
    [0, out) are never formed by LiteRT; the accumulator spans them and they are cut off."""
    b, h, wd, ci = x.shape
    o, kh, kw, _ = w.shape
    sh, sw = options.get("stride_h", 1), options.get("stride_w", 1)
    padding = options.get("padding", "SAME")
    pt, _ = transpose_conv_padding(padding, h, out_h, kh, sh)
    pl, _ = transpose_conv_padding(padding, wd, out_w, kw, sw)
    full_h, full_w = max((h - 1) * sh + kh, pt + out_h), max((wd - 1) * sw + kw, pl + out_w)
    acc = np.zeros((b, full_h, full_w, o), dtype=f32)
    rows = x.reshape(-1, ci)
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            reached = acc[:, i : i + (h - 1) * sh + 1 : sh, j : j + (wd - 1) * sw + 1 : sw, :]
            reached[...] = ordered_matmul(rows, w[:, i, j, :].T, reached.reshape(-1, o)).reshape(
                reached.shape
            )
    return np.ascontiguousarray(acc[:, pt : pt + out_h, pl : pl + out_w, :])
