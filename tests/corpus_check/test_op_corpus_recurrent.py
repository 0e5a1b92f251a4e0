"""Files of the op corpus (tests/corpus_ops, tools/make_op_corpus.py) the recurrent family runs:
SVDF (TFLite Micro's keyword_scrambled op) over a stream of consecutive invocations (its state
carries between them), and an integer LSTM whose cell-state scale is not a power of two. tflite
mode (float mode for the float32 file) equals LiteRT, convert succeeds (int8: sa8; float32: sa8
--weights-only and calibrated), and the emitted C equals the executor on the real MLI 2.0.2
library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = ["svdf_float32", "svdf_int8"]
LSTM_CELL_SCALE = CORPUS / "lstm_cell_scale_int8.tflite"


def _inputs(g, n: int = 16, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-1, 1, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_over_a_stream_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    float32 = name.endswith("float32")
    ours = run_graph(g, xs, "float" if float32 else "tflite")[g.outputs[0]]
    if float32:  # float32 sums in another order than LiteRT's
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(ours, ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=float32)
    assert [la.kernel for la in model.layers] == ["mlitool_svdf8"]


@pytest.mark.parametrize("name", FILES)
def test_c_on_the_real_library_over_a_stream(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    calib = None
    if name.endswith("float32"):
        calib = tmp_path / "calib.npy"
        np.save(calib, _inputs(read(path).main, 32, 1)[0])
    H.assert_bit_exact(
        H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calib)
    )


def test_lstm_cell_scale_not_a_power_of_two(mli_builds, tmp_path):
    """LiteRT outputs 0 everywhere (its Prepare fails silently) and tflite mode with it; the MLI
    conversion runs the LSTM on the int16 state's range, equal to the executor in C."""
    g = read(LSTM_CELL_SCALE).main
    xs = _inputs(g)
    ref = reference_outputs(LSTM_CELL_SCALE, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    assert (ref == 0).all()
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert "lstm_cell" in {la.kind for la in model.layers}
    notes = [n for la in model.layers for n in la.notes]
    assert any("LiteRT's integer LSTM outputs 0" in n for n in notes)  # said where it converts
    H.assert_bit_exact(
        H.run_case(LSTM_CELL_SCALE, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"))
    )
