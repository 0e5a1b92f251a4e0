"""Per-channel bias scales (input scale x weight scale) just below a power of two, whose int16
MLI encoding rounds to 32768 (issue 21): conv2d, depthwise conv2d and fully connected layers of a
generated int8 model convert in sa8 and run on the real MLI 2.0.2 library, which checks every
bias scale in its debug build (mli_chk_bias_scale_asym), bit-exact against the executor in the
four builds. Likewise a bias whose scale count differs from its weights' (tests/support/bias_models.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.support import runtime_harness as H
from tests.support.bias_models import W_SCALES, mismatched_bias_conv
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def f32(x) -> np.float32:
    return np.float32(x)


def below(power: int, steps) -> np.ndarray:
    """The float32 values `steps` float32 steps below 2^power."""
    return (np.int32((power + 127) << 23) - np.asarray(steps, np.int32)).view(np.float32)


# Layer 1's input scale 2^-7 (int16 16384): weight scales a few float32 steps below a power of
# two round to 32768 and are encoded 16384 with one frac bit less; their bias scales (2^-7 x w)
# sit just below a power of two, the encoded product on it. Plus ordinary channels.
IN_SCALE = 2.0**-7
W1 = np.concatenate(
    [below(-8, [1]), below(-9, [3]), [0.0037], [2.0**-10], below(-6, [40]), [0.0021]]
).astype(np.float32)
# Layer 2 and 3's input scale encodes as 18716 * 2^-20: weight scales encoding as 28686 whose
# float bias scale is still below 2^-13 (TFLite's (18716 * 28686) >> 14 = 32768), at several
# powers of two, plus ordinary ones.
MID_SCALE = float(f32(18715.6 * 2.0**-20))
W2 = np.array(
    [
        28685.6 * 2.0**-22,
        28685.65 * 2.0**-23,
        0.0042,
        28685.55 * 2.0**-21,
        0.0061,
        28685.7 * 2.0**-24,
    ],
    np.float32,
)
W3 = np.array(
    [28685.6 * 2.0**-22, 0.0032, 28685.7 * 2.0**-22, 0.0027, 28685.65 * 2.0**-23], np.float32
)


def bias_model(path):
    """[1,6,6,3] -conv 3x3 (6 ch)-> [1,4,4,6] -depthwise 3x3-> [1,2,2,6] -FC-> [1,5]; biases
    carry TFLite's scales float32(input scale x weight scale)."""
    rng = np.random.default_rng(21)

    def weights(shape):
        return rng.integers(-127, 128, shape).astype(np.int8)

    def bias(w_scales, in_scale):
        scales = (f32(in_scale) * w_scales).astype(np.float32)
        return T(
            [len(w_scales)],
            dtype="int32",
            scale=scales.tolist(),
            zero_point=0,
            data=rng.integers(-3000, 3000, len(w_scales)).astype(np.int32),
        )

    tensors = [
        T([1, 6, 6, 3], scale=IN_SCALE, zero_point=-5, name="x"),
        T([6, 3, 3, 3], scale=W1.tolist(), zero_point=0, data=weights((6, 3, 3, 3))),
        bias(W1, IN_SCALE),
        T([1, 4, 4, 6], scale=MID_SCALE, zero_point=3, name="conv"),
        T([1, 3, 3, 6], scale=W2.tolist(), zero_point=0, axis=3, data=weights((1, 3, 3, 6))),
        bias(W2, MID_SCALE),
        T([1, 2, 2, 6], scale=MID_SCALE, zero_point=-2, name="depthwise"),
        T([5, 24], scale=W3.tolist(), zero_point=0, data=weights((5, 24))),
        bias(W3, MID_SCALE),
        T([1, 5], scale=0.05, zero_point=1, name="y"),
    ]
    ops = [
        ("CONV_2D", [0, 1, 2], [3], options("Conv2DOptions", padding=1, strideW=1, strideH=1)),
        (
            "DEPTHWISE_CONV_2D",
            [3, 4, 5],
            [6],
            options("DepthwiseConv2DOptions", padding=1, strideW=1, strideH=1, depthMultiplier=1),
        ),
        ("FULLY_CONNECTED", [6, 7, 8], [9], options("FullyConnectedOptions")),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [9]))
    return path


def test_bias_scales_at_32768_run_on_the_real_library(mli_builds, tmp_path):
    conv = H.convert(bias_model(tmp_path / "bias.tflite"), "sa8", tmp_path / "out")
    # The channels built for it (3, 4 and 3) have bias frac bits one less than the float's.
    lowered = []
    for layer, w in zip((la for la in conv.model.layers if la.bias), (W1, W2, W3)):
        in_scale = IN_SCALE if w is W1 else MID_SCALE
        float_frac = [15 - math.frexp(float(f32(in_scale) * s))[1] for s in w]
        bias = conv.model.tensor(layer.bias)
        fewer = np.subtract(float_frac, bias.scale_frac_bits.tolist())
        assert set(fewer.tolist()) == {0, 1}
        lowered.append(int(fewer.sum()))
        assert f"{lowered[-1]} scale(s) round to 32768: encoded as 16384" in " ".join(bias.notes)
    assert lowered == [3, 4, 3]
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    H.assert_bit_exact(H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 16, 0)))


@pytest.mark.parametrize("kind", sorted(W_SCALES))
def test_bias_with_another_scale_count_runs_on_the_real_library(kind, mli_builds, tmp_path):
    path = mismatched_bias_conv(tmp_path / f"{kind}.tflite", kind)
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
