"""An int8 CONV_2D whose bias has a scale count other than its weights' (one scale for
per-channel weights, or one per channel for per-tensor weights), and bias scales far off input
scale x weight scale: LiteRT runs it, its kernels add the bias in units of input x weight scale."""

from __future__ import annotations

import numpy as np

from tests.support.tflite_build import T, options, single_op_model

IN_SCALE = 0.05
OUT_SCALE = 0.5
W_SCALES = {"per_tensor_weights": [0.01], "per_channel_weights": [0.01, 0.02, 0.03]}
B_SCALES = {"per_tensor_weights": [0.005, 0.006, 0.007], "per_channel_weights": [0.004]}


def mismatched_bias_conv(path, kind: str):
    rng = np.random.default_rng(7)
    w_scales, b_scales = W_SCALES[kind], B_SCALES[kind]
    path.write_bytes(
        single_op_model(
            "CONV_2D",
            [
                T([1, 5, 5, 2], scale=[IN_SCALE], zero_point=[3], name="x"),
                T(
                    [3, 3, 3, 2],
                    scale=w_scales,
                    zero_point=[0] * len(w_scales),
                    name="w",
                    data=rng.integers(-127, 128, (3, 3, 3, 2)).astype(np.int8),
                ),
                T(
                    [3],
                    dtype="int32",
                    scale=b_scales,
                    zero_point=[0] * len(b_scales),
                    name="b",
                    data=np.array([9000, -7000, 5000], np.int32),
                ),
            ],
            [T([1, 3, 3, 3], scale=[OUT_SCALE], zero_point=[-2], name="y")],
            options("Conv2DOptions", padding=1, strideW=1, strideH=1),
        )
    )
    return path


# PT2E (litert-torch) writes a FULLY_CONNECTED bias scale of 0.138 x input x weight scale after
# an eval-mode Dropout: same scale count as the weights, other values.
DROPOUT_RATIO = 0.138
FC_IN_SCALE, FC_W_SCALE, FC_OUT_SCALE = 0.02, 0.004, 0.05


def dropout_bias_fc(path, bias: np.ndarray | None = None):
    """int8 FULLY_CONNECTED [1,16] x [8,16]^T + bias [8] -> [1,8], the bias stored at
    DROPOUT_RATIO x input x weight scale; its raw values (default: seeded, large enough to move
    the output by many steps) or `bias`."""
    rng = np.random.default_rng(34)
    w = rng.integers(-127, 128, (8, 16)).astype(np.int8)
    if bias is None:
        bias = rng.integers(-40000, 40000, 8).astype(np.int32)
    prod = float(np.float32(FC_IN_SCALE) * np.float32(FC_W_SCALE))
    path.write_bytes(
        single_op_model(
            "FULLY_CONNECTED",
            [
                T([1, 16], scale=[FC_IN_SCALE], zero_point=[-4], name="x"),
                T(
                    [8, 16],
                    scale=[FC_W_SCALE],
                    zero_point=[0],
                    name="w",
                    data=w,
                ),
                T(
                    [8],
                    dtype="int32",
                    scale=[DROPOUT_RATIO * prod],
                    zero_point=[0],
                    name="b",
                    data=bias,
                ),
            ],
            [T([1, 8], scale=[FC_OUT_SCALE], zero_point=[2], name="y")],
            options("FullyConnectedOptions"),
        )
    )
    return path
