"""Parameters of MLI tensors that lowering compares or copies, and the real values of constants:
functions of tensors alone (no lowering state)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.ops import OUTPUT_PARAMS, SAME_FX_FRAC_BITS, output_params
from mlitool.mli.types import MliTensor


def same_params(a: MliTensor, b: MliTensor) -> bool:
    """`a` and `b` hold the same numbers for the same raw values (a copy needs no requantizing)."""
    if a.el_type != b.el_type:
        return False
    if a.el_type.is_fx:
        return a.frac_bits == b.frac_bits
    if a.el_type.is_sa:
        return np.array_equal(a.zero_point, b.zero_point) and np.array_equal(
            a.real_scale(), b.real_scale()
        )
    return True


def kernel_leaves(kind: str, inp: MliTensor, cfg: dict | None = None):
    """What the `kind` kernel leaves in its output tensor (ops.OUTPUT_PARAMS), as a
    function setting it on a tensor (for `kernel_output`); None when it keeps them."""
    rule = OUTPUT_PARAMS.get(kind)
    if rule is None or (rule == SAME_FX_FRAC_BITS and not inp.el_type.is_fx):
        return None

    def leaves(t: MliTensor) -> None:
        left = output_params(kind, inp, t, cfg)
        t.frac_bits, t.zero_point, t.scale = left.frac_bits, left.zero_point, left.scale
        t.scale_frac_bits, t.dim = left.scale_frac_bits, left.dim

    return leaves


def copy_params(src: MliTensor):
    """A function giving a tensor `src`'s parameters (data copied without requantizing)."""

    def leaves(t: MliTensor) -> None:
        t.frac_bits = src.frac_bits
        if src.el_type.is_sa:
            t.zero_point, t.scale = src.zero_point.copy(), src.scale.copy()
            t.scale_frac_bits, t.dim = src.scale_frac_bits.copy(), src.dim

    return leaves


def real(t: ir.Tensor) -> np.ndarray:
    """The real values of a constant tensor (dequantized when it is quantized)."""
    data = np.asarray(t.data)
    if t.quant is not None and data.dtype.kind in "iu":
        return t.quant.dequantize(data)
    return data.astype(np.float64)
