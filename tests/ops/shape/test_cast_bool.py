"""CAST of a bool tensor (issue 35): `tf.cast(x > t, tf.float32)` in a float model (CAST lowered
onto `select8`: 1.0 and 0.0 in the output's parameters) and in a full-integer one (GREATER ->
CAST -> QUANTIZE, rewritten at import into one SELECT_V2 of QUANTIZE's two int8 values,
`passes/cast_bool.py`): tflite / float mode equal LiteRT, the mli executor equals tflite mode,
and the emitted C equals the executor on the real MLI 2.0.2 library in the four builds."""

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
from tests.support.tflite_build import T, graph_model, options

S = [1, 4, 4, 8]


def _int8_model(tmp_path, out_q=(0.01, -100)):
    """x -> GREATER(x, 0.25) -> CAST(bool -> float32) -> QUANTIZE(int8 `out_q`)."""
    tensors = [
        T(S, scale=[0.05], zero_point=3),
        T([], scale=[0.05], zero_point=3, data=np.array(8, np.int8)),
        T(S, dtype="bool"),
        T(S, dtype="float32"),
        T(S, scale=[out_q[0]], zero_point=out_q[1]),
    ]
    ops = [
        ("GREATER", [0, 1], [2], None),
        ("CAST", [2], [3], options("CastOptions", inDataType=6, outDataType=0)),
        ("QUANTIZE", [3], [4], None),
    ]
    path = tmp_path / "cast_int8.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return path


def _float_model(tmp_path, src="bool"):
    """x -> GREATER(x, 0.25) -> CAST(bool -> float32) -> MUL(0.5); `src` "int8": a CAST of an
    int8 input instead."""
    tensors = [
        T(S, dtype="float32"),
        T([], dtype="float32", data=np.float32(0.25)),
        T(S, dtype="bool"),
        T(S, dtype="float32"),
        T([], dtype="float32", data=np.float32(0.5)),
        T(S, dtype="float32"),
    ]
    ops = [
        ("GREATER", [0, 1], [2], None),
        ("CAST", [2], [3], None),
        ("MUL", [3, 4], [5], options("MulOptions")),
    ]
    if src == "int8":
        tensors[2] = T(S, scale=[0.05], zero_point=0)
        ops[0] = ("QUANTIZE", [0], [2], None)
    path = tmp_path / f"cast_{src}_float32.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    return path


def _x(g, n=8, seed=0):
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-1, 1, (n, *t.shape)).astype(np.float32)}
    return {g.inputs[0]: rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)}


@pytest.mark.parametrize("out_q", [(0.01, -100), (1 / 255, -128), (0.003, 120)], ids=str)
def test_int8_cast_quantize_is_one_select(out_q, tmp_path):
    path = _int8_model(tmp_path, out_q)
    g = read(path).main
    assert [op.type for op in g.ops] == ["GREATER", "SELECT_V2"]
    assert g.ops[1].shown_type == "CAST"
    xs = _x(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    assert len(np.unique(ref)) == 2  # both values reached
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


def test_float_cast_runs_and_lowers(tmp_path):
    path = _float_model(tmp_path)
    g = read(path).main
    xs = _x(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "float")[g.outputs[0]], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    cast = next(la for la in model.layers if la.op_type == "CAST")
    assert cast.kernel == "mlitool_select8"


def test_other_casts_run_on_cast32(tmp_path):
    """Casts other than bool to float32 / int8 are the `integer` family's (tests/ops/integer)."""
    g = read(_float_model(tmp_path, "int8")).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    assert "mlitool_cast32" in [la.kernel for la in model.layers]


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _int8_model(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_calibrated_float_cast_c_on_the_real_library(mli_builds, tmp_path):
    path = _float_model(tmp_path)
    cal = tmp_path / "cal.npz"
    rng = np.random.default_rng(3)
    np.savez(cal, t0=rng.uniform(-1, 1, (16, *S)).astype(np.float32))
    results = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)
