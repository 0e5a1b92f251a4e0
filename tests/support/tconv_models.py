"""TRANSPOSE_CONV test models, written with the project's own flatbuffer builder.

Inputs in TFLite's order: output_shape (int32 constant), weights (O, KH, KW, I), input
[1, H, W, I], optional bias [O]. int8 models take per-channel weights and int32 bias; 16x8
models int16 activations (zero point 0) and int64 bias; float models float32 throughout.
Scales are chosen so the outputs use their range without saturating much.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.tflite_build import T, graph_model, options

PADDING = {"SAME": 0, "VALID": 1}
ACTIVATION = {"NONE": 0, "RELU": 1, "RELU6": 3}


def tconv_tensors(kind: str, out_hw, in_hw, k, ci, co, seed: int) -> list[T]:
    """[output_shape, weights, input, bias, output] of one TRANSPOSE_CONV."""
    rng = np.random.default_rng(seed)
    shape = T([4], dtype="int32", data=np.array([1, *out_hw, co], np.int32), name="shape")
    if kind == "float":
        w = rng.normal(0, 0.3, (co, *k, ci)).astype(np.float32)
        return [shape, T([co, *k, ci], dtype="float32", data=w, name="w", scale=None),
                T([1, *in_hw, ci], dtype="float32", name="x", scale=None),
                T([co], dtype="float32", data=rng.normal(0, 0.5, co).astype(np.float32),
                  name="b", scale=None),
                T([1, *out_hw, co], dtype="float32", name="y", scale=None)]
    ws = rng.uniform(0.002, 0.01, co)
    w = rng.integers(-127, 128, (co, *k, ci)).astype(np.int8)
    # an output sums up to ceil(k/2)^2 * ci products of uniform inputs and weights: cover 4
    # standard deviations of that sum
    taps = -(-k[0] // 2) * -(-k[1] // 2) * ci
    if kind == "int8":
        s_in, zp_in, dt, bdt, zp_out, qmax = 0.05, -3, "int8", "int32", 5, 127
    else:                                          # 16x8
        s_in, zp_in, dt, bdt, zp_out, qmax = 1 / 2048, 0, "int16", "int64", 0, 32767
    x_std, w_std = s_in * qmax / 3 ** 0.5, 0.006 * 127 / 3 ** 0.5
    s_out = 4 * x_std * w_std * taps ** 0.5 / qmax
    bias = rng.integers(-3000, 3000, co).astype(bdt)
    return [shape, T([co, *k, ci], data=w, name="w", scale=ws.tolist(), zero_point=[0] * co),
            T([1, *in_hw, ci], dtype=dt, name="x", scale=[s_in], zero_point=[zp_in]),
            T([co], dtype=bdt, data=bias, name="b", scale=(s_in * ws).tolist(),
              zero_point=[0] * co),
            T([1, *out_hw, co], dtype=dt, name="y", scale=[s_out], zero_point=[zp_out])]


def tconv_model(path: Path, kind: str = "int8", padding: str = "SAME", stride=(2, 2),
                in_hw=(5, 6), out_hw=(10, 12), k=(3, 3), ci=4, co=6, act: str = "NONE",
                bias: bool = True, seed: int = 0) -> Path:
    """A one-op TRANSPOSE_CONV model (see the module docstring)."""
    tensors = tconv_tensors(kind, out_hw, in_hw, k, ci, co, seed)
    ins = [0, 1, 2, 3] if bias else [0, 1, 2]
    opts = options("TransposeConvOptions", padding=PADDING[padding], strideW=stride[1],
                   strideH=stride[0], fusedActivationFunction=ACTIVATION[act])
    path.write_bytes(graph_model(tensors, [("TRANSPOSE_CONV", ins, [4], opts)], [2], [4]))
    return path


# name -> keyword arguments of tconv_model: SAME and VALID, stride 2 and mixed strides,
# outputs TFLite pads unevenly, fused activations, no bias, a 4x4 kernel.
INT8_CASES = {
    "same_s2": dict(),
    "same_s2_odd": dict(out_hw=(9, 11)),
    "valid_s2_relu": dict(padding="VALID", out_hw=(11, 13), act="RELU"),
    "same_s1x2_relu6": dict(stride=(1, 2), out_hw=(5, 12), act="RELU6", bias=False),
    "same_k4_s2": dict(k=(4, 4), in_hw=(4, 4), out_hw=(8, 8), ci=8, co=3),
    "valid_k2_s2": dict(padding="VALID", k=(2, 2), in_hw=(3, 5), out_hw=(6, 10)),
}
WIDE_CASES = {
    "same_s2": dict(kind="int16x8"),
    "valid_s2_relu": dict(kind="int16x8", padding="VALID", out_hw=(11, 13), act="RELU"),
}
