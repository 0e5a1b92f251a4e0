"""The look-up tables of MLI 2.0.2 (`mli_krn_{sigm,tanh,softmax,l2_normalize}_create_lut`) and
the reference code's table evaluation (`mli_prv_lut_ref.h`), vectorized.

MLI ships the tables as constants generated offline by its `lutfx.py`; each is the function
sampled on a uniform fixed-point grid and rounded to int16 (`round(f(x) * 2^out_frac)`, saturated).
We compute them here from the same recipe:

| table          | f(x)          | length | in frac | out frac | input_offset |
|----------------|---------------|--------|---------|----------|--------------|
| `sigm`         | 1/(1+e^-x)    | 320    | 4       | 15       | 160 (centre) |
| `tanh`         | tanh(x)       | 344    | 5       | 15       | 172 (centre) |
| `softmax`      | e^x  (x <= 0) | 358    | 5       | 15       | 356          |
| `l2_normalize` | 1/sqrt(x)     | 97     | 0       | 17       | -32          |

Entry i holds f((i - input_offset) * 2^-in_frac).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mlitool.execute.mli.kernels.intops import add_sat, asl, asr, asr_rnd, sat, wrap
from mlitool.mli.kernels import LUT_LENGTHS
from mlitool.mli.types import ElType

MAX_FRAC_FX16 = 15
MAX_FRAC_FX8 = 7


@dataclass(frozen=True)
class Lut:
    """One `mli_lut` (type is always FX16)."""

    name: str
    data: np.ndarray  # int16[length]
    in_frac_bits: int
    out_frac_bits: int
    input_offset: int
    output_offset: int = 0
    el_type: ElType = ElType.FX16

    @property
    def length(self) -> int:
        return int(self.data.size)


# name: (f, in frac, out frac, input_offset); lengths in `mlitool.mli.kernels.LUT_LENGTHS`
_SPECS = {
    "sigm": (lambda x: 1.0 / (1.0 + np.exp(-x)), 4, 15, 160),
    "tanh": (np.tanh, 5, 15, 172),
    "softmax": (np.exp, 5, 15, 356),
    "l2_normalize": (lambda x: 1.0 / np.sqrt(x), 0, 17, -32),
}


@lru_cache(maxsize=None)
def lut(name: str) -> Lut:
    """The table `mli_krn_<name>_create_lut` fills in."""
    f, in_frac, out_frac, offset = _SPECS[name]
    length = LUT_LENGTHS[name]
    x = (np.arange(length, dtype=np.float64) - offset) * 2.0**-in_frac
    data = sat(np.floor(f(x) * 2.0**out_frac + 0.5).astype(np.int64), 16).astype(np.int16)
    data.setflags(write=False)
    return Lut(name, data, in_frac, out_frac, offset)


def sa8_to_fx16_frac(table: Lut) -> int:
    """Frac bits of the FX16 value an SA8 input is converted to before the look-up."""
    return MAX_FRAC_FX16 - (MAX_FRAC_FX8 - table.in_frac_bits)


def lookup(x, table: Lut, in_frac_bits: int, mode: str) -> np.ndarray:
    """The int16 table value (in table.out_frac_bits) for FX input x with in_frac_bits.

    With more input precision than the table, interpolates linearly between neighbours exactly
    as `activation_lut_one_elem_interpolate` (including its extrapolation past the ends);
    otherwise picks the nearest-below entry (`..._no_interpolate`).
    """
    x = np.asarray(x, dtype=np.int64)
    data = table.data.astype(np.int64)
    shift_in = in_frac_bits - table.in_frac_bits
    if min(shift_in, MAX_FRAC_FX16) > 0:
        pre = min(max(shift_in - MAX_FRAC_FX16, 0), 15)
        shift_in = min(shift_in, MAX_FRAC_FX16)
        x = asr(x, pre, 32)
        idx = np.clip(add_sat(asr(x, shift_in, 32), table.input_offset, 32), 0, table.length - 2)
        frac = x & ((1 << shift_in) - 1)
        res = data[idx]
        diff = wrap(res - data[idx + 1], 16)
        step = sat(asr_rnd(diff * frac, shift_in, 32, mode), 16)
        return wrap(res - step, 16)
    idx = add_sat(asl(x, -shift_in, 32), table.input_offset, 32)
    return data[np.clip(idx, 0, table.length - 1)]


def sa8_input(x, zero_point: int, scale: int, frac_bits: int, table: Lut, mode: str) -> np.ndarray:
    """SA8 values as the FX16 input (`sa8_to_fx16_frac` frac bits) of the interpolating look-up."""
    shift = frac_bits - sa8_to_fx16_frac(table)
    biased = wrap(np.asarray(x, dtype=np.int64) - zero_point, 16)
    return asr_rnd(biased * scale, shift, 32, mode)


def fx16_to_sa8(res, zero_point: int, shift: int, mode: str) -> np.ndarray:
    """`mli_prv_convert_fx16_sa8`: a table value (shifted right by `shift`) plus the zero point."""
    return sat(wrap(asr_rnd(res, shift, 32, mode) + zero_point, 32), 8)
