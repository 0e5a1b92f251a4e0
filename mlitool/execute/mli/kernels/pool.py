"""MLI 2.0.2 pooling kernels: avepool_hwc_{sa8, fx8, fx16}, maxpool_hwc_{sa8, fx8, fx16}.

Kernel convention: `kernel(x, inp, out, cfg, arith)` with `x` of shape (B,) + inp.shape (HWC),
returning (B,) + out.shape in out's dtype. Windows skip padded positions: average pooling divides
by the number of valid elements, through MLI's reciprocal multiplier (mli_krn_avepool_hwc_ref.h);
max pooling takes the maximum of the valid elements (and MLI copies the input's params to the
output tensor).
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.kernels import intops as mli_intops
from mlitool.execute.mli.kernels._window import Window
from mlitool.execute.mli.kernels.adapter import Runner, runner
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.kernels.qparams import requant_params
from mlitool.mli.types import ElType, MliTensor

# MLI's reciprocal table for window sizes below 32: value ~ mul * 2^-shift = 1 / size.
_DIV_MUL = (
    0,
    0x4000,
    0x4000,
    0x5555,
    0x4000,
    0x6666,
    0x5555,
    0x4924,
    0x4000,
    0x71C7,
    0x6666,
    0x5D17,
    0x5555,
    0x4EC4,
    0x4924,
    0x4444,
    0x4000,
    0x7878,
    0x71C7,
    0x6BCA,
    0x6666,
    0x6186,
    0x5D17,
    0x590B,
    0x5555,
    0x51EB,
    0x4EC4,
    0x4BDA,
    0x4924,
    0x469E,
    0x4444,
    0x4210,
)
_DIV_SHIFT = (
    0,
    14,
    15,
    16,
    16,
    17,
    17,
    17,
    17,
    18,
    18,
    18,
    18,
    18,
    18,
    18,
    18,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
    19,
)
_POOL_TYPES = (ElType.SA8, ElType.FX8, ElType.FX16)


def reciprocal(div: int) -> tuple[int, int]:
    """(mul, shift) with mul * 2^-shift ~ 1/div: MLI's get_mul_shift_value."""
    if div < len(_DIV_MUL):
        return _DIV_MUL[div], _DIV_SHIFT[div]
    val = (1 << 31) // div  # u1.31
    norm = 0
    if div > 1:
        norm = int(mli_intops.norm(val, 32)) + 1
        val = (val << norm) & 0xFFFFFFFF
    return val >> 17, 14 + norm


def _check(kind: str, inp: MliTensor, out: MliTensor) -> None:
    if inp.el_type not in _POOL_TYPES or out.el_type != inp.el_type:
        raise UnsupportedError(
            f"MLI 2.x has no {kind}_hwc kernel for {inp.el_type.name.lower()} input "
            f"and {out.el_type.name.lower()} output"
        )


def _window(cfg: dict, out: MliTensor) -> Window:
    kernel = (int(cfg["kernel_height"]), int(cfg["kernel_width"]))
    return Window.from_cfg({**cfg, "dilation_height": 1, "dilation_width": 1}, kernel, out.shape)


def avepool(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith) -> np.ndarray:
    """mli_krn_avepool_hwc_*: mean of the valid elements of each window."""
    _check("avepool", inp, out)
    win = _window(cfg, out)
    x = np.asarray(x, dtype=np.int64)
    xp = win.pad_input(x, 0)
    sums = sum(tap for _, _, tap in win.taps(xp))
    counts = win.valid_counts(inp.shape[:2])

    # Multiplier, shift and start value per window size (a handful of distinct sizes).
    mul = np.zeros(counts.shape, np.int64)
    shift = np.zeros(counts.shape, np.int64)
    start = np.zeros(counts.shape, np.int64)
    if inp.el_type == ElType.SA8:
        params = requant_params(inp, out, arith.round_mode, batched=False)
        scale, base_shift, offset = (int(v) for v in params)
    else:
        scale, base_shift, offset = 1, int(inp.frac_bits) - int(out.frac_bits), 0
    for div in np.unique(counts):
        m, s = reciprocal(int(div))
        s += base_shift
        if inp.el_type == ElType.SA8:
            # The requant scale is folded into the multiplier, normalised to 8 bits.
            prod = scale * m
            ns = 24 - int(mli_intops.norm(prod, 32))
            m = int(mli_intops.sat(mli_intops.asr_rnd(prod, ns, 32, arith.round_mode), 8))
            s -= ns
        sel = counts == div
        mul[sel], shift[sel] = m, s
        start[sel] = int(mli_intops.asl(offset, s, 32))
    mul, shift, start = mul[:, :, None], shift[:, :, None], start[:, :, None]

    bits = 64 if inp.el_type == ElType.FX16 else 32
    acc = mli_intops.wrap(start + mul * sums, bits)
    o = mli_intops.asr_rnd(acc, np.broadcast_to(shift, acc.shape), bits, arith.round_mode)
    return mli_intops.sat(o, out.el_type.bits).astype(out.el_type.dtype)


def maxpool(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith) -> np.ndarray:
    """mli_krn_maxpool_hwc_*: maximum of the valid elements of each window."""
    _check("maxpool", inp, out)
    win = _window(cfg, out)
    x = np.asarray(x)
    xp = win.pad_input(x, np.iinfo(x.dtype).min)
    result = None
    for _, _, tap in win.taps(xp):
        result = tap.copy() if result is None else np.maximum(result, tap, out=result)
    return result.astype(out.el_type.dtype)


LAYER_RUNNERS: dict[str, Runner] = {"avepool": runner(avepool), "maxpool": runner(maxpool)}
