"""The op corpus's TFLite_Detection_PostProcess files (tests/corpus_ops, builder-made by
tools/make_op_corpus.py: fast NMS, regular NMS, fast NMS with 2 classes per detection): tflite
and float mode equal LiteRT in every row it writes, convert succeeds (sa8, no calibration: the op
stays float32), and the emitted C equals the executor on the real MLI 2.0.2 library in the four
builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.detection_models import defined_rows
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = [
    "detection_postprocess_float32",
    "detection_postprocess_multiclass_float32",
    "detection_postprocess_regular_float32",
]


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    t = g.tensors[g.inputs[0]]
    xs = {g.inputs[0]: np.random.default_rng(0).uniform(-1, 1, (8, *t.shape)).astype(np.float32)}
    ref = reference_outputs(path, g, xs)
    boxes, classes, scores, count = g.outputs
    for mode in ("tflite", "float"):
        ours = run_graph(g, xs, mode)
        np.testing.assert_array_equal(ours[count], ref[count])
        assert ref[count].min() >= 1
        for s, n in enumerate(ref[count][:, 0].astype(int)):
            rows = defined_rows(g.ops[0].options, n)
            for o in (boxes, classes, scores):
                np.testing.assert_array_equal(ours[o][s, 0][rows], ref[o][s, 0][rows])
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_detection_postprocess", ""]


@pytest.mark.parametrize("name", FILES)
def test_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
