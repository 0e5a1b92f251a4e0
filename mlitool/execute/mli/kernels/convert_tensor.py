"""`mli_hlp_convert_tensor` (MLI 2.0.2): between FX8, FX16, SA8, SA32 and FP32, per-axis SA too."""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.kernels.adapter import Runner, runner
from mlitool.execute.mli.kernels.intops import Arith, asr_rnd, norm, sat
from mlitool.execute.mli.kernels.qparams import (
    batched_view,
    frac_of,
    requant_params,
    scale_of,
    storage,
    zp_of,
)
from mlitool.mli.types import ElType, MliTensor

_INT32_MIN = -(1 << 31)


def convert(x, inp: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    """Convert the batch `x` ((B,) + inp.shape, or inp.shape) from `inp`'s format to `out`'s."""
    if inp.el_type == ElType.FP32 and out.el_type == ElType.FP32:
        res = np.asarray(x, dtype=np.float32)
    elif inp.el_type == ElType.FP32:
        res = _quantize(x, inp, out)
    elif out.el_type == ElType.FP32:
        res = _dequantize(x, inp)
    else:
        res = _requantize(batched_view(x, inp), inp, out, arith.round_mode)
    res = np.asarray(res)
    if res.ndim == inp.rank:
        res = res[None]
    return res.reshape((res.shape[0],) + out.shape).astype(out.el_type.dtype)


def _requantize(x: np.ndarray, inp: MliTensor, out: MliTensor, mode: str) -> np.ndarray:
    wide = ElType.SA32 in (inp.el_type, out.el_type)  # the reference uses an int64 accumulator
    acc_bits = 64 if wide else 32
    scale, shift, _ = requant_params(inp, out, mode)
    shift = np.minimum(shift, acc_bits - 1)
    in_zp, out_zp = zp_of(inp), zp_of(out)
    if wide:
        # Both factors normalised to 32 bits, the high word of the product, one rounding shift.
        v = sat(x - in_zp, 32)
        v_norm = norm(v, 32)
        v = v << v_norm
        s_norm = norm(scale, 32)
        prod_hi = (v * (scale << s_norm)) >> 32
        res = asr_rnd(prod_hi, shift + s_norm + v_norm - 32, 32, mode)
    else:
        v = sat(x - in_zp, 16)
        res = asr_rnd(v * scale, shift, 32, mode)
    res = sat(res + out_zp, 32)
    return sat(res, storage(out.el_type))


def _float_scale(t: MliTensor, quantize: bool) -> np.ndarray:
    """The float32 multiplier the reference computes with ldexp from the int16 scale."""
    scale = np.asarray(scale_of(t), dtype=np.float32)
    frac = np.asarray(frac_of(t))
    if quantize:
        return np.ldexp(np.float32(1.0) / scale, frac).astype(np.float32)
    return np.ldexp(scale, -frac).astype(np.float32)


def _quantize(x, inp: MliTensor, out: MliTensor) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == inp.rank:
        x = x[None]
    x = x.reshape((x.shape[0],) + inp.shape)
    scaled = x * _float_scale(out, quantize=True)
    scaled = scaled + np.where(x > 0, np.float32(0.5), np.float32(-0.5)).astype(np.float32)
    # (int32_t) cast of a float: truncation; out of range (or NaN) gives INT32_MIN on x86.
    ok = (scaled >= np.float32(-(2.0**31))) & (scaled < np.float32(2.0**31))
    q = np.where(ok, np.trunc(np.where(ok, scaled, 0)).astype(np.int64), _INT32_MIN)
    q = sat(q + zp_of(out), 32)
    return sat(q, storage(out.el_type))


def _dequantize(x, inp: MliTensor) -> np.ndarray:
    q = batched_view(x, inp)
    v = sat(q - zp_of(inp), 32).astype(np.float32)
    return v * _float_scale(inp, quantize=False)


LAYER_RUNNERS: dict[str, Runner] = {"convert": runner(convert, cfg=False)}
