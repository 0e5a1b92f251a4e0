"""The quantization parameters each MLI kernel leaves in its output tensor (`output_params`), and
views of the layer kinds table (`mlitool.mli.kinds`): which kinds multiply-accumulate weights.

Which TFLite op becomes which layer kind is its OpSpec's (mlitool/ops/); every other fact
about a kind is its `kinds.KINDS` entry.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool.mli.kinds import (
    COPIES_INPUT,
    KINDS,
    SAME_FX_FRAC_BITS,
    FixedParams,
    kinds_where,
)
from mlitool.mli.types import MliTensor

__all__ = [
    "COPIES_INPUT",
    "MAC_KINDS",
    "OUTPUT_PARAMS",
    "SAME_FX_FRAC_BITS",
    "WEIGHTED_KINDS",
    "FixedParams",
    "output_params",
]

# Views of the kinds table (mlitool.mli.kinds), for the modules that ask these questions.
# Layer kinds whose kernels multiply-accumulate weights (weights + bias tensors, MAC headroom).
MAC_KINDS: frozenset[str] = frozenset(kinds_where(lambda k: k.mac))
# Kinds that do an op's weighted work: its main layer (an LSTM's cell, not its state reset copy).
WEIGHTED_KINDS: frozenset[str] = frozenset(kinds_where(lambda k: k.weighted))
# What each kernel leaves in its output tensor (FixedParams, COPIES_INPUT or SAME_FX_FRAC_BITS).
OUTPUT_PARAMS: dict[str, FixedParams | str] = {
    k.name: k.output_params for k in KINDS.values() if k.output_params is not None
}


def output_params(kind: str, inp: MliTensor, out: MliTensor, cfg: dict | None = None) -> MliTensor:
    """`out` as the kernel of layer kind `kind` leaves it (unchanged for kinds that keep it)."""
    rule = OUTPUT_PARAMS.get(kind)
    if rule is None:
        return out
    if isinstance(rule, FixedParams):
        if out.el_type.is_fx and rule.fx_frac_bits is not None:
            return dataclasses.replace(out, frac_bits=rule.fx_frac_bits)
        return dataclasses.replace(
            out,
            zero_point=np.array([rule.zero_point], np.int16),
            scale=np.array([rule.scale], np.int16),
            scale_frac_bits=np.array([rule.scale_frac_bits], np.int8),
            dim=-1,
        )
    if inp.el_type.is_fx:
        return dataclasses.replace(out, frac_bits=inp.frac_bits)
    if rule == SAME_FX_FRAC_BITS:
        return out
    dim = inp.dim
    if kind == "permute" and dim >= 0:
        dim = [int((cfg or {})[f"perm_dim{i}"]) for i in range(inp.rank)].index(dim)
    return dataclasses.replace(
        out,
        frac_bits=inp.frac_bits,
        zero_point=inp.zero_point.copy(),
        scale=inp.scale.copy(),
        scale_frac_bits=inp.scale_frac_bits.copy(),
        dim=dim,
    )
