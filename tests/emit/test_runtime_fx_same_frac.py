"""LEAKY_RELU and PRELU in FX formats: MLI's FX kernels refuse an output whose frac bits differ
from the input's (MLI_STATUS_SPEC_PARAM_MISMATCH), so the output takes the input's frac bits even
where the model gives the two tensors different ranges (TFLite Micro's seanet 16x8 LEAKY_RELU
models did). Checked on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, options, single_op_model


def leaky_relu_16x8(path):
    """int16 [1, 4, 6, 8], input range ±32, output range ±8: FX16 frac bits 10 and 12."""
    path.write_bytes(
        single_op_model(
            "LEAKY_RELU",
            [T([1, 4, 6, 8], dtype="int16", scale=[32 / 32768], zero_point=[0])],
            [T([1, 4, 6, 8], dtype="int16", scale=[8 / 32768], zero_point=[0])],
            options("LeakyReluOptions", alpha=0.25),
        )
    )
    return path


def prelu_int8(path):
    """int8 PRELU whose output range is a quarter of its input's."""
    slope = np.random.default_rng(5).integers(-100, 100, (1, 1, 8)).astype(np.int8)
    path.write_bytes(
        single_op_model(
            "PRELU",
            [
                T([1, 4, 6, 8], scale=[0.25], zero_point=[0]),
                T([1, 1, 8], scale=[0.01], zero_point=[0], data=slope),
            ],
            [T([1, 4, 6, 8], scale=[0.0625], zero_point=[-3])],
        )
    )
    return path


MODELS = {"leaky_relu_16x8": leaky_relu_16x8, "prelu_int8": prelu_int8}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fx_output_takes_the_input_frac_bits(name, tmp_path):
    model = lower(read(MODELS[name](tmp_path / f"{name}.tflite")).main, format="fx16")
    (layer,) = [la for la in model.layers if la.kind in ("leaky_relu", "prelu")]
    x, out = model.tensor(layer.inputs[0]), model.tensor(layer.outputs[0])
    assert out.frac_bits == x.frac_bits
    assert any("requires them equal" in n for n in out.notes)


@pytest.mark.parametrize("fmt", ["fx16", "fx8w16d"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_on_the_real_library(name, fmt, mli_builds, tmp_path):
    H.assert_bit_exact(
        H.run_case(
            MODELS[name](tmp_path / f"{name}.tflite"),
            fmt,
            tmp_path / "out",
            mli_builds,
            mli_cflags("2.0"),
        )
    )
