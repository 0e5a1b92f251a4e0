"""`tflite` mode LOGISTIC and TANH on int16 (16x8 models): TFLite's reference int16 kernels,
vectorized.

Both read one table, sigmoid(i / 24) for i = 0..255 in unsigned Q0.16, with linear
interpolation on |x| and the symmetry sigmoid(-x) = 1 - sigmoid(x) (tanh(x) = 2 sigmoid(2x) - 1).
Prepare() brings the input to the table's scale, 1 / (3 * 4096) (so that +-2^17 spans +-10.7):
a power-of-two input scale (2^-12, and 2^-11 for TANH) multiplies by 3 << shift; any other scale
by an integer multiplier (15 bits) with a rounding right shift. The output is Q0.15 (scale
2^-15, zero point 0), which Prepare() requires.

The table is data, not a formula: its entries sit up to 0.8 above round(65536 sigmoid(i / 24))
(tuned for interpolation). They are the interpreter's observable values: LiteRT's TANH at
input scale 2 / 12288 outputs entry k - 32768 at input 128 k, which is how
tests/ops/activation/test_int16_sigmoid.py measures all 256 back from LiteRT (and then checks both ops
on all 65536 inputs).
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import checked_log2, scale_of, zp_of

# fmt: off
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
], dtype=np.int64)
# fmt: on

_OUT_POWER = -15  # Q0.15 output
_INPUT_INT_BITS = 3


def input_rescale(scale: float, pot_shifts: tuple[int, ...]) -> tuple[int, int]:
    """Prepare()'s (multiplier, right shift) that bring an int16 input of `scale` to the
    table's 1 / (3 * 4096); `pot_shifts` are the left shifts the op takes as a power of two."""
    power, pot = checked_log2(scale)
    left = (15 - _INPUT_INT_BITS) + power
    if pot and left in pot_shifts:
        return 3 << left, 0
    real = float(np.float32(scale)) * 4096.0 * 3.0  # float scale promoted to double
    shift = 0
    while real <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        real *= 2.0
    return int(real), shift


def _scaled(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """(x * multiplier + round) >> shift, in int32 as the kernel computes it."""
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    return fp.wrap32(x.astype(np.int64) * multiplier + rnd) >> shift


def _interpolate(a: np.ndarray, frac_bits: int) -> np.ndarray:
    """The table at |x| >> frac_bits, plus the low bits times the step to the next entry
    (uint32); None where the index is beyond the table (the caller saturates)."""
    uh = a >> frac_bits
    i = np.minimum(uh, 254)
    lo, hi = SIGMOID_TABLE[i], SIGMOID_TABLE[i + 1]
    return (lo << frac_bits) + (a & ((1 << frac_bits) - 1)) * (hi - lo), uh >= 255


def logistic16(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    v = _scaled(x, multiplier, shift)
    value, over = _interpolate(np.abs(v), 9)  # /2^7 for the input, /4 for the 3/4 range
    r = np.where(over, 0x7FFF << 10, value)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return (r >> 10).astype(np.int16)


def tanh16(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    v = _scaled(x, multiplier, shift)
    value, over = _interpolate(np.abs(v), 8)  # tanh(x) = 2 sigmoid(2x) - 1: one bit less
    r = np.where(over, 0xFFFF << 8, value)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), (1 << 23) - r + (1 << 7) - 1)
    return (r >> 8).astype(np.int16)


def _prepare(c: Call, name: str, pot_shifts: tuple[int, ...]) -> tuple[int, int]:
    """Prepare()'s checks (zero points 0, a 2^-15 output), then the input rescale."""
    in_t, out_t = c.tin(0), c.tout()
    if zp_of(in_t) != 0 or zp_of(out_t) != 0:
        raise c.unsupported(f"int16 {name} with a non-zero zero point (TFLite refuses it)")
    out_scale = scale_of(out_t)
    exact = name != "LOGISTIC" or float(np.float32(out_scale)) == 1.0 / 32768
    if checked_log2(out_scale) != (_OUT_POWER, True) or not exact:
        raise c.unsupported(f"int16 {name} with output scale {out_scale:g} (TFLite requires 2^-15)")
    return input_rescale(scale_of(in_t), pot_shifts)


def logistic_int16(c: Call) -> list:
    return [logistic16(c.x(0), *_prepare(c, "LOGISTIC", (0,)))]


def tanh_int16(c: Call) -> list:
    return [tanh16(c.x(0), *_prepare(c, "TANH", (0, 1)))]
