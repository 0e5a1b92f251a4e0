"""Parameter encodings: float scale -> MLI scale + frac bits, FX frac-bit choice, requantization.

Section 3 of mli-arithmetic.md. The SA encodings reproduce the TFLite Micro ARC integration
(`MliTensorInterface::SetScale` / `SetScalePerChannel`, `AdjustBiasTensor`): the float scale is a
C `float`, and `(1ll << frac) * fscale + 0.5f` is evaluated in float32, then truncated. All
functions are vectorized over per-channel arrays.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.mli.target import Target

_F32_HALF = np.float32(0.5)


def _frexp32(s) -> tuple[np.ndarray, np.ndarray]:
    """(float32 scales, exponents e with s = m * 2^e, m in [0.5, 1)); rejects s <= 0."""
    s32 = np.asarray(s, dtype=np.float64).astype(np.float32)
    if s32.ndim == 0:
        s32 = s32.reshape(1)
    if not (np.isfinite(s32) & (s32 > 0)).all():  # also rejects NaN
        raise UnsupportedError(
            f"quantization scale(s) {s32[~(s32 > 0) | ~np.isfinite(s32)][:4]} "
            "are not finite positive numbers"
        )
    _, e = np.frexp(s32)
    return s32, e.astype(np.int64)


def _scaled_f32(s32: np.ndarray, frac: np.ndarray) -> np.ndarray:
    """trunc(float32(s * 2^frac) + 0.5f) as int64, like the integration's C expression."""
    v = np.ldexp(s32, frac.astype(np.int32)).astype(np.float32)
    return np.trunc(v + _F32_HALF).astype(np.int64)


def _check_int8(frac: np.ndarray, what: str) -> None:
    if frac.size and (frac.min() < -128 or frac.max() > 127):
        raise UnsupportedError(
            f"{what}: scale frac bits {frac.min()}..{frac.max()} do not fit "
            "int8 (scale too small or too large for MLI)"
        )


def encode_scale_mli2(s) -> tuple[np.ndarray, np.ndarray]:
    """MLI 2.x: (int16 scale, int8 frac_bits) with scale * 2^-frac ~= s, per element of `s`.

    frac = 15 - e, scale = trunc(float32(s * 2^frac) + 0.5f). When that rounds up to 32768 (mantissa
    just below 1) the integration's int16 cast wraps to -32768; we emit the equal value
    16384 * 2^-(frac - 1) instead (see `mli2_scale_overflows`).
    """
    s32, e = _frexp32(s)
    frac = 15 - e
    scale = _scaled_f32(s32, frac)
    over = scale >= 32768
    scale = np.where(over, 16384, scale)
    frac = np.where(over, frac - 1, frac)
    _check_int8(frac, "MLI 2.x scale")
    return scale.astype(np.int16), frac.astype(np.int8)


def mli2_scale_overflows(s) -> np.ndarray:
    """True where the plain int16 rounding of `s` gives 32768 (the overflow case above)."""
    s32, e = _frexp32(s)
    return _scaled_f32(s32, 15 - e) >= 32768


def encode_sa_scale(s: float, target: Target) -> tuple[np.ndarray, np.ndarray, bool]:
    """One per-tensor SA scale as `target` holds it: (scale, scale_frac_bits, True when the
    int16 rounding gave 32768, see `encode_scale_mli2`)."""
    if target.int16_scales:
        return (*encode_scale_mli2(s), bool(mli2_scale_overflows(s)[0]))
    s32, f = encode_scale_mli11(s, per_axis=False)
    return s32, np.array([f], dtype=np.int8), False


def frac_bits_mli2(s) -> np.ndarray:
    """The integration's frac bits `15 - e` of a float scale (no overflow adjustment), int64."""
    return 15 - _frexp32(s)[1]


def encode_scale_mli11(s, per_axis: bool) -> tuple[np.ndarray, int]:
    """MLI 1.1: (int32 scales, one int frac_bits) as `SetScale` / `SetScalePerChannel` compute.

    frac = 31 - e (per axis: the minimum over channels, shared); scale = trunc(float32(s * 2^frac)
    + 0.5f), so only float32's 24 significant bits survive.
    """
    s32, e = _frexp32(s)
    fracs = 31 - e
    if not per_axis and s32.size != 1:
        raise ValueError("per-tensor encoding needs exactly one scale")
    frac = int(fracs.min())
    _check_int8(np.array([frac]), "MLI 1.1 scale")
    scale = _scaled_f32(s32, np.full(s32.shape, frac))
    if np.any(scale >= 2**31):
        raise UnsupportedError("MLI 1.1 scale overflows int32")
    return scale.astype(np.int32), frac


def bias_scale_mli2(
    in_scale16: int, in_frac: int, w_scale16, w_frac, bias_float_scale
) -> tuple[np.ndarray, np.ndarray]:
    """SA32 bias (scale int16[n], frac int8[n]) consistent with the emitted in/weight encodings.

    bias_frac[k] = 15 - e of TFLite's float bias scale; then, as `AdjustBiasTensor` does,
    bias_scale[k] = (in_scale16 * w_scale16[k]) >> (in_frac + w_frac[k] - bias_frac[k]) in int32.
    When that gives 32768 (the float bias scale just below a power of two while the encoded
    product is not, e.g. a weight scale encoded 16384 with one frac bit less), the integration's
    int16 wraps; as for weights (`encode_scale_mli2`) the frac bits come from the encoded product
    instead: one less, and the scale shifted once more (16384 for 32768).
    """
    w_scale16 = np.atleast_1d(np.asarray(w_scale16, dtype=np.int64))
    w_frac = np.atleast_1d(np.asarray(w_frac, dtype=np.int64))
    b_frac = np.broadcast_to(frac_bits_mli2(bias_float_scale), w_scale16.shape).astype(np.int64)
    prod = np.int64(in_scale16) * w_scale16

    def shifted(shift):
        return np.where(shift >= 0, prod >> np.maximum(shift, 0), prod << np.maximum(-shift, 0))

    shift = np.int64(in_frac) + w_frac - b_frac
    scale = shifted(shift)
    over = scale >= 32768
    scale = np.where(over, shifted(shift + 1), scale)
    b_frac = np.where(over, b_frac - 1, b_frac)
    if np.any(scale <= 0) or np.any(scale > 32767):
        raise UnsupportedError(
            f"bias scale {scale.min()}..{scale.max()} does not fit a positive "
            "int16 (inconsistent input/weight/bias quantization)"
        )
    _check_int8(b_frac, "bias scale")
    return scale.astype(np.int16), b_frac.astype(np.int8)


# --- FX (fixed point) -------------------------------------------------------------------------


def fx_frac_bits(max_abs: float, bits: int) -> int:
    """MLI's conversion-tool rule: int_bits = ceil(log2(max|x|)), frac = (bits - 1) - int_bits."""
    max_abs = float(max_abs)
    if not np.isfinite(max_abs):
        raise UnsupportedError(f"value range {max_abs} is not finite")
    if max_abs <= 0:
        return bits - 1
    return (bits - 1) - int(np.ceil(np.log2(max_abs)))


def mac_headroom_deficit(k_macs: int, in_bits: int, w_bits: int, acc_bits: int) -> int:
    """Bits the accumulator lacks for `k_macs` full-scale products (0 when it has enough).

    extra = ceil(log2(K + 1)); guard = acc_bits - 1 - (w_bits - 1 + in_bits - 1).
    """
    extra = int(np.ceil(np.log2(k_macs + 1)))
    guard = acc_bits - 1 - ((w_bits - 1) + (in_bits - 1))
    return max(0, extra - guard)


def acc_bits_of(fmt: str) -> int:
    """Accumulator width on the target: 40 for fx16, 32 for fx8 and fx16_fx8_fx8 (fx8w16d)."""
    return 40 if fmt == "fx16" else 32


def fx_quantize(x, frac: int, bits: int) -> tuple[np.ndarray, int]:
    """Real values -> FX integers (round half away from zero, like mli_hlp_convert_tensor),
    saturated to `bits`; returns (array in the container dtype, number of saturated values)."""
    q, saturated = _fx_quantize_mask(x, frac, bits)
    return q, int(np.count_nonzero(saturated))


def _fx_quantize_mask(x, frac: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """`fx_quantize`, with the mask of saturated values instead of their count."""
    v = np.ldexp(np.asarray(x, dtype=np.float64), frac)
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    saturated = (q < lo) | (q > hi)
    dtype = np.int8 if bits <= 8 else np.int16 if bits <= 16 else np.int32
    return np.clip(q, lo, hi).astype(dtype), saturated


# --- 8-bit quantized data -> FX through per-channel tables ---------------------------------------
#
# An 8-bit quantized tensor holds at most 256 values per channel, so its real values, and their FX
# encodings, are a (channels, 256) table: computing the table with the very same float operations
# as `dequantize` + `fx_quantize` and looking the data up gives identical results without float64
# copies of the whole tensor (8x its size, several times over).

_LUT_CHUNK = 1 << 20  # elements looked up per step: bounds the int64 index temporary


def lut_applies(q: np.ndarray, scale, axis: int | None) -> bool:
    """True when `q` (with these scales) can take the table path."""
    scale = np.asarray(scale)
    return (
        q.dtype.kind in "iu"
        and q.dtype.itemsize == 1
        and q.size > 0
        and bool(np.all(np.isfinite(scale)))
        and (axis is None or (0 <= axis < q.ndim and q.shape[axis] == scale.size))
    )


def _by_channel(q: np.ndarray, axis: int | None) -> np.ndarray:
    """uint8 codes (the raw bytes) as (channels, elements per channel)."""
    codes = q.view(np.uint8)
    if axis is None:
        return codes.reshape(1, -1)
    return np.ascontiguousarray(np.moveaxis(codes, axis, 0)).reshape(q.shape[axis], -1)


def _from_channel(a: np.ndarray, q: np.ndarray, axis: int | None) -> np.ndarray:
    if axis is None:
        return a.reshape(q.shape)
    moved = (q.shape[axis],) + tuple(d for i, d in enumerate(q.shape) if i != axis)
    return np.ascontiguousarray(np.moveaxis(a.reshape(moved), 0, axis))


def _real_table(q: np.ndarray, scale, zero_point, axis: int | None) -> np.ndarray:
    """float64[(channels, 256)]: the real value of every byte code, exactly as
    `ir.Quant.dequantize` computes it: (q - zero_point) * scale."""
    values = np.arange(256, dtype=np.uint8).view(q.dtype).astype(np.float64)
    scale = np.asarray(scale, dtype=np.float64).reshape(-1)
    zp = np.asarray(zero_point).reshape(-1)
    if axis is None:
        scale, zp = scale[:1], zp[:1]
    return (values[None, :] - zp[:, None]) * scale[:, None]


def _lookup(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """table[c, codes[c, k]] for (channels, k) codes, in bounded steps."""
    channels, k = codes.shape
    out = np.empty(codes.shape, table.dtype)
    if channels == 1:
        flat_codes, flat_out = codes.reshape(-1), out.reshape(-1)
        for start in range(0, flat_codes.size, _LUT_CHUNK):
            step = slice(start, start + _LUT_CHUNK)
            np.take(table[0], flat_codes[step], out=flat_out[step], mode="clip")
        return out
    flat_table = table.reshape(-1)
    rows = max(1, _LUT_CHUNK // max(k, 1))
    for r0 in range(0, channels, rows):
        idx = codes[r0 : r0 + rows].astype(np.intp)
        idx += np.arange(r0, r0 + idx.shape[0], dtype=np.intp)[:, None] * 256
        np.take(flat_table, idx, out=out[r0 : r0 + rows], mode="clip")
    return out


def dequantized_abs_max(q: np.ndarray, scale, zero_point, axis: int | None) -> float:
    """max |real value| of 8-bit quantized `q` (see `lut_applies`), equal to
    `np.max(np.abs(dequantize(q)))`: per channel the real value is monotonic in q, so the
    extremes are at the channel's smallest and largest q."""
    table = _real_table(q, scale, zero_point, axis)
    if axis is None:
        lo, hi = np.array([q.min()]), np.array([q.max()])
    else:
        others = tuple(i for i in range(q.ndim) if i != axis)
        lo, hi = q.min(axis=others).reshape(-1), q.max(axis=others).reshape(-1)
    rows = np.arange(table.shape[0])
    ends = np.concatenate(
        [
            table[rows, lo.astype(q.dtype).view(np.uint8)],
            table[rows, hi.astype(q.dtype).view(np.uint8)],
        ]
    )
    return float(np.max(np.abs(ends)))


def fx_requantize_8bit(
    q: np.ndarray, scale, zero_point, axis: int | None, frac: int, bits: int
) -> tuple[np.ndarray, int]:
    """`fx_quantize(dequantize(q), frac, bits)` for 8-bit quantized `q` (see `lut_applies`),
    through per-channel tables; same values and saturation count."""
    fx_table, sat_table = _fx_quantize_mask(_real_table(q, scale, zero_point, axis), frac, bits)
    codes = _by_channel(q, axis)
    out = _lookup(fx_table, codes)
    n_sat = 0
    if sat_table.any():
        n_sat = int(np.count_nonzero(_lookup(sat_table, codes)))
    return _from_channel(out, q, axis), n_sat


def int_quantize(
    x, scale, zero_point, bits: int, axis: int | None = None
) -> tuple[np.ndarray, int]:
    """Real values -> affine integers q = round(x / scale) + zp (half away from zero), saturated."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    zp = np.asarray(zero_point, dtype=np.float64)
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # saturated below
        v = np.nan_to_num(x / scale, nan=0.0)  # 0 / 0 (a zero scale, refused later): 0
        q = np.sign(v) * np.floor(np.abs(v) + 0.5) + zp
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    n_sat = int(np.count_nonzero((q < lo) | (q > hi)))
    dtype = np.int8 if bits <= 8 else np.int16 if bits <= 16 else np.int32
    return np.clip(q, lo, hi).astype(dtype), n_sat


def sa8_params_from_range(lo: float, hi: float) -> tuple[float, int]:
    """(scale, zero_point) of an int8 asymmetric tensor covering [lo, hi] (range widened to hold 0),
    as TFLite's converter derives them."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi == lo:
        return 1.0, 0
    scale = (hi - lo) / 255.0
    zp = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return scale, zp


def symmetric_scales(w: np.ndarray, axis: int | None, bits: int = 8) -> np.ndarray:
    """Per-axis (or per-tensor) symmetric scales max|w| / (2^(bits-1) - 1); 1.0 for all-zero slices."""
    qmax = (1 << (bits - 1)) - 1
    if axis is None:
        m = np.array([np.max(np.abs(w), initial=0.0)])
    else:
        m = np.max(np.abs(np.moveaxis(w, axis, 0)).reshape(w.shape[axis], -1), axis=1, initial=0.0)
    return np.where(m > 0, m / qmax, 1.0)


# --- per-axis dimension in MLI layouts -------------------------------------------------------


def mli_quant_dim(op_type: str, target: Target, layout: str) -> int:
    """The MLI per-axis `dim` of the weights of a TFLite op after the layout change.

    MLI 2.x: conv and transpose conv OHWI dim 0 -> HWCN dim 3; depthwise (1,Kh,Kw,C) -> HW1N dim 3; FC (M,N) dim 0 ->
    (N,M) dim 1. MLI 1.x: conv (Cout,...) dim 0 in CHW and HWC; depthwise CHW (Cout,1,Kh,Kw) dim 0,
    1.1 SA8 depthwise (1,Kh,Kw,Cout) dim 3; FC (M,N) dim 0.
    """
    if target.hwcn_weights:
        return {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "TRANSPOSE_CONV": 3, "FULLY_CONNECTED": 1}[
            op_type
        ]
    if op_type == "DEPTHWISE_CONV_2D":
        return 0 if layout == "chw" else 3
    return 0
