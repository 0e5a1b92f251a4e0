"""`float` mode kernels of CONCATENATION and PAD(V2): the fused activation and the padding value in
float semantics."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activate
from mlitool.ops.movement.layout import concat_parts, pad_with


def concatenation(c: Call):
    parts = [c.x(i) for i in range(len(c.op.inputs))]
    return [activate(concat_parts(c, parts), c.opt("fused_activation"))]


def pad(c: Call):
    value = 0
    if c.has(2):
        value = np.asarray(c.const(2)).reshape(-1)[0]
    return pad_with(c, value)
