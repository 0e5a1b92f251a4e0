"""`float` mode kernels of the activations: TFLite's float32 semantics on real values."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import repro
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activated, real_input

f32 = np.float32


def relu(c: Call):
    return [np.maximum(real_input(c, 0), f32(0))]


def relu6(c: Call):
    return [np.clip(real_input(c, 0), f32(0), f32(6))]


def relu_n1_to_1(c: Call):
    return [np.clip(real_input(c, 0), f32(-1), f32(1))]


def leaky_relu(c: Call):
    x = real_input(c, 0)
    return [np.where(x >= 0, x, x * f32(c.opt("alpha", 0.2)))]


def prelu(c: Call):
    x, a = (np.asarray(v, f32) for v in c.aligned(0, 1))
    return [np.where(x >= 0, x, x * a)]


# reference_ops::Logistic's cutoffs: above, 1; below, exp(x) (1 / (1 + exp(-x)) rounds otherwise)
LOGISTIC_UPPER, LOGISTIC_LOWER = f32(16.619047164916992188), f32(-9.0)


def logistic(c: Call):
    """reference_ops::Logistic of float32: 1 where x > 16.619..., exp(x) where x < -9, else
    1 / (1 + exp(-x)) in float32. Its exp is the host libm's expf (glibc's: not correctly
    rounded on about 1 input in 2000), this one correctly rounded (`repro.exp`)."""
    x = real_input(c, 0)
    low = x < LOGISTIC_LOWER
    e = repro.exp(np.where(low, x, -x))
    with np.errstate(over="ignore"):
        mid = f32(1) / (f32(1) + e)
    return [np.where(x > LOGISTIC_UPPER, f32(1), np.where(low, e, mid)).astype(f32)]


def tanh(c: Call):
    return [repro.tanh(real_input(c, 0))]


def softmax(c: Call):
    x = real_input(c, 0) * f32(c.opt("beta", 1.0))
    e = repro.exp(x - x.max(axis=-1, keepdims=True))
    return [(e / e.sum(axis=-1, keepdims=True)).astype(f32)]


def l2_normalization(c: Call):
    x = real_input(c, 0)
    norm = np.sqrt(np.maximum((x * x).sum(axis=-1, keepdims=True), f32(1e-6)))
    return activated(c, x / norm)
