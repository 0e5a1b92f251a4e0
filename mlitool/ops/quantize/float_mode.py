"""`float` mode kernel of QUANTIZE and DEQUANTIZE: the identity (float mode never re-quantizes an
activation: it is the accuracy reference)."""

from __future__ import annotations

from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import real_input


def identity(c: Call):
    """QUANTIZE / DEQUANTIZE in float mode: the real value passes unchanged."""
    return [real_input(c, 0)]
