"""The numbers of MAC weights and bias: SA8 weights (the model's own or per-channel quantized),
SA32 bias, MLI 2.x / 1.x scale encoding (with channels whose scale MLI 2.x cannot hold clamped),
FX weights through per-channel tables, and real bias values.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import quant as Q
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder


def sa8_weights(
    wt: ir.Tensor, axis: int, per_channel: bool = True
) -> tuple[np.ndarray, np.ndarray, bool]:
    """(int8 data, float scales, per_axis) of the weights: the model's own for int8 weights,
    else symmetric quantization of the float weights, per channel along `axis` (when
    `per_channel` and they are 4-D) or per tensor."""
    if wt.dtype == "int8" and wt.quant is not None:
        if np.any(wt.quant.zero_point != 0):
            raise UnsupportedError(f"weights {wt.name!r} have a non-zero zero point")
        return np.asarray(wt.data, dtype=np.int8), np.asarray(wt.quant.scale), wt.quant.per_axis
    w = P.real(wt)
    qdq = wt.qdq
    if (
        qdq is not None
        and not np.any(qdq.zero_point != 0)
        and (not qdq.per_axis or qdq.axis == axis)
    ):  # a QDQ file's weights: the pair's int8 values and scales, exactly (passes.qdq)
        scales = np.asarray(qdq.scale, np.float64)
        q, _ = Q.int_quantize(w, scales, np.zeros_like(scales), 8, qdq.axis)
        return q.astype(np.int8), scales, qdq.per_axis
    per_axis = per_channel and len(wt.shape) == 4
    scales = Q.symmetric_scales(w, axis if per_axis else None).astype(np.float32)
    q, _ = Q.int_quantize(w, scales, np.zeros_like(scales), 8, axis if per_axis else None)
    return q, scales.astype(np.float64), per_axis


MAX_FRAC = 127  # MLI 2.x keeps scale frac bits in an int8


def clamp_degenerate(w_q, w_scale, b_q, b_float_scale, in_scale, axis, per_axis):
    """Channels whose scale is too small for MLI 2.x's int8 frac bits (trained to zero: scales
    near 1e-34) get a representable scale, the median of the others, with their weights and bias
    requantized to it (the weights become 0: the channel is zero anyway). Returns the arrays and
    a note for the manifest, or the inputs unchanged and None."""
    w_scale = np.asarray(w_scale, np.float64)
    b_scale = np.broadcast_to(np.asarray(b_float_scale, np.float64), w_scale.shape)
    tiny = np.finfo(np.float64).tiny
    bad = (Q.frac_bits_mli2(np.maximum(w_scale, tiny)) > MAX_FRAC) | (
        Q.frac_bits_mli2(np.maximum(b_scale, tiny)) > MAX_FRAC
    )
    if not bad.any():
        return w_q, w_scale, b_q, b_float_scale, None
    k = np.flatnonzero(bad)
    new = float(np.median(w_scale[~bad])) if (~bad).any() else 1.0
    in_s = np.float32(in_scale[0] if in_scale else 1.0)
    # Channels first (per-tensor: one channel), requantized from their real values.
    w_ch = (
        np.moveaxis(np.asarray(w_q), axis, 0).copy() if per_axis else np.asarray(w_q)[None].copy()
    )
    real = w_ch[k].astype(np.float64) * w_scale[k].reshape((-1,) + (1,) * (w_ch.ndim - 1))
    w_ch[k] = np.clip(np.round(real / new), -127, 127).astype(w_ch.dtype)
    new_b_scale = float(np.float32(in_s * np.float32(new)))
    b_out = np.array(b_q, np.int64).reshape(-1)
    if b_out.size == w_scale.size:
        b_out[k] = np.clip(np.round(b_out[k] * b_scale[k] / new_b_scale), -(2**31), 2**31 - 1)
    note = (
        f"{len(k)} channel(s) ({', '.join(map(str, k[:8]))}{', ...' if len(k) > 8 else ''}) "
        f"have scales below MLI 2.x's range (smallest {float(w_scale[k].min()):.3g}, max "
        f"|weight| {float(np.abs(real).max(initial=0.0)):.3g}): given scale {new:.6g}, "
        "weights requantized to it"
    )
    w_scale, b_scale = w_scale.copy(), b_scale.copy()
    w_scale[k], b_scale[k] = new, new_b_scale
    w_q = np.ascontiguousarray(np.moveaxis(w_ch, 0, axis) if per_axis else w_ch[0])
    return w_q, w_scale, b_out.astype(np.int32).reshape(np.shape(b_q)), b_scale, note


def sa32_bias(b: Builder, bt, x_idx, w_scale, cout) -> tuple[np.ndarray, np.ndarray]:
    """(int32 bias data, float32 bias scales)."""
    in_scale = b.sa_params(x_idx)
    in_s = np.float32(in_scale[0] if in_scale else 1.0)
    prod = (in_s * np.asarray(w_scale, dtype=np.float32)).astype(np.float64)
    if bt is None:
        return np.zeros(cout, np.int32), np.broadcast_to(prod, (cout,)) if prod.size > 1 else prod
    if bt.dtype == "int32" and bt.quant is not None:
        return np.asarray(bt.data, dtype=np.int32), np.asarray(bt.quant.scale)
    real = np.asarray(bt.data, dtype=np.float64)
    q, _ = Q.int_quantize(real, np.broadcast_to(prod, real.shape), np.zeros(real.shape), 32)
    return q.astype(np.int32), prod


def sa_weight_params(b: Builder, wm, bm, x, w_scale, b_float_scale, per_axis, dim) -> None:
    n = len(w_scale) if per_axis else 1
    if b.target.int16_scales:
        w16, wf = Q.encode_scale_mli2(w_scale)
        over = Q.mli2_scale_overflows(w_scale)
        if np.any(over):
            wm.notes.append(
                f"{int(over.sum())} scale(s) round to 32768: encoded as 16384 "
                "with one frac bit less"
            )
        b_fs = b_float_scale if per_axis else b_float_scale[:1]
        b16, bf = Q.bias_scale_mli2(int(x.scale[0]), int(x.scale_frac_bits[0]), w16, wf, b_fs)
        b_over = int(np.count_nonzero(bf < Q.frac_bits_mli2(b_fs)))
        if b_over:
            bm.notes.append(
                f"{b_over} scale(s) round to 32768: encoded as 16384 with one frac bit less"
            )
        wm.scale, wm.scale_frac_bits = w16, wf
        bm.scale, bm.scale_frac_bits = b16, bf
    else:
        wm.scale, f = Q.encode_scale_mli11(w_scale, per_axis)
        wm.scale_frac_bits = np.array([f], np.int8)
        bm.scale, fb = Q.encode_scale_mli11(
            b_float_scale if per_axis else b_float_scale[:1], per_axis
        )
        bm.scale_frac_bits = np.array([fb], np.int8)
    wm.zero_point = np.zeros(n, np.int16)
    bm.zero_point = np.zeros(n, np.int16)
    wm.dim = dim if per_axis else -1
    bm.dim = 0 if per_axis else -1


def fx_weights(b: Builder, wt: ir.Tensor, bits: int):
    """(max |real weight|, frac -> (FX weights, saturated count)).

    8-bit quantized weights go through per-channel tables (quant.py): the same numbers as
    dequantizing the whole tensor to float64, without that memory and time."""
    data = np.asarray(wt.data)
    if wt.quant is not None and Q.lut_applies(data, wt.quant.scale, wt.quant.axis):
        args = (data, wt.quant.scale, wt.quant.zero_point, wt.quant.axis)
        return Q.dequantized_abs_max(*args), lambda frac: Q.fx_requantize_8bit(*args, frac, bits)
    w_real = P.real(wt)
    return np.max(np.abs(w_real), initial=0.0), lambda frac: Q.fx_quantize(w_real, frac, bits)


def real_bias(b: Builder, bt: ir.Tensor, x_idx: int, wt: ir.Tensor) -> np.ndarray:
    data = np.asarray(bt.data)
    if bt.quant is not None and data.dtype.kind in "iu":
        return bt.quant.dequantize(data)
    if data.dtype.kind in "iu":  # int32 bias without its own scale: in * w
        p = b.sa_params(x_idx)
        w_scale = 1.0 if wt.quant is None else np.asarray(wt.quant.scale)  # as P.real reads it
        return data * (p[0] if p else 1.0) * w_scale
    return data.astype(np.float64)
