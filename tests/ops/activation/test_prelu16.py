"""int16 (16x8) PRELU with an int8 slope of any shape (not one along one axis, which MLI's prelu
takes): tflite mode equals LiteRT on every int16 value (power-of-two scales and others), the
`prelu16` fallback C on FX16 makes the mli executor equal LiteRT where the model's scales are
powers of two, and its C equals the executor on the real MLI 2.0.2 library in the four builds.
A run-time slope in a 16x8 model is refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model

SHAPE = (1, 16, 64, 64)  # 65,536 elements: every int16 value once
EVERY = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16).reshape(1, *SHAPE)
# name -> (input scale, slope scale, slope zero point, output scale)
SCALES = {
    "pow2": (1 / 4096, 0.0123, 3, 1 / 2048),
    "pow2_up": (1 / 2048, 0.0071, -5, 1 / 4096),  # doubled: large values saturate
    "ratio": (3e-4, 0.01, 0, 7e-4),
}
SLOPES = {"planes": (16, 1, 64), "pixels": (1, 64, 64)}


def _model(tmp_path, scales, slope="planes", run_time_slope=False):
    si, sa, za, so = SCALES[scales]
    ashape = SLOPES[slope]
    data = np.random.default_rng(7).integers(-128, 128, ashape).astype(np.int8)
    alpha = T(list(ashape), "int8", [sa], za, data=None if run_time_slope else data)
    if run_time_slope:
        alpha = T(list(ashape), "int16", [sa], 0)
    tensors = [T(list(SHAPE), "int16", [si], 0), alpha, T(list(SHAPE), "int16", [so], 0)]
    path = tmp_path / f"prelu16_{scales}_{slope}_{run_time_slope}.tflite"
    ins = [0, 1] if run_time_slope else [0]
    path.write_bytes(graph_model(tensors, [("PRELU", [0, 1], [2], None)], ins, [2]))
    return path


@pytest.mark.parametrize("slope", sorted(SLOPES))
@pytest.mark.parametrize("scales", sorted(SCALES))
def test_tflite_mode_equals_litert_on_every_value(scales, slope, tmp_path):
    path = _model(tmp_path, scales, slope)
    g = read(path).main
    xs = {g.inputs[0]: EVERY}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    assert (ref < 0).any() and (ref > 0).any()


@pytest.mark.parametrize("slope", sorted(SLOPES))
@pytest.mark.parametrize("scales", ["pow2", "pow2_up"])
def test_prelu16_equals_litert_on_power_of_two_scales(scales, slope, tmp_path):
    path = _model(tmp_path, scales, slope)
    g = read(path).main
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_prelu16"]
    xs = {g.inputs[0]: EVERY}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(ours[g.outputs[0]].reshape(ref.shape), ref)


def test_run_time_slope_refused_with_the_reason(tmp_path):
    g = read(_model(tmp_path, "pow2", "pixels", run_time_slope=True)).main
    with pytest.raises(UnsupportedError, match="is not one along one axis.*int16 slope"):
        lower(g, format="fx16", mli_version="2.0", layout="hwc")


@pytest.mark.parametrize("scales", ["pow2_up", "ratio"])
def test_c_on_the_real_library(scales, mli_builds, tmp_path):
    conv = H.convert(_model(tmp_path, scales, "pixels"), "fx16", tmp_path / "out")
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    name = conv.model.inputs[0]
    inputs = {name: EVERY.reshape(1, *conv.model.tensor(name).shape)}
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))
