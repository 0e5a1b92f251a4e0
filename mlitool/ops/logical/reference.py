"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL on bool tensors: one kernel per op for
both executor modes (TFLite's are plain boolean algebra, no arithmetic to reproduce)."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.ops.reduce.reference import reduce_axes

# The ops by the code the `logic8` fallback C switches on.
CODES = {"LOGICAL_AND": 0, "LOGICAL_OR": 1, "LOGICAL_NOT": 2}


def logical(c: Call):
    if c.op.type == "LOGICAL_NOT":
        return [np.logical_not(np.asarray(c.x(0), bool))]
    a, b = (np.asarray(v, bool) for v in c.aligned(0, 1))
    return [np.logical_and(a, b) if c.op.type == "LOGICAL_AND" else np.logical_or(a, b)]


def reduce_all(c: Call):
    axes, keep = reduce_axes(c)
    y = np.all(np.asarray(c.x(0), bool), axis=axes, keepdims=keep)
    return [y.reshape(c.out_shape())]
