"""TODO docstring (execute.float_ops part)."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import real_input

f32 = np.float32


# --------------------------------------------------------------------------------------------
# Convolutions, fully connected, pooling


# --------------------------------------------------------------------------------------------
# Element-wise


def identity(c: Call):
    """QUANTIZE / DEQUANTIZE in float mode: the real value passes unchanged."""
    return [real_input(c, 0)]


# --------------------------------------------------------------------------------------------
# Concatenation and padding (the fused activation / the padding value are float semantics)


# --------------------------------------------------------------------------------------------
# Recurrent
