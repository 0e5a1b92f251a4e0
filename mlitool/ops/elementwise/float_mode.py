"""`float` mode kernels of ADD, SUB, MUL, MAXIMUM, MINIMUM on float32 real values."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activated

f32 = np.float32


def add(c: Call):
    a, b = c.aligned(0, 1)
    return activated(c, np.asarray(a, f32) + np.asarray(b, f32))


def sub(c: Call):
    a, b = c.aligned(0, 1)
    return activated(c, np.asarray(a, f32) - np.asarray(b, f32))


def mul(c: Call):
    a, b = c.aligned(0, 1)
    return activated(c, np.asarray(a, f32) * np.asarray(b, f32))


def maximum(c: Call):
    return [np.maximum(*c.aligned(0, 1))]


def minimum(c: Call):
    return [np.minimum(*c.aligned(0, 1))]
