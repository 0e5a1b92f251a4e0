"""Facts about MLI layer kinds: which multiply-accumulate weights, and the quantization
parameters each MLI kernel leaves in its output tensor.

Which TFLite op becomes which layer kind is its OpSpec's (mlitool/ops/); the kernel
function names per MLI version are in kernels.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool.mli.types import MliTensor

# Layer kinds whose kernels multiply-accumulate weights (weights + bias tensors, MAC headroom).
MAC_KINDS: frozenset[str] = frozenset(
    {"conv2d", "depthwise_conv2d", "group_conv2d", "transpose_conv2d", "fully_connected"}
)
# Kinds that do an op's weighted work: its main layer (an LSTM's cell, not its state reset copy).
WEIGHTED_KINDS: frozenset[str] = MAC_KINDS | {"lstm_cell"}


# --- what a kernel leaves in its output tensor -------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FixedParams:
    """Parameters a kernel writes into its output tensor, whatever it held before
    (golden `*_post_*` values): SA (zero point, scale, scale frac bits), FX frac bits."""

    zero_point: int
    scale: int
    scale_frac_bits: int
    fx_frac_bits: int | None = None


COPIES_INPUT = "copies the input's"  # the kernel copies its input's parameters
# MLI refuses FX input and output frac bits that differ (MLI_STATUS_SPEC_PARAM_MISMATCH): the
# output takes the input's; SA8 outputs keep the model's parameters.
SAME_FX_FRAC_BITS = "the input's FX frac bits"

OUTPUT_PARAMS: dict[str, FixedParams | str] = {
    "relu": COPIES_INPUT,
    "maxpool": COPIES_INPUT,
    "permute": COPIES_INPUT,  # a per-axis dim follows the permutation
    "sigm": FixedParams(-128, 1, 8, 15),
    "tanh": FixedParams(0, 1, 7, 15),
    "softmax": FixedParams(-128, 1, 8, 15),
    "l2_normalize": FixedParams(0, 1, 7, 15),
    "argmax": FixedParams(0, 1, 0),  # SA32 indices
    "leaky_relu": SAME_FX_FRAC_BITS,
    "prelu": SAME_FX_FRAC_BITS,
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
