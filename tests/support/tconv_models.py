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
        return [
            shape,
            T([co, *k, ci], dtype="float32", data=w, name="w", scale=None),
            T([1, *in_hw, ci], dtype="float32", name="x", scale=None),
            T(
                [co],
                dtype="float32",
                data=rng.normal(0, 0.5, co).astype(np.float32),
                name="b",
                scale=None,
            ),
            T([1, *out_hw, co], dtype="float32", name="y", scale=None),
        ]
    ws = rng.uniform(0.002, 0.01, co)
    w = rng.integers(-127, 128, (co, *k, ci)).astype(np.int8)
    # an output sums up to ceil(k/2)^2 * ci products of uniform inputs and weights: cover 4
    # standard deviations of that sum
    taps = -(-k[0] // 2) * -(-k[1] // 2) * ci
    if kind == "int8":
        s_in, zp_in, dt, bdt, zp_out, qmax = 0.05, -3, "int8", "int32", 5, 127
    else:  # 16x8
        s_in, zp_in, dt, bdt, zp_out, qmax = 1 / 2048, 0, "int16", "int64", 0, 32767
    x_std, w_std = s_in * qmax / 3**0.5, 0.006 * 127 / 3**0.5
    s_out = 4 * x_std * w_std * taps**0.5 / qmax
    bias = rng.integers(-3000, 3000, co).astype(bdt)
    return [
        shape,
        T([co, *k, ci], data=w, name="w", scale=ws.tolist(), zero_point=[0] * co),
        T([1, *in_hw, ci], dtype=dt, name="x", scale=[s_in], zero_point=[zp_in]),
        T([co], dtype=bdt, data=bias, name="b", scale=(s_in * ws).tolist(), zero_point=[0] * co),
        T([1, *out_hw, co], dtype=dt, name="y", scale=[s_out], zero_point=[zp_out]),
    ]


def tconv_model(
    path: Path,
    kind: str = "int8",
    padding: str = "SAME",
    stride=(2, 2),
    in_hw=(5, 6),
    out_hw=(10, 12),
    k=(3, 3),
    ci=4,
    co=6,
    act: str = "NONE",
    bias: bool = True,
    seed: int = 0,
) -> Path:
    """A one-op TRANSPOSE_CONV model (see the module docstring)."""
    tensors = tconv_tensors(kind, out_hw, in_hw, k, ci, co, seed)
    ins = [0, 1, 2, 3] if bias else [0, 1, 2]
    opts = options(
        "TransposeConvOptions",
        padding=PADDING[padding],
        strideW=stride[1],
        strideH=stride[0],
        fusedActivationFunction=ACTIVATION[act],
    )
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


def decoder_model(path: Path, seed: int = 1) -> Path:
    """A U-Net style int8 block: x [1,8,8,4] -> CONV_2D stride 2 (RELU) -> [1,4,4,8] ->
    TRANSPOSE_CONV stride 2 -> [1,8,8,4], concatenated with x along channels (same
    parameters: the transpose conv writes straight into a strided view of the concatenation)
    -> CONV_2D 1x1 -> [1,8,8,3]."""
    rng = np.random.default_rng(seed)

    def weights(shape):
        n = shape[0]
        return (
            T(
                list(shape),
                data=rng.integers(-127, 128, shape).astype(np.int8),
                scale=rng.uniform(0.002, 0.01, n).tolist(),
                zero_point=[0] * n,
            ),
            rng.uniform(0.002, 0.01, n),
        )

    s_x, s_c, s_y = 0.05, 0.08, 0.1
    w1, _ = weights((8, 3, 3, 4))
    w2, _ = weights((4, 3, 3, 8))
    w3, _ = weights((3, 1, 1, 8))

    def bias(w_t, s_in):
        n = len(w_t.scale)
        return T(
            [n],
            dtype="int32",
            data=rng.integers(-2000, 2000, n).astype(np.int32),
            scale=(s_in * np.asarray(w_t.scale)).tolist(),
            zero_point=[0] * n,
        )

    tensors = [
        T([1, 8, 8, 4], name="x", scale=[s_x], zero_point=[-2]),  # 0
        w1,
        bias(w1, s_x),  # 1, 2
        T([1, 4, 4, 8], name="down", scale=[s_c], zero_point=[-128]),  # 3
        T([4], dtype="int32", data=np.array([1, 8, 8, 4], np.int32)),  # 4
        w2,
        bias(w2, s_c),  # 5, 6
        T([1, 8, 8, 4], name="up", scale=[s_x], zero_point=[-2]),  # 7
        T([1, 8, 8, 8], name="cat", scale=[s_x], zero_point=[-2]),  # 8
        w3,
        bias(w3, s_x),  # 9, 10
        T([1, 8, 8, 3], name="y", scale=[s_y], zero_point=[3]),
    ]  # 11
    ops = [
        (
            "CONV_2D",
            [0, 1, 2],
            [3],
            options("Conv2DOptions", padding=0, strideW=2, strideH=2, fusedActivationFunction=1),
        ),
        (
            "TRANSPOSE_CONV",
            [4, 5, 3, 6],
            [7],
            options("TransposeConvOptions", padding=0, strideW=2, strideH=2),
        ),
        ("CONCATENATION", [0, 7], [8], options("ConcatenationOptions", axis=3)),
        ("CONV_2D", [8, 9, 10], [11], options("Conv2DOptions", padding=0, strideW=1, strideH=1)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [11]))
    return path
