"""MLI 2.0.2 activation kernels: relu, leaky_relu, prelu (sa8/fx8/fx16); sigm, tanh, softmax and
l2_normalize (sa8/fx16, look-up-table based, see `luts.py`).

`x` is (B,) + inp.shape; results are (B,) + out.shape in the output's dtype.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.kernels import luts
from mlitool.execute.mli.kernels.adapter import Runner, runner
from mlitool.execute.mli.kernels.intops import Arith, asl, asr_rnd, norm, sat, wrap
from mlitool.execute.mli.kernels.qparams import batched_view, norm_cast, storage
from mlitool.mli.ops import OUTPUT_PARAMS
from mlitool.mli.types import ElType, MliTensor

RELU_NONE, RELU_GEN, RELU_1, RELU_6 = 0, 1, 2, 3


# ---------------------------------------------------------------------------------------- relu
def relu_limits(relu_type: int, t: MliTensor) -> tuple[int, int]:
    """`mli_prv_get_relu_limits`: the clamp range of a fused or stand-alone ReLU on tensor `t`."""
    lo, hi = -(1 << (storage(t.el_type) - 1)), (1 << (storage(t.el_type) - 1)) - 1
    if t.el_type.is_sa:
        zero, scale, shift = (
            int(np.ravel(v)[0]) for v in (t.zero_point, t.scale, t.scale_frac_bits)
        )
    else:
        zero, scale, shift = 0, 1, int(t.frac_bits)
    if relu_type == RELU_GEN:
        return max(zero, lo), hi
    if relu_type == RELU_6:
        if shift >= 0:
            six = (6 << shift) // scale if shift < 28 else hi
        else:
            six = (6 >> -shift) // scale if shift > -3 else 0
        return max(zero, lo), min(six + zero, hi)
    if relu_type == RELU_1:
        one = ((1 << shift) // scale if shift < 30 else hi) if shift >= 0 else 0
        return max(zero - one, lo), min(zero + one, hi)
    return lo, hi


def relu(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith) -> np.ndarray:
    """`mli_krn_relu_*`: clamp to the limits of the input's params (which the output inherits)."""
    lo, hi = relu_limits(int(cfg.get("relu_type", RELU_GEN)), inp)
    v = np.clip(batched_view(x, inp), lo, hi)
    return v.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


# ------------------------------------------------------------------------ leaky relu and prelu
def _fx_leaky(v: np.ndarray, slope: np.ndarray, shift, bits: int, mode: str) -> np.ndarray:
    """out = max(0, x) + cast(min(0, x) * slope >> shift), as `compute_leaky_relu` (FX)."""
    neg = asr_rnd(np.minimum(v, 0) * slope, np.minimum(shift, 31), 32, mode)
    return sat(np.maximum(v, 0) + sat(neg, bits), bits)


def _sa_identity(inp: MliTensor, out: MliTensor, mode: str) -> tuple[int, int, int]:
    """`leaky_relu_define_identity_params`: (scale16, shift >= 0, out_zp) for the x >= zp branch."""
    sc_in, sc_out = int(np.ravel(inp.scale)[0]), int(np.ravel(out.scale)[0])
    pre = int(norm(sc_in, 32)) - int(norm(sc_out, 16))
    scale, ns = norm_cast((sc_in << pre) // sc_out, 32, 16, mode)
    shift = (
        pre
        + int(np.ravel(inp.scale_frac_bits)[0])
        - int(np.ravel(out.scale_frac_bits)[0])
        - int(ns)
    )
    scale = int(asl(scale, max(-shift, 0), 16))
    return scale, max(shift, 0), int(np.ravel(out.zero_point)[0])


def _sa_alpha(alpha_q: np.ndarray, slope: MliTensor, identity, mode: str):
    """`leaky_relu_define_alpha_params` for (an array of) slope values: (scale16, shift)."""
    id_scale, id_shift, _ = identity
    alpha_val = sat(
        (wrap(alpha_q - int(np.ravel(slope.zero_point)[0]), 16)) * int(np.ravel(slope.scale)[0]), 32
    )
    alpha, ns = norm_cast(alpha_val, 32, 16, mode)
    shift = id_shift + int(np.ravel(slope.scale_frac_bits)[0]) - ns
    scale, ns2 = norm_cast(id_scale * alpha, 32, 16, mode)
    return scale, shift - ns2


def _sa_leaky(v: np.ndarray, inp: MliTensor, identity, alpha, mode: str) -> np.ndarray:
    id_scale, id_shift, out_zp = identity
    a_scale, a_shift = alpha
    d = sat(v - int(np.ravel(inp.zero_point)[0]), 16)
    pos = asr_rnd(id_scale * d, id_shift, 32, mode)
    neg = asr_rnd(a_scale * d, a_shift, 32, mode)
    res = np.where(d >= 0, pos, neg)
    return sat(sat(res + out_zp, 32), 8)


def leaky_relu(x, inp: MliTensor, slope: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    """`mli_krn_leaky_relu_*`: the scalar `slope` (an MliTensor with .data) multiplies x < 0."""
    v = batched_view(x, inp)
    mode = arith.round_mode
    alpha_q = int(np.ravel(slope.data)[0])
    if inp.el_type.is_sa:
        identity = _sa_identity(inp, out, mode)
        res = _sa_leaky(v, inp, identity, _sa_alpha(np.int64(alpha_q), slope, identity, mode), mode)
    else:
        bits = storage(inp.el_type)
        shift = int(inp.frac_bits) + int(slope.frac_bits) - int(out.frac_bits)
        if bits == 16:  # the reference normalises a 16-bit slope first
            alpha, ns = norm_cast(alpha_q, 16, 16, mode)
            alpha_q, shift = int(alpha), shift - int(ns)
        res = _fx_leaky(v, np.int64(alpha_q), shift, bits, mode)
    return res.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


def prelu(
    x, inp: MliTensor, slope: MliTensor, out: MliTensor, cfg: dict, arith: Arith
) -> np.ndarray:
    """`mli_krn_prelu_*`: slope values along `cfg['axis']` (axis -1: a scalar, = leaky relu)."""
    axis = int(cfg.get("axis", -1))
    if axis < 0:
        return leaky_relu(x, inp, slope, out, arith)
    v = batched_view(x, inp)
    mode = arith.round_mode
    shape = [1] * (inp.rank + 1)
    shape[axis + 1] = slope.shape[axis]
    alpha_q = np.asarray(slope.data, dtype=np.int64).reshape(shape)
    if inp.el_type.is_sa:
        identity = _sa_identity(inp, out, mode)
        res = _sa_leaky(v, inp, identity, _sa_alpha(alpha_q, slope, identity, mode), mode)
    else:
        shift = int(inp.frac_bits) + int(slope.frac_bits) - int(out.frac_bits)
        res = _fx_leaky(v, alpha_q, shift, storage(inp.el_type), mode)
    return res.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


# ----------------------------------------------------------------------------- sigm, tanh
# SA8 outputs of the LUT kernels: (zero point, frac bits) with scale 1, fixed by MLI.
_SA8_OUT = {
    kind: (OUTPUT_PARAMS[kind].zero_point, OUTPUT_PARAMS[kind].scale_frac_bits)
    for kind in ("sigm", "tanh", "softmax", "l2_normalize")
}
FX16_OUT_FRAC = OUTPUT_PARAMS["sigm"].fx_frac_bits


def _require_lut_types(kind: str, inp: MliTensor) -> None:
    if inp.el_type not in (ElType.SA8, ElType.FX16):
        raise UnsupportedError(
            f"{kind}: MLI 2.0.2 has {kind} kernels for sa8 and fx16 only "
            f"(the fx8 ones are deprecated), not {inp.el_type.name.lower()} "
            f"(tensor {inp.name!r})"
        )


def _lut_activation(kind: str, x, inp: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    _require_lut_types(kind, inp)
    table = luts.lut(kind)
    mode = arith.round_mode
    v = batched_view(x, inp)
    if inp.el_type.is_sa:
        zp, scale, frac = (
            int(np.ravel(a)[0]) for a in (inp.zero_point, inp.scale, inp.scale_frac_bits)
        )
        fx = luts.sa8_input(v, zp, scale, frac, table, mode)
        res = luts.lookup(fx, table, luts.sa8_to_fx16_frac(table), mode)
        out_zp, out_frac = _SA8_OUT[kind]
        res = luts.fx16_to_sa8(res, out_zp, table.out_frac_bits - out_frac, mode)
    else:
        res = luts.lookup(v, table, int(inp.frac_bits), mode)
    return res.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


def sigm(x, inp: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    """`mli_krn_sigm_{fx16,sa8}`: output frac bits 15 (fx16) or zp -128, scale 1, frac 8 (sa8)."""
    return _lut_activation("sigm", x, inp, out, arith)


def tanh(x, inp: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    """`mli_krn_tanh_{fx16,sa8}`: output frac bits 15 (fx16) or zp 0, scale 1, frac 7 (sa8)."""
    return _lut_activation("tanh", x, inp, out, arith)


# -------------------------------------------------------------------------------- softmax
def _reduce_axes(inp: MliTensor, axis: int) -> tuple[int, ...]:
    """Axes of the batched array one softmax / l2 group spans (axis -1: the whole tensor)."""
    return tuple(range(1, inp.rank + 1)) if axis < 0 else (axis + 1,)


def softmax(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith) -> np.ndarray:
    """`mli_krn_softmax_{fx16,sa8}` along `cfg['axis']` (-1: over the whole tensor).

    exp(x - max) from the `softmax` table (Q15), summed in 32 bits, times a Q15 reciprocal of
    the normalised sum; outputs Q15 (fx16) or zp -128, scale 1, frac 8 (sa8).
    """
    _require_lut_types("softmax", inp)
    table = luts.lut("softmax")
    mode = arith.round_mode
    v = batched_view(x, inp)
    axes = _reduce_axes(inp, int(cfg.get("axis", -1)))
    peak = v.max(axis=axes, keepdims=True)
    if inp.el_type.is_sa:
        scale, frac = int(np.ravel(inp.scale)[0]), int(np.ravel(inp.scale_frac_bits)[0])
        # The input zero point cancels: the reference passes the maximum as the offset.
        fx = luts.sa8_input(v, peak, scale, frac, table, mode)
        e = luts.lookup(fx, table, luts.sa8_to_fx16_frac(table), mode)
        out_frac = _SA8_OUT["softmax"][1]
    else:
        e = luts.lookup(sat(v - peak, 32), table, int(inp.frac_bits), mode)
        out_frac = FX16_OUT_FRAC
    total = wrap(e.sum(axis=axes, keepdims=True), 32)
    total_exp = norm(total, 32)
    mantissa = sat(asr_rnd(total, 16 - total_exp, 32, mode), 16)  # in [0.5, 1) as Q15
    recip = np.minimum((1 << 29) // mantissa, 32767)
    shift = np.minimum(2 * table.out_frac_bits + (15 - total_exp) - out_frac, 31)
    prod = recip * e
    if inp.el_type.is_sa:
        res = luts.fx16_to_sa8(prod, _SA8_OUT["softmax"][0], shift, mode)
    else:
        res = sat(asr_rnd(prod, shift, 32, mode), 16)
    return res.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


# --------------------------------------------------------------------------- l2_normalize
_L2_LUT_IN_FRAC = 8  # the normalised sum of squares enters the table as Q7.8


def l2_normalize(
    x, inp: MliTensor, epsilon: MliTensor | None, out: MliTensor, cfg: dict, arith: Arith
) -> np.ndarray:
    """`mli_krn_l2_normalize_{fx16,sa8}` along `cfg['axis']` (-1: the whole tensor).

    MLI 2.0.2 ignores `epsilon`. The sum of squares (64-bit) is normalised by an even shift into
    Q7.8, its inverse square root read from the `l2_normalize` table, and every element scaled
    by it; outputs Q15 (fx16) or zp 0, scale 1, frac 7 (sa8).
    """
    _require_lut_types("l2_normalize", inp)
    table = luts.lut("l2_normalize")
    mode = arith.round_mode
    v = batched_view(x, inp)
    if inp.el_type.is_sa:
        v = sat(v - int(np.ravel(inp.zero_point)[0]), 16)
        out_frac = _SA8_OUT["l2_normalize"][1]
    else:
        out_frac = FX16_OUT_FRAC
    axes = _reduce_axes(inp, int(cfg.get("axis", -1)))
    total = (v * v).sum(axis=axes, keepdims=True)
    norm_shift = (64 - 16) - norm(total, 64)
    norm_shift = norm_shift + (norm_shift & 1)  # even: the square root halves it
    mantissa = sat(asr_rnd(total, norm_shift, 64, mode), 16)
    inv_sqrt = luts.lookup(mantissa, table, _L2_LUT_IN_FRAC, mode)
    shift = table.out_frac_bits + ((norm_shift + _L2_LUT_IN_FRAC) >> 1) - out_frac
    res = sat(asr_rnd(inv_sqrt * v, shift, 32, mode), storage(out.el_type))
    return res.reshape((v.shape[0],) + out.shape).astype(out.el_type.dtype)


# ---------------------------------------------------------------------------------------------
# Layer adapters for the executor
LAYER_RUNNERS: dict[str, Runner] = {
    "relu": runner(relu),
    "leaky_relu": runner(leaky_relu, "slope", cfg=False),
    "prelu": runner(prelu, "slope"),
    "sigm": runner(sigm, cfg=False),
    "tanh": runner(tanh, cfg=False),
    "softmax": runner(softmax),
    "l2_normalize": runner(l2_normalize, "epsilon?"),  # MLI 2.0.2 ignores epsilon
}
