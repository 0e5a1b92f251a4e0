"""Quantization parameters of MLI tensors as broadcastable int64 arrays, and the requantization
steps MLI 2.0.2 derives from them (mli_prv_quant / mli_math norm_cast).

Activation arrays carry a leading batch axis, so per-axis parameters along `dim` are shaped to
broadcast against (B,) + tensor.shape.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.kernels.intops import asr_rnd, norm, sat
from mlitool.mli.types import ElType, MliTensor


def _along(values: np.ndarray, t: MliTensor, batched: bool) -> np.ndarray:
    values = np.asarray(values, dtype=np.int64).reshape(-1)
    if not (t.el_type.is_sa and t.dim >= 0):
        return values[0]
    shape = [1] * (t.rank + int(batched))
    shape[t.dim + int(batched)] = values.size
    return values.reshape(shape)


def scale_of(t: MliTensor, batched: bool = True) -> np.ndarray:
    """`mli_hlp_tensor_scale`: the int16 scale (1 for FX and FP32)."""
    if t.el_type.is_sa:
        return _along(t.scale, t, batched)
    return np.int64(1)


def frac_of(t: MliTensor, batched: bool = True) -> np.ndarray:
    """`mli_hlp_tensor_scale_shift`: scale frac bits (SA), frac bits (FX), 0 (FP32)."""
    if t.el_type.is_sa:
        return _along(t.scale_frac_bits, t, batched)
    if t.el_type.is_fx:
        return np.int64(t.frac_bits)
    return np.int64(0)


def zp_of(t: MliTensor, batched: bool = True) -> np.ndarray:
    """`mli_hlp_tensor_zero_offset`: the zero point (0 for FX and FP32)."""
    if t.el_type.is_sa:
        return _along(t.zero_point, t, batched)
    return np.int64(0)


def norm_cast(val, in_bits: int, out_bits: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """`mli_math_norm_cast_fx<in, out>`: (value normalised into out_bits, the right shift used)."""
    shift = (in_bits - out_bits) - norm(val, in_bits)
    return sat(asr_rnd(val, shift, in_bits, mode), out_bits), shift


def requant_params(inp: MliTensor, out: MliTensor, mode: str, batched: bool = True):
    """`define_requant_params`: (scale16, shift, offset16) mapping `inp` onto `out` (per axis)."""
    sc_in, sc_out = scale_of(inp, batched), scale_of(out, batched)
    pre_div = norm(sc_in, 32) - norm(sc_out, 16)
    ratio = (sc_in << pre_div) // sc_out  # both positive: floor == C truncation
    scale, norm_shift = norm_cast(ratio, 32, 16, mode)
    shift = pre_div + frac_of(inp, batched) - frac_of(out, batched) - norm_shift
    zp_term = sat(asr_rnd(scale * zp_of(inp, batched), shift, 32, mode), 16)
    offset = sat(zp_of(out, batched) - zp_term, 16)
    return scale, sat(shift, 16), offset


def batched_view(x: np.ndarray, t: MliTensor) -> np.ndarray:
    """`x` as (B,) + t.shape int64; an array without the batch axis (a constant) gets B = 1."""
    x = np.asarray(x)
    if x.ndim == t.rank:
        x = x[None]
    return x.reshape((x.shape[0],) + t.shape).astype(np.int64)


def storage(el_type: ElType) -> int:
    """Container width in bits of an integer element type."""
    return el_type.dtype.itemsize * 8
