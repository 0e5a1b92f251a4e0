"""ZEROS_LIKE that constant folding leaves (a graph output, also of a dynamic batch) converts
onto the `fill_value` fallback C: the mli executor equals tflite mode (LiteRT's kernel for int32
and float32, stored zeros for int8 as TFLite Micro writes them), and the emitted C equals the
executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import dataclasses

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
from tests.support.tflite_build import T, graph_model, options

SHAPE = (1, 4, 3)


def _tensor(dtype, signature):
    if dtype == "int8":
        t = T(list(SHAPE), "int8", [0.05], -3)
    elif dtype == "int16":
        t = T(list(SHAPE), "int16", [0.001], 0)
    else:
        t = T(list(SHAPE), dtype)
    return dataclasses.replace(t, shape_signature=signature)


def _model(tmp_path, dtype, signature=None):
    path = tmp_path / f"zeros_like_out_{dtype}_{signature is not None}.tflite"
    tensors = [_tensor(dtype, signature), _tensor(dtype, signature)]
    ops = [("ZEROS_LIKE", [0], [1], options("ZerosLikeOptions"))]
    path.write_bytes(graph_model(tensors, ops, [0], [1]))
    return path


def _inputs(g, n=3):
    t = g.tensors[g.inputs[0]]
    x = np.random.default_rng(0).integers(-100, 100, (n, *t.shape)).astype(t.dtype)
    return {g.inputs[0]: x}


@pytest.mark.parametrize("signature", [None, [-1, 4, 3]])
@pytest.mark.parametrize("dtype", ["int8", "int32", "float32"])
def test_graph_output_zeros_like_lowers_onto_fill_value(dtype, signature, tmp_path):
    path = _model(tmp_path, dtype, signature)
    g = read(path).main
    assert [op.type for op in g.ops] == ["ZEROS_LIKE"]  # not folded: a graph output
    xs = _inputs(g)
    want = run_graph(g, xs, "tflite")[g.outputs[0]]
    if dtype != "int8":  # LiteRT has no int8 ZEROS_LIKE
        np.testing.assert_array_equal(want, reference_outputs(path, g, xs)[g.outputs[0]])
    else:
        assert not want.any()
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    assert [la.kernel for la in model.layers] == ["mlitool_fill_value"]
    (layer,) = model.layers
    out = model.tensor(layer.outputs[0])
    # float32 in sa8: the real 0 is the zero point; int8: TFLite's stored 0; int32: 0
    assert layer.cfg["value"] == (int(out.zero_point[0]) if dtype == "float32" else 0)
    if dtype != "float32":
        ours, _ = run_mli(g, model, xs, arith_for("vpx"))
        np.testing.assert_array_equal(ours[g.outputs[0]], want)


def test_int16_zeros_like_is_zero_in_fx16(tmp_path):
    g = read(_model(tmp_path, "int16")).main
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    assert [(la.kernel, la.cfg["value"]) for la in model.layers] == [("mlitool_fill_value", 0)]


@pytest.mark.parametrize(("dtype", "fmt"), [("int8", "sa8"), ("int8", "fx16"), ("int32", "sa8")])
def test_c_on_the_real_library(dtype, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, dtype)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
