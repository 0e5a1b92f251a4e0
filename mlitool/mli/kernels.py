"""Which TFLite ops mlitool can lower, and which MLI kernels each MLI version offers.

One source of truth: lowering, `inspect` (unsupported-op flags) and the executor read these tables.
"""

from __future__ import annotations

# TFLite op types that lowering turns into MLI kernel calls (or views).
SUPPORTED_OPS: frozenset[str] = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D",
    "ADD", "SUB", "MUL", "MINIMUM", "MAXIMUM", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU",
    "PRELU", "LOGISTIC", "TANH", "SOFTMAX", "L2_NORMALIZATION", "ARG_MAX", "TRANSPOSE",
    "RESHAPE", "SQUEEZE", "CONCATENATION", "PAD", "MEAN", "QUANTIZE", "DEQUANTIZE",
})
