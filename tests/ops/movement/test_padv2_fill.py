"""PADV2 with a value that is not real zero in the FX formats: MLI's padding fills zeros, so the
`pad8` / `pad16` fallback C fills the value on the output's frac bits; tflite mode equals LiteRT,
the mli executor puts the value (rounded to the frac bits) around the input, and the C equals
the executor on the real MLI 2.0.2 library in the four builds."""

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
from tests.support.tflite_build import T, graph_model

PADS = np.array([[0, 0], [2, 0], [1, 3], [0, 1]], np.int32)  # H, W and channels, uneven
SCALE, ZP, VALUE = 0.03125, 4, 36  # real value (36 - 4) / 32 = 1.0


def _padv2(tmp_path):
    path = tmp_path / "padv2.tflite"
    q = {"scale": SCALE, "zero_point": ZP}
    path.write_bytes(
        graph_model(
            [
                T([1, 3, 4, 2], **q, name="x"),
                T([4, 2], "int32", data=PADS, name="pads"),
                T([1], data=np.array([VALUE], np.int8), **q, name="value"),
                T([1, 5, 8, 3], **q, name="out"),
            ],
            [("PADV2", [0, 1, 2], [3], None)],
            [0],
            [3],
        )
    )
    return path


def test_tflite_mode_equals_litert(tmp_path):
    path = _padv2(tmp_path)
    g = read(path).main
    xs = {g.inputs[0]: np.random.default_rng(0).integers(-128, 128, (8, 1, 3, 4, 2), np.int8)}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("fmt, kernel", [("fx16", "mlitool_pad16"), ("fx8", "mlitool_pad8")])
def test_fx_padding_fills_the_value(fmt, kernel, tmp_path):
    g = read(_padv2(tmp_path)).main
    model = lower(g, format=fmt, mli_version="2.0", layout="hwc")
    layer = next(la for la in model.layers if la.kind == "fallback")
    assert layer.kernel == kernel
    frac = model.tensor(layer.outputs[0]).frac_bits
    assert layer.cfg["fill"] == 2**frac  # the real value 1.0
    assert [layer.cfg[f"pre{d}"] for d in range(4)] == [2, 1, 0, 0]
    xs = {g.inputs[0]: np.random.default_rng(1).integers(-128, 128, (4, 1, 3, 4, 2), np.int8)}
    # the executor's output back in the model's int8 quantization
    ours = run_mli(g, model, xs, arith_for("vpx"))[0][g.outputs[0]].reshape(4, 5, 8, 3)
    want = run_graph(g, xs, "tflite")[g.outputs[0]].reshape(4, 5, 8, 3)
    inside = np.zeros((5, 8, 3), bool)
    inside[2:5, 1:5, 0:2] = True
    np.testing.assert_array_equal(ours[:, ~inside], VALUE)
    if fmt == "fx16":  # 12 frac bits hold every int8 value of scale 2^-5
        np.testing.assert_array_equal(ours, want)
    assert np.abs(ours.astype(int) - want).max() <= 1


@pytest.mark.parametrize("fmt", ["fx16", "fx8"])
def test_fallback_c_on_the_real_library(fmt, mli_builds, tmp_path):
    results = H.run_case(_padv2(tmp_path), fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"))
    H.assert_bit_exact(results)
