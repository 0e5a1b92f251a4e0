"""ADD_N: the sum of N tensors of one shape.

float and tflite mode: TFLite's float32 kernel, 0 plus each input in order (so -0.0 + -0.0
gives +0.0). LiteRT's ADD_N takes float32 and int32 only (an int8 model holds it as a float
island, not an element-wise one: still refused), so tflite mode refuses an int8 ADD_N. A float
model quantized by mlitool runs it as a chain of the `binary8` fallback C's int8 ADD (TFLite's
int8 ADD arithmetic), each partial sum on the output's parameters.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference.call import Call
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.binary import lower as FBB
from mlitool.ops.binary import reference as BIN
from mlitool.ops.binary.c_kernel import BINARY8
from mlitool.ops.common import fallback_checks as FB

f32 = np.float32


def float_add_n(c: Call):
    total = np.zeros_like(np.asarray(c.x(0), f32))
    for i in range(len(c.op.inputs)):
        total = (total + np.asarray(c.x(i), f32)).astype(f32)
    return [total]


def tflite_add_n(c: Call):
    if np.dtype(c.tin(0).dtype).kind != "f":
        raise c.unsupported(f"{c.tin(0).dtype} ADD_N (LiteRT's kernel takes float32 and int32)")
    return float_add_n(c)


def add_n_same_shapes(s: Subject):
    """ADD_N of tensors of different shapes (TFLite takes one shape)"""
    shapes = {tuple(s.graph.tensors[i].shape) for i in (*s.op.inputs, *s.op.outputs)}
    return _OK if len(shapes) == 1 else {}


def add_n_activations(s: Subject):
    """ADD_N with a constant input (fallback C adds activations)"""
    return _OK if all(s.graph.tensors[i].data is None for i in s.op.inputs) else {}


CHECKS = (*FB.CHECKS, add_n_same_shapes, add_n_activations)


def lower_add_n(b: Builder, op: ir.Op, fmt: str) -> None:
    """ADD(ADD(x0, x1), x2)...: binary8 layers, partial sums on the output's parameters."""
    out_idx = op.outputs[0]
    out = b.produce(out_idx, ElType.SA8)
    qo = FB.sa8_params(b, op, out_idx)
    act = FBB.act_range(*qo, "NONE")
    acc, qa = b.use(op, op.inputs[0], ElType.SA8), FB.sa8_params(b, op, op.inputs[0])
    n = len(op.inputs)
    for k, idx in enumerate(op.inputs[1:], start=1):
        x, qx = b.use(op, idx, ElType.SA8), FB.sa8_params(b, op, idx)
        dst = out if k == n - 1 else b.derived(out, f"{out.name}_sum{k}", notes=["partial sum"])
        cfg = BIN.int8_params("ADD", qa, qx, qo, act)
        note = f"ADD_N of {n}: partial sum {k} of {n - 1} (fallback C binary8, int8 ADD)"
        b.fallback(op, BINARY8, [acc, x], [dst.name], cfg=cfg, notes=[note])
        acc, qa = dst.name, qo
