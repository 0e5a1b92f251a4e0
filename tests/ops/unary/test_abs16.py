"""int16 ABS (16x8 models): tflite mode equals LiteRT on every int16 value (equal scales, a
rescale by a power of two, a rescale by another ratio), the `abs16` layer makes the mli executor
equal tflite mode on power-of-two scales, and its C equals the executor on the real MLI 2.0.2
library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, single_op_model

EVERY = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16).reshape(1, 1, 256, 256)
# (input scale, output scale)
SCALES = {
    "equal": (1 / 4096, 1 / 4096),
    "pow2": (1 / 4096, 1 / 2048),
    "up": (1 / 2048, 1 / 4096),  # doubled: half the values saturate
    "ratio": (1e-4, 3e-4),
}


def _abs_model(tmp_path, s_in, s_out):
    path = tmp_path / "abs16.tflite"
    path.write_bytes(
        single_op_model(
            "ABS",
            [T([1, 256, 256], "int16", scale=s_in)],
            [T([1, 256, 256], "int16", scale=s_out)],
        )
    )
    return path


@pytest.mark.parametrize("case", sorted(SCALES))
def test_tflite_mode_equals_litert_on_every_value(case, tmp_path):
    path = _abs_model(tmp_path, *SCALES[case])
    g = read(path).main
    xs = {g.inputs[0]: EVERY}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)
    if case == "equal":  # |-32768| saturates
        assert ref.min() == 0 and ref.max() == 32767


@pytest.mark.parametrize("case", ["equal", "pow2", "up"])
def test_mli_mode_equals_tflite_mode(case, tmp_path):
    g = read(_abs_model(tmp_path, *SCALES[case])).main
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers if la.kind == "fallback"] == ["mlitool_abs16"]
    xs = {g.inputs[0]: EVERY}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    want = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours[g.outputs[0]].reshape(want.shape), want)


@pytest.mark.parametrize("case", ["up", "ratio"])
def test_fallback_c_on_the_real_library(case, mli_builds, tmp_path):
    conv = H.convert(_abs_model(tmp_path, *SCALES[case]), "fx16", tmp_path / "out")
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    name = conv.model.inputs[0]
    inputs = {name: EVERY.reshape(1, *conv.model.tensor(name).shape)}
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))
