"""The op table: which TFLite ops mlitool lowers, the MLI layer kind each becomes, and the
quantization parameters each MLI kernel leaves in its output tensor.

One source: the support check and lowering (mli/lower/), `inspect`, the executors, verify and
report read these tables; the kernel function names per MLI version are in kernels.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool.mli.types import MliTensor

# TFLite op -> the MLI layer kind it becomes. Two depend on shapes (lower/facts.layer_kind):
# DEPTHWISE_CONV_2D over one input channel is a conv2d, with a channel multiplier a group_conv2d;
# FULLY_CONNECTED over several rows is a 1x1 conv2d.
OP_KINDS: dict[str, str] = {
    "CONV_2D": "conv2d", "DEPTHWISE_CONV_2D": "depthwise_conv2d",
    "FULLY_CONNECTED": "fully_connected", "TRANSPOSE_CONV": "transpose_conv2d",
    "AVERAGE_POOL_2D": "avepool", "MEAN": "avepool", "MAX_POOL_2D": "maxpool",
    "ADD": "eltwise_add", "SUB": "eltwise_sub", "MUL": "eltwise_mul",
    "MINIMUM": "eltwise_min", "MAXIMUM": "eltwise_max",
    "RELU": "relu", "RELU6": "relu", "RELU_N1_TO_1": "relu", "LEAKY_RELU": "leaky_relu",
    "PRELU": "prelu",
    "LOGISTIC": "sigm", "TANH": "tanh", "SOFTMAX": "softmax", "L2_NORMALIZATION": "l2_normalize",
    "ARG_MAX": "argmax", "TRANSPOSE": "permute", "CONCATENATION": "concat",
    "PAD": "padding", "PADV2": "padding", "QUANTIZE": "convert", "DEQUANTIZE": "convert",
    "RESHAPE": "view", "SQUEEZE": "view",
    "SPLIT": "view", "SPLIT_V": "view", "SLICE": "view", "STRIDED_SLICE": "view",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "lstm_cell",
}

SUPPORTED_OPS: frozenset[str] = frozenset(OP_KINDS)

# Layer kinds whose kernels multiply-accumulate weights (weights + bias tensors, MAC headroom).
MAC_KINDS: frozenset[str] = frozenset({
    "conv2d", "depthwise_conv2d", "group_conv2d", "transpose_conv2d", "fully_connected"})

# Ops whose outputs are views of their input where MLI can address them (else mli_mov copies).
SLICE_OPS = ("SPLIT", "SPLIT_V", "SLICE", "STRIDED_SLICE")


# --- what a kernel leaves in its output tensor -------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FixedParams:
    """Parameters a kernel writes into its output tensor, whatever it held before
    (golden `*_post_*` values): SA (zero point, scale, scale frac bits), FX frac bits."""

    zero_point: int
    scale: int
    scale_frac_bits: int
    fx_frac_bits: int | None = None


COPIES_INPUT = "copies the input's"     # the kernel copies its input's parameters
# MLI refuses FX input and output frac bits that differ (MLI_STATUS_SPEC_PARAM_MISMATCH): the
# output takes the input's; SA8 outputs keep the model's parameters.
SAME_FX_FRAC_BITS = "the input's FX frac bits"

OUTPUT_PARAMS: dict[str, FixedParams | str] = {
    "relu": COPIES_INPUT, "maxpool": COPIES_INPUT,
    "permute": COPIES_INPUT,            # a per-axis dim follows the permutation
    "sigm": FixedParams(-128, 1, 8, 15), "tanh": FixedParams(0, 1, 7, 15),
    "softmax": FixedParams(-128, 1, 8, 15), "l2_normalize": FixedParams(0, 1, 7, 15),
    "argmax": FixedParams(0, 1, 0),     # SA32 indices
    "leaky_relu": SAME_FX_FRAC_BITS, "prelu": SAME_FX_FRAC_BITS,
}


def output_params(kind: str, inp: MliTensor, out: MliTensor, cfg: dict | None = None
                  ) -> MliTensor:
    """`out` as the kernel of layer kind `kind` leaves it (unchanged for kinds that keep it)."""
    rule = OUTPUT_PARAMS.get(kind)
    if rule is None:
        return out
    if isinstance(rule, FixedParams):
        if out.el_type.is_fx and rule.fx_frac_bits is not None:
            return dataclasses.replace(out, frac_bits=rule.fx_frac_bits)
        return dataclasses.replace(out, zero_point=np.array([rule.zero_point], np.int16),
                                   scale=np.array([rule.scale], np.int16),
                                   scale_frac_bits=np.array([rule.scale_frac_bits], np.int8),
                                   dim=-1)
    if inp.el_type.is_fx:
        return dataclasses.replace(out, frac_bits=inp.frac_bits)
    if rule == SAME_FX_FRAC_BITS:
        return out
    dim = inp.dim
    if kind == "permute" and dim >= 0:
        dim = [int((cfg or {})[f"perm_dim{i}"]) for i in range(inp.rank)].index(dim)
    return dataclasses.replace(out, frac_bits=inp.frac_bits, zero_point=inp.zero_point.copy(),
                               scale=inp.scale.copy(),
                               scale_frac_bits=inp.scale_frac_bits.copy(), dim=dim)
