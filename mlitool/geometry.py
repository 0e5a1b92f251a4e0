"""Window geometry both lowering and the executors follow: TFLite's padding rule and the MLI
2.0.2 pooling hazard (mli-arithmetic.md 8b), with the equivalent safe pooling configuration."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError


def tflite_padding(
    padding: str, in_size: int, filter_size: int, stride: int, dilation: int = 1
) -> tuple[int, int, int]:
    """(out_size, pad_before, pad_after) exactly as TFLite's ComputePaddingHeightWidth."""
    eff = (filter_size - 1) * dilation + 1
    if padding == "SAME":
        out = (in_size + stride - 1) // stride
    elif padding == "VALID":
        out = (in_size - eff + stride) // stride
    else:
        raise UnsupportedError(f"padding {padding!r} is not SAME or VALID")
    if padding == "VALID":
        return out, 0, 0
    total = max((out - 1) * stride + eff - in_size, 0)
    return out, total // 2, total // 2 + total % 2


def mli_window(stride: tuple[int, int], pads: tuple[int, int, int, int]) -> dict:
    """MLI's stride and padding config fields, in mli_conv2d_cfg / mli_pool_cfg order, from
    (stride_h, stride_w) and (top, bottom, left, right)."""
    (sh, sw), (pt, pb, pl, pr) = stride, pads
    return {
        "stride_width": sw,
        "stride_height": sh,
        "padding_left": pl,
        "padding_right": pr,
        "padding_top": pt,
        "padding_bottom": pb,
    }


def pool_hazard(in_size: int, kernel: int, pad_before: int, pad_after: int) -> bool:
    """MLI 2.0.2 pooling writes outside its output when this holds (mli-arithmetic.md 8b)."""
    return min(pad_before, pad_after) < kernel - in_size - 1


def _windows(in_size, kernel, stride, pb, out):
    start = np.arange(out) * stride - pb
    return np.maximum(start, 0), np.minimum(start + kernel - 1, in_size - 1)


def safe_pool_axis(
    in_size: int, kernel: int, stride: int, pb: int, pa: int, out: int
) -> tuple[int, int, int, int] | None:
    """An equivalent (kernel, stride, pad_before, pad_after) without the hazard, or None.

    Pooling over padding only counts valid elements (average divides by them, max ignores them),
    so a configuration whose every output window covers the same input elements gives the same
    result. Keeps the original when it is safe.
    """
    if not pool_hazard(in_size, kernel, pb, pa):
        return kernel, stride, pb, pa
    lo, hi = _windows(in_size, kernel, stride, pb, out)
    strides = [stride] if out > 1 else [max(stride, in_size)]
    # A window or a padding wider than twice the input is never needed to cover what the
    # original covers (LiteRT runs SAME windows of 65536 over a few columns; fuzzed files say
    # 2^31 - 1): the search stops there.
    reach = 2 * in_size + 1
    for s in strides:
        for k in range(1, min(kernel, reach) + 1):
            for b in range(0, min(pb, reach) + 1):
                a = max(0, (out - 1) * s + k - in_size - b)
                if pool_hazard(in_size, k, b, a) or (in_size + b + a - k) // s + 1 != out:
                    continue
                lo2, hi2 = _windows(in_size, k, s, b, out)
                if np.array_equal(lo, lo2) and np.array_equal(hi, hi2):
                    return k, s, b, a
    return None


def transpose_conv_padding(
    padding: str, in_size: int, out_size: int, filter_size: int, stride: int
) -> tuple[int, int]:
    """(pad_before, pad_after) of a TRANSPOSE_CONV axis: out[i * stride + k - pad_before] +=
    in[i] * w[k] for outputs inside [0, out_size).

    TFLite pads as the forward convolution from `out_size` to `in_size` would (its
    ComputePaddingHeightWidth on the output size); `pad_after` is what is then cut at the far
    end, `(in_size - 1) * stride + filter_size - pad_before - out_size` (MLI's
    mli_krn_transpose_conv2d takes both: its output size is that expression). It is negative
    when `out_size` asks for more rows than any tap reaches (only bias there).
    """
    _, before, _ = tflite_padding(padding, out_size, filter_size, stride)
    return before, (in_size - 1) * stride + filter_size - before - out_size


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
