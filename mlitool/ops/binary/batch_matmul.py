"""BATCH_MATMUL in the float and tflite modes, and its int8 arithmetic from integer parameters.

`int8_params` computes what TFLite's Prepare() does for int8 x int8 -> int8 (zero points, the
output multiplier of lhs scale * rhs scale / output scale); `apply` runs TFLite's reference
arithmetic: int32 sums of (lhs - zp) * (rhs - zp), MultiplyByQuantizedMultiplier, the output
zero point, clamped to int8. Batch dimensions broadcast (aligned right); adj_x / adj_y take an
operand's last two dimensions transposed. The fallback kernel `batch_matmul8` runs the same
parameters, so C, `mli` executor and tflite mode agree.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import scale_of, zp_of

f32 = np.float32
QParams = tuple[float, int]
CFG = ("adj_x", "adj_y", "lhs_zp", "rhs_zp", "out_zp", "out_mult", "out_shift")


def int8_params(ql: QParams, qr: QParams, qo: QParams, adj_x: bool, adj_y: bool) -> dict:
    """The config of an int8 BATCH_MATMUL (GetQuantizedConvolutionMultipler: the scales'
    product in float32, divided in double)."""
    real = np.float64(f32(ql[0]) * f32(qr[0])) / np.float64(f32(qo[0]))
    m, s = fp.quantize_multiplier(real)
    return dict(
        adj_x=int(adj_x),
        adj_y=int(adj_y),
        lhs_zp=int(ql[1]),
        rhs_zp=int(qr[1]),
        out_zp=int(qo[1]),
        out_mult=int(m),
        out_shift=int(s),
    )


def _operands(lhs: np.ndarray, rhs: np.ndarray, adj_x: bool, adj_y: bool):
    """(..., M, K) and (..., K, N) views of the operands."""
    return (lhs.swapaxes(-1, -2) if adj_x else lhs), (rhs.swapaxes(-1, -2) if adj_y else rhs)


def apply(p: dict, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """int8 result of config `p`; the batch dimensions of lhs and rhs broadcast."""
    x, w = _operands(lhs, rhs, p["adj_x"], p["adj_y"])
    # every sum of products of values within +-255 is exact in float64 (K < 2^36)
    acc = np.matmul(x.astype(np.float64) - p["lhs_zp"], w.astype(np.float64) - p["rhs_zp"]).astype(
        np.int64
    )
    q = fp.mul_by_quantized_multiplier(acc, p["out_mult"], p["out_shift"]) + p["out_zp"]
    return np.clip(q, -128, 127).astype(np.int8)


def apply16(p: dict, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """int16 result of config `p` (16x8 models: zero points 0): TFLite's BatchMatMul<int16_t,
    int64_t>, int64 sums rescaled by the 64-bit MultiplyByQuantizedMultiplier (the multiplier
    rounded to 16 bits), clamped to int16."""
    x, w = _operands(lhs, rhs, p["adj_x"], p["adj_y"])
    acc = np.matmul(x.astype(np.int64) - p["lhs_zp"], w.astype(np.int64) - p["rhs_zp"])
    q = fp.mul_by_quantized_multiplier_64(acc, p["out_mult"], p["out_shift"]) + p["out_zp"]
    return np.clip(q, -32768, 32767).astype(np.int16)


def _aligned(c: Call) -> tuple[np.ndarray, np.ndarray]:
    """Both operands, batched, with the ranks made equal by leading ones (after the sample
    axis), so that numpy broadcasts their batch dimensions as TFLite does."""
    return tuple(c.aligned(0, 1))


def float_batch_matmul(c: Call):
    lhs, rhs = _aligned(c)
    x, w = _operands(np.asarray(lhs, f32), np.asarray(rhs, f32), c.opt("adj_x"), c.opt("adj_y"))
    # products of float32 values are exact in float64: one rounding of each sum to float32
    return [np.matmul(x.astype(np.float64), w.astype(np.float64)).astype(f32)]


def tflite_batch_matmul(c: Call):
    tl, tr, out = c.tin(0), c.tin(1), c.tout()
    if np.dtype(out.dtype).kind == "f":
        if tl.dtype != "float32" or tr.dtype != "float32":
            raise c.unsupported(f"{tl.dtype} x {tr.dtype} (hybrid) BATCH_MATMUL")
        return float_batch_matmul(c)
    types = (tl.dtype, tr.dtype, out.dtype)
    if types not in (("int8",) * 3, ("int16",) * 3):
        raise c.unsupported(f"{tl.dtype} x {tr.dtype} -> {out.dtype} BATCH_MATMUL")
    q = [(scale_of(t), zp_of(t)) for t in (tl, tr, out)]
    p = int8_params(*q, c.opt("adj_x", False), c.opt("adj_y", False))
    return [(apply16 if out.dtype == "int16" else apply)(p, *_aligned(c))]
