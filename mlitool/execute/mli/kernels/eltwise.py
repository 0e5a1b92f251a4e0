"""MLI 2.0.2 element-wise kernels: add, sub, mul, min, max for sa8, fx8 and fx16.

Shapes: `x1`, `x2` are (B,) + in.shape. An operand with one element (rank 0, shape (1,) or
(1, ..., 1)) is a scalar and broadcasts over the other; otherwise both have out.size elements
(MLI walks them in row-major order). An operand given without the batch axis (a constant's
`.data`) is a batch of one and broadcasts over the other operand's batch.

As in MLI, min/max of SA8 use in1's scale for both inputs (the kernel requires equal params) and
min/max of FX use in1's frac bits.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from mlitool.errors import ModelFormatError
from mlitool.execute.mli.kernels.intops import Arith, asr_rnd, norm, sat
from mlitool.execute.mli.kernels.qparams import batched_view, norm_cast, storage
from mlitool.mli.types import MliLayer, MliModel, MliTensor

_MUL_MAX_SHIFT = 31
_MAX_MIN_UPPER_LIMIT_SHIFT = 23
OPS = ("add", "sub", "mul", "min", "max")


def _operand(x, t: MliTensor, out: MliTensor) -> np.ndarray:
    v = batched_view(x, t)
    tail = (1,) * out.rank if t.size == 1 else out.shape
    return v.reshape((v.shape[0],) + tail)


def _limit_shift(shift: int, upper: int) -> int:
    """How far the reference moves a too large (or too negative) shift into the int16 scale."""
    return max(shift - upper, 0) + min(_MUL_MAX_SHIFT + shift, 0)


def _norm_up(scale: int) -> tuple[int, int]:
    """`norm_cast<int32, int32>`: the scale shifted left to normalise it, and that (negative) shift."""
    n = int(norm(scale, 32))
    return scale << n, -n


def _scale16(ratio: int, shift: int, upper: int, mode: str) -> tuple[int, int]:
    """Cast the 32-bit ratio to an int16 scale, then pull `shift` into a usable range."""
    s16, ns = norm_cast(ratio, 32, 16, mode)
    shift -= int(ns)
    lim = _limit_shift(shift, upper)
    return int(asr_rnd(s16, lim, 16, mode)), shift - lim


def _sa8(op: str, a, b, in1: MliTensor, in2: MliTensor, out: MliTensor, mode: str) -> np.ndarray:
    sc1, sc2, sco = (int(t.scale.reshape(-1)[0]) for t in (in1, in2, out))
    f1, f2, fo = (int(t.scale_frac_bits.reshape(-1)[0]) for t in (in1, in2, out))
    zp1, zp2, zpo = (int(t.zero_point.reshape(-1)[0]) for t in (in1, in2, out))
    a = sat(a - zp1, 16)
    b = sat(b - zp2, 16)
    if op in ("min", "max"):
        ratio, ns = _norm_up(sc1)
        s16, post = _scale16(ratio // sco, f1 - fo - ns, _MAX_MIN_UPPER_LIMIT_SHIFT, mode)
        pick = np.maximum if op == "max" else np.minimum
        acc = sat(asr_rnd(pick(a * s16, b * s16), post, 32, mode), 16)
    elif op == "mul":
        ratio, ns = _norm_up(sc1 * sc2)
        s16, post = _scale16(ratio // sco, f1 + f2 - fo - ns, _MUL_MAX_SHIFT, mode)
        # 8 output bits + 3 headroom bits of a 32-bit product: pre-shift the rest (at most 3).
        pre = min(max(post - (32 - 8 - 3), 0), 3)
        acc = sat(asr_rnd(a * b, pre, 32, mode), 16) * s16
        acc = sat(asr_rnd(acc, post - pre, 32, mode), 16)
    else:
        terms = []
        for v, sc, f in ((a, sc1, f1), (b, sc2, f2)):
            ratio, ns = _norm_up(sc)
            s16, pre = _scale16(ratio // sco, f - fo - ns, _MAX_MIN_UPPER_LIMIT_SHIFT, mode)
            terms.append(asr_rnd(v * s16, pre, 32, mode))
        acc = terms[0] + terms[1] if op == "add" else terms[0] - terms[1]
        acc = sat(sat(acc, 32), 16)
    return sat(sat(acc + zpo, 16), 8)


def _fx(op: str, a, b, in1: MliTensor, in2: MliTensor, out: MliTensor, mode: str) -> np.ndarray:
    bits = storage(out.el_type)
    f1, f2, fo = int(in1.frac_bits), int(in2.frac_bits), int(out.frac_bits)
    if op in ("min", "max"):
        post = min(f1 - fo, bits - 1)
        pick = np.maximum if op == "max" else np.minimum
        return asr_rnd(pick(a, b), post, bits, mode)  # saturates only on a left shift
    if op == "mul":
        acc = a * b
        post = f1 + f2 - fo
    else:
        a = asr_rnd(a, min(f1 - f2, 0), 32, mode)  # align to the finer input (asl, sat)
        b = asr_rnd(b, min(f2 - f1, 0), 32, mode)
        acc = sat(a + b if op == "add" else a - b, 32)
        post = max(f1, f2) - fo
    return sat(asr_rnd(acc, min(post, 2 * bits - 1), 64, mode), bits)


def eltwise(
    op: str, x1, x2, in1: MliTensor, in2: MliTensor, out: MliTensor, arith: Arith
) -> np.ndarray:
    """`mli_krn_eltwise_<op>_{sa8,fx8,fx16}` on a batch; returns (B,) + out.shape."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    if _by_table(x1, x2, in1, in2, out):
        return _table(op, in1, in2, out, arith)[_pair_index(x1, x2)].reshape(
            x1.shape[:1] + out.shape
        )
    a, b = _operand(x1, in1, out), _operand(x2, in2, out)
    if out.el_type.is_sa:
        res = _sa8(op, a, b, in1, in2, out, arith.round_mode)
    else:
        res = _fx(op, a, b, in1, in2, out, arith.round_mode)
    res = np.broadcast_to(res, (max(a.shape[0], b.shape[0]),) + out.shape)
    return res.astype(out.el_type.dtype)


# 8-bit operands of equal shape: the kernel is a function of the byte pair (every parameter is
# per tensor), so one table of its 65536 results, computed by the code above, replaces a dozen
# int64 passes by one lookup (tables are cached per parameters, so a later batch reuses them).
_TABLE_MIN_SIZE = 1 << 16


def _by_table(
    x1: np.ndarray, x2: np.ndarray, in1: MliTensor, in2: MliTensor, out: MliTensor
) -> bool:
    return (
        x1.dtype.itemsize == 1
        and x2.dtype.itemsize == 1
        and x1.dtype.kind == "i"
        and x2.dtype.kind == "i"
        and out.el_type.dtype.itemsize == 1
        and x1.shape == x2.shape == x1.shape[:1] + in1.shape
        and in1.size == in2.size == out.size
        and x1.size >= _TABLE_MIN_SIZE
    )


def _pair_index(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """(byte of x1) * 256 + (byte of x2), the raw two's-complement bytes."""
    idx = x1.view(np.uint8).astype(np.uint16)
    idx <<= 8
    idx |= x2.view(np.uint8)
    return idx


def _table(op: str, in1: MliTensor, in2: MliTensor, out: MliTensor, arith: Arith) -> np.ndarray:
    """The kernel's result for every byte pair, indexed as `_pair_index` (cached per parameters)."""
    key = (op, arith.round_mode) + tuple(_params(t) for t in (in1, in2, out))
    if key not in _TABLES:
        raw = np.arange(1 << 16, dtype=np.uint16)
        a = (raw >> 8).astype(np.uint8).view(np.int8).astype(np.int64)
        b = (raw & 0xFF).astype(np.uint8).view(np.int8).astype(np.int64)
        kernel = _sa8 if out.el_type.is_sa else _fx
        res = kernel(op, a, b, in1, in2, out, arith.round_mode)
        if len(_TABLES) >= 256:
            _TABLES.clear()
        _TABLES[key] = np.asarray(res).astype(out.el_type.dtype)
    return _TABLES[key]


_TABLES: dict[tuple, np.ndarray] = {}


def _params(t: MliTensor) -> tuple:
    if t.el_type.is_sa:
        return (
            t.el_type.name,
            int(t.scale.reshape(-1)[0]),
            int(t.scale_frac_bits.reshape(-1)[0]),
            int(t.zero_point.reshape(-1)[0]),
        )
    return (t.el_type.name, int(t.frac_bits))


def eltwise_add(x1, x2, in1, in2, out, arith):
    return eltwise("add", x1, x2, in1, in2, out, arith)


def eltwise_sub(x1, x2, in1, in2, out, arith):
    return eltwise("sub", x1, x2, in1, in2, out, arith)


def eltwise_mul(x1, x2, in1, in2, out, arith):
    return eltwise("mul", x1, x2, in1, in2, out, arith)


def eltwise_min(x1, x2, in1, in2, out, arith):
    return eltwise("min", x1, x2, in1, in2, out, arith)


def eltwise_max(x1, x2, in1, in2, out, arith):
    return eltwise("max", x1, x2, in1, in2, out, arith)


# ---------------------------------------------------------------------------------------------
# Layer adapter for the executor
def _run_layer(op: str):
    def run(layer: MliLayer, model: MliModel, inputs: list, arith: Arith) -> np.ndarray:
        """Operands in call order: `layer.inputs` fill the slots in order (batched arrays from
        `inputs`); a constant operand is named in `layer.params` as "in1" or "in2" and its
        `.data` (no batch axis) broadcasts over the batch."""
        t = model.tensors
        slots: list = [None, None]
        for i, key in enumerate(("in1", "in2")):
            if key in layer.params:
                const = t[layer.params[key]]
                if const.data is None:
                    raise ModelFormatError(
                        f"layer {layer.index} ({layer.kind}): constant operand "
                        f"{const.name!r} has no data",
                        model.source,
                    )
                slots[i] = (const.data, const)
        free = iter(zip(inputs, layer.inputs))
        for i in range(2):
            if slots[i] is None:
                x, name = next(free)
                slots[i] = (x, t[name])
        (x1, in1), (x2, in2) = slots
        return eltwise(op, x1, x2, in1, in2, t[layer.outputs[0]], arith)

    run.__doc__ = f"Run an eltwise_{op} layer."
    return run


LAYER_RUNNERS: dict[str, Callable[[MliLayer, MliModel, list, Arith], np.ndarray]] = {
    f"eltwise_{op}": _run_layer(op) for op in OPS
}
