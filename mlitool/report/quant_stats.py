"""Per-tensor quantization statistics of an `MliTensor`, against the real values it stands for.

Definitions (all vectorised over the tensor):
* dequantized value: SA `(q - zero_point[c]) * scale[c] * 2^-scale_frac_bits[c]` (per channel `c`
  along `dim`), FX `q * 2^-frac_bits`.
* SNR [dB] = 10 log10(sum real^2 / sum (real - dequantized)^2); +inf when they are equal,
  -inf when the real values are all zero and the dequantized ones are not.
* saturated: elements whose real value lies beyond the representable range by more than half a
  step, i.e. `real / scale + zero_point` outside `[qmin - 0.5, qmax + 0.5]` (needs real values).
* at limits: elements equal to the container's qmin or qmax.
* unused range: `1 - (max q - min q) / (qmax - qmin)`, the share of the integer range the data
  never reaches.
* frac bits at limit: a frac-bits value at an end of its C field on the target (FX `frac_bits`:
  int8 in MLI 2.x, uint8 in 1.x, so 0 is a limit there; SA `scale_frac_bits`: int8).
* zero channel: an output channel of a weight tensor whose integers all equal the zero point;
  zeroed channels: those of them whose real values are not all zero (requantization lost them).
Risk flags: "low_snr" (SNR below the threshold), "saturation", "frac_bits_limit", "zero_channel".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.mli.target import DEFAULT, Target
from mlitool.mli.types import ElType, MliTensor, Role

DEFAULT_SNR_THRESHOLD_DB = 30.0
FLAGS = ("low_snr", "saturation", "frac_bits_limit", "zero_channel")


@dataclass(frozen=True)
class TensorStats:
    name: str
    role: str
    el_type: str
    shape: tuple[int, ...]
    channels: int  # per-axis channels (1 for per-tensor parameters)
    int_min: int | None
    int_max: int | None
    real_min: float | None  # of the dequantized MLI values
    real_max: float | None
    scale_min: float
    scale_median: float
    scale_max: float
    frac_min: int
    frac_median: float
    frac_max: int
    snr_db: float | None  # None without real values
    saturated: int | None  # None without real values
    at_limits: int | None
    unused_range: float | None
    zero_channels: int
    flags: tuple[str, ...]
    zeroed_channels: int = 0  # zero channels whose real values are not all zero


def int_range(el: ElType) -> tuple[int, int]:
    info = np.iinfo(el.dtype)
    return int(info.min), int(info.max)


def _broadcast(t: MliTensor, per_channel: np.ndarray) -> np.ndarray:
    """Per-channel values shaped to broadcast against the tensor's data."""
    if not t.per_axis or per_channel.size == 1:
        return per_channel.reshape(())
    shape = [1] * t.rank
    shape[t.dim] = -1
    return per_channel.reshape(shape)


def _steps(t: MliTensor) -> tuple[np.ndarray, np.ndarray]:
    """(real value of one integer step, zero point), broadcastable against the data."""
    if t.el_type.is_fx:
        return np.array(2.0 ** -int(t.frac_bits)), np.array(0.0)
    return (
        _broadcast(t, t.real_scale()),
        _broadcast(t, np.asarray(t.zero_point, dtype=np.float64)),
    )


def dequantize(t: MliTensor, data: np.ndarray | None = None) -> np.ndarray:
    q = np.asarray(t.data if data is None else data)
    step, zp = _steps(t)
    return (q.astype(np.float64) - zp) * step


def snr_db(real: np.ndarray, approx: np.ndarray) -> float:
    real = np.asarray(real, dtype=np.float64)
    noise = float(np.sum(np.square(real - np.asarray(approx, dtype=np.float64))))
    signal = float(np.sum(np.square(real)))
    if noise == 0.0:
        return float("inf")
    if signal == 0.0:
        return float("-inf")
    return float(10.0 * np.log10(signal / noise))


def frac_limits(t: MliTensor, target: Target) -> tuple[int, int]:
    """The range of the tensor's frac bits field (FX frac_bits, SA scale_frac_bits: int8)."""
    return target.fx_frac_bits if t.el_type.is_fx else (-128, 127)


def _frac_values(t: MliTensor) -> np.ndarray:
    if t.el_type.is_fx:
        return np.array([int(t.frac_bits)])
    return np.asarray(t.scale_frac_bits, dtype=np.int64).reshape(-1)


def tensor_stats(
    t: MliTensor,
    real: np.ndarray | None = None,
    data: np.ndarray | None = None,
    *,
    target: Target = DEFAULT,
    channel_axis: int | None = None,
    snr_threshold_db: float = DEFAULT_SNR_THRESHOLD_DB,
) -> TensorStats:
    """Statistics of `t` (integers: `data`, default `t.data`; `real`: the real values in the same
    layout). `channel_axis` is the output-channel axis for the zero-channel check of weights
    (default: `t.dim` when per-axis, else the last axis)."""
    if not (t.el_type.is_fx or t.el_type.is_sa):
        raise ValueError(f"tensor '{t.name}': {t.el_type.name} is not a quantized type")
    q = t.data if data is None else np.asarray(data)
    qmin, qmax = int_range(t.el_type)
    scales = t.real_scale()
    fracs = _frac_values(t)
    flags: list[str] = []
    int_min = int_max = at_limits = saturated = None
    real_min = real_max = unused = snr = None
    zero_channels = zeroed = 0
    zero_rows = None
    if q is not None:
        if tuple(q.shape) != t.shape:
            raise ValueError(f"tensor '{t.name}': data shape {q.shape} is not {t.shape}")
        int_min, int_max = (int(q.min()), int(q.max())) if q.size else (0, 0)
        deq = dequantize(t, q)
        real_min, real_max = (float(deq.min()), float(deq.max())) if q.size else (0.0, 0.0)
        at_limits = int(np.count_nonzero((q == qmin) | (q == qmax)))
        unused = 1.0 - (int_max - int_min) / (qmax - qmin)
        if t.role == Role.WEIGHTS and q.ndim:
            axis = channel_axis if channel_axis is not None else (t.dim if t.per_axis else -1)
            _, zp = _steps(t)
            nonzero = np.moveaxis(q != np.broadcast_to(zp, q.shape), axis, 0)
            zero_rows = ~nonzero.reshape(nonzero.shape[0], -1).any(1)
            zero_channels = int(np.count_nonzero(zero_rows))
        if real is not None:
            real = np.asarray(real, dtype=np.float64)
            if real.shape != q.shape:
                raise ValueError(
                    f"tensor '{t.name}': real values {real.shape} do not match the "
                    f"data shape {q.shape}"
                )
            snr = snr_db(real, deq)
            step, zp = _steps(t)
            ideal = real / step + zp
            saturated = int(np.count_nonzero((ideal > qmax + 0.5) | (ideal < qmin - 0.5)))
            if zero_channels:
                rows = np.moveaxis(real, axis, 0).reshape(len(zero_rows), -1)
                zeroed = int(np.count_nonzero(zero_rows & rows.any(1)))
    lo, hi = frac_limits(t, target)
    if snr is not None and snr < snr_threshold_db:
        flags.append("low_snr")
    if saturated:
        flags.append("saturation")
    if np.any(fracs <= lo) or np.any(fracs >= hi):
        flags.append("frac_bits_limit")
    if zero_channels:
        flags.append("zero_channel")
    return TensorStats(
        name=t.name,
        role=t.role.value,
        el_type=t.el_type.name,
        shape=t.shape,
        channels=int(scales.size),
        int_min=int_min,
        int_max=int_max,
        real_min=real_min,
        real_max=real_max,
        scale_min=float(scales.min()),
        scale_median=float(np.median(scales)),
        scale_max=float(scales.max()),
        frac_min=int(fracs.min()),
        frac_median=float(np.median(fracs)),
        frac_max=int(fracs.max()),
        snr_db=snr,
        saturated=saturated,
        at_limits=at_limits,
        unused_range=unused,
        zero_channels=zero_channels,
        flags=tuple(flags),
        zeroed_channels=zeroed,
    )


# --- real values of a lowered constant ----------------------------------------------------------


def real_values(src: ir.Tensor) -> np.ndarray | None:
    """The real values a TFLite constant stands for (float data, or dequantized integers)."""
    if src.data is None:
        return None
    if src.dtype.startswith("float"):
        return src.data.astype(np.float64)
    if src.quant is None:
        return None
    return src.quant.dequantize(src.data)


def in_mli_layout(real: np.ndarray, t: MliTensor) -> np.ndarray | None:
    """`real` (source layout) arranged like `t.data`.

    Lowering only transposes and reshapes constants, so the candidates are a C-order reshape and
    every axis permutation that yields `t.shape`; when several fit (square kernels, size-1 axes),
    the one closest to the dequantized MLI values wins (ties: the first in this fixed order).
    Returns None when no candidate fits.
    """
    if real.size != t.size or t.data is None:
        return None
    cands = [real.reshape(t.shape)]
    if real.ndim == t.rank:
        cands += [
            real.transpose(p)
            for p in itertools.permutations(range(real.ndim))
            if tuple(real.transpose(p).shape) == t.shape
        ]
    if len(cands) == 1:
        return np.ascontiguousarray(cands[0])
    deq = dequantize(t)
    errs = [float(np.sum(np.square(c - deq))) for c in cands]
    return np.ascontiguousarray(cands[int(np.argmin(errs))])


# --- activations, observed on executed samples --------------------------------------------------


@dataclass
class ActivationObservation:
    """Streaming figures of one activation tensor: the float model's values over the samples and
    their quantization with the tensor's MLI parameters (batches added one by one)."""

    real_min: float = float("inf")
    real_max: float = float("-inf")
    int_min: int | None = None
    int_max: int | None = None
    at_limits: int = 0
    saturated: int = 0
    signal: float = 0.0
    noise: float = 0.0

    def add(self, t: MliTensor, real: np.ndarray, q: np.ndarray) -> None:
        """`real`: batched float values (N,)+t.shape; `q`: their MLI containers."""
        real = np.asarray(real, dtype=np.float64)
        if real.size == 0:
            return
        qmin, qmax = int_range(t.el_type)
        step, zp = _steps(t)
        deq = (q.astype(np.float64) - zp) * step
        ideal = real / step + zp
        self.real_min = min(self.real_min, float(real.min()))
        self.real_max = max(self.real_max, float(real.max()))
        lo, hi = int(q.min()), int(q.max())
        self.int_min = lo if self.int_min is None else min(self.int_min, lo)
        self.int_max = hi if self.int_max is None else max(self.int_max, hi)
        self.at_limits += int(np.count_nonzero((q == qmin) | (q == qmax)))
        self.saturated += int(np.count_nonzero((ideal > qmax + 0.5) | (ideal < qmin - 0.5)))
        self.signal += float(np.sum(np.square(real)))
        self.noise += float(np.sum(np.square(real - deq)))


def activation_stats(
    t: MliTensor,
    obs: ActivationObservation,
    *,
    target: Target = DEFAULT,
    snr_threshold_db: float = DEFAULT_SNR_THRESHOLD_DB,
) -> TensorStats:
    """`tensor_stats` of an activation from observed values: value range = the float values seen,
    integers = their quantization, SNR = float values against their dequantized quantization."""
    base = tensor_stats(t, target=target, snr_threshold_db=snr_threshold_db)
    if obs.int_min is None:
        return base
    qmin, qmax = int_range(t.el_type)
    if obs.noise == 0.0:
        snr = float("inf")
    elif obs.signal == 0.0:
        snr = float("-inf")
    else:
        snr = float(10.0 * np.log10(obs.signal / obs.noise))
    observed = {"low_snr": snr < snr_threshold_db, "saturation": obs.saturated > 0}
    flags = [f for f in FLAGS if observed.get(f, f in base.flags)]
    return TensorStats(
        **{
            **base.__dict__,
            "int_min": obs.int_min,
            "int_max": obs.int_max,
            "real_min": obs.real_min,
            "real_max": obs.real_max,
            "snr_db": snr,
            "saturated": obs.saturated,
            "at_limits": obs.at_limits,
            "unused_range": 1.0 - (obs.int_max - obs.int_min) / (qmax - qmin),
            "flags": tuple(flags),
        }
    )
