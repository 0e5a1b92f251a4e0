"""DYNAMIC_UPDATE_SLICE: tflite and float mode equal LiteRT's kernels (start indices outside the
operand clamped as TFLite clamps them, also at run time); with constant start indices it runs
on the `update_slice` fallback C, equal to tflite mode in the mli executor, and its emitted C
equals the executor on the real MLI 2.0.2 library in the four builds (sa8, fx16; a constant
update and an update computed at run time); run-time int32 start indices run on
`update_slice_at`, clamped in C, equal to LiteRT in the executor and on the real library."""

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
from tests.support.tflite_build import T, activation, graph_model, int32_const

SHAPE = (1, 6, 5, 3)
Q = (0.05, 3)
# name -> (update shape, start indices): inside, clamped at the far end, clamped below 0
CASES = {
    "inside": ((1, 2, 3, 3), [0, 1, 2, 0]),
    "far_end": ((1, 3, 2, 1), [0, 5, 9, 2]),
    "negative": ((1, 4, 5, 2), [0, -3, -1, 7]),
}
DTYPES = ("int8", "int16", "float32")


def _update_data(shape, dtype, seed=3):
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        return rng.uniform(-2, 2, shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _model(tmp_path, name, dtype="int8", update="constant", between=False):
    """operand [-> TANH] -> DYNAMIC_UPDATE_SLICE; the update a constant or a graph input, the
    start indices a constant or a graph input (`update="start_input"`)."""
    ushape, start = CASES[name]
    q = (1 / 128, 0) if between else Q  # TANH's int8 output parameters
    upd = activation(ushape, dtype, q)
    if update != "input":
        upd = T(list(ushape), dtype, upd.scale, upd.zero_point, data=_update_data(ushape, dtype))
    starts = int32_const(start)
    if update == "start_input":
        starts = T([4], "int32")
    tensors = [activation(SHAPE, dtype, q), upd, starts, activation(SHAPE, dtype, q)]
    ops = [("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3], None)]
    graph_in = [0]
    if between:
        tensors.append(activation(SHAPE, dtype))
        ops.insert(0, ("TANH", [4], [0], None))
        graph_in = [4]
    graph_in += [1] if update == "input" else [2] if update == "start_input" else []
    path = tmp_path / f"dus_{name}_{dtype}_{update}{'_between' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, graph_in, [3]))
    return path


def _inputs(g, n=4, seed=0, starts=None) -> dict:
    rng = np.random.default_rng(seed)
    xs = {}
    for i in g.inputs:
        t = g.tensors[i]
        if t.dtype == "float32":
            xs[i] = rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)
        elif t.dtype == "int32":  # start indices: inside, beyond either end
            xs[i] = np.asarray(starts, np.int32).reshape(n, *t.shape)
        else:
            info = np.iinfo(t.dtype)
            xs[i] = rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)
    return xs


@pytest.mark.parametrize("update", ["constant", "input"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_and_float_mode_equal_litert(name, dtype, update, tmp_path):
    path = _model(tmp_path, name, dtype, update)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    modes = ("tflite", "float") if dtype == "float32" else ("tflite",)
    for mode in modes:
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("dtype", DTYPES)
def test_run_time_start_indices_clamped_as_litert(dtype, tmp_path):
    path = _model(tmp_path, "inside", dtype, "start_input")
    g = read(path).main
    starts = [[0, 1, 2, 0], [0, 9, -4, 1], [-1, -7, 4, 3], [2, 4, 3, -9]]
    xs = _inputs(g, starts=starts)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    if dtype != "int8":  # sa8 / fx16 hold float and int16 values requantized, not raw
        return
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_update_slice_at"]
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_run_time_start_indices_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _model(tmp_path, "far_end", "int8", "start_input", between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("update", ["constant", "input"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_update_slice_equal_to_tflite_mode(name, update, tmp_path):
    g = read(_model(tmp_path, name, "int8", update)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [(la.kind, la.kernel) for la in model.layers] == [("fallback", "mlitool_update_slice")]
    xs = _inputs(g, seed=1)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("update", ["constant", "input"])
@pytest.mark.parametrize("name", ["far_end", "negative"])
def test_c_on_the_real_library(name, update, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, "int8", update, between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def _island_model(tmp_path, q_out):
    """int8 x -> DEQUANTIZE -> DYNAMIC_UPDATE_SLICE (a float constant update) -> QUANTIZE, as
    TF's int8 converter leaves it."""
    ushape, start = CASES["far_end"]
    tensors = [
        T(list(SHAPE), "int8", [Q[0]], Q[1]),
        T(list(SHAPE), "float32"),
        T(list(ushape), "float32", data=_update_data(ushape, "float32")),
        int32_const(start),
        T(list(SHAPE), "float32"),
        T(list(SHAPE), "int8", [q_out[0]], q_out[1]),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("DYNAMIC_UPDATE_SLICE", [1, 2, 3], [4], None),
        ("QUANTIZE", [4], [5], None),
    ]
    path = tmp_path / f"dus_island_{q_out[0]}_{q_out[1]}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    return path


@pytest.mark.parametrize("q_out", [Q, (0.03, -7)])
def test_float_island_fused_equals_litert(q_out, tmp_path):
    """The island becomes one int8 DYNAMIC_UPDATE_SLICE, equal to LiteRT's three ops on every
    int8 input; it converts where QUANTIZE gives the operand's values back (equal parameters)
    and is refused with the reason where it would change them."""
    path = _island_model(tmp_path, q_out)
    g = read(path).main
    assert [op.type for op in g.ops] == ["DYNAMIC_UPDATE_SLICE"]
    x = np.arange(-128, 128, dtype=np.int16).reshape(-1, 1, 1, 1, 1)
    xs = {g.inputs[0]: np.broadcast_to(x, (256, *SHAPE)).astype(np.int8)}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    if q_out == Q:
        model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
        ours, _ = run_mli(g, model, xs, arith_for("vpx"))
        np.testing.assert_array_equal(ours[g.outputs[0]], ref)
    else:
        with pytest.raises(UnsupportedError, match="QUANTIZE changes the operand's values"):
            lower(g, format="sa8", mli_version="2.0", layout="hwc")


def _int32_model(tmp_path, name, update, starts):
    """int32 operand -> DYNAMIC_UPDATE_SLICE; the update a constant or a graph input, the start
    indices a constant or a graph input."""
    ushape, start = CASES[name]
    upd = T(list(ushape), "int32")
    if update == "constant":
        upd = T(list(ushape), "int32", data=_update_data(ushape, "int32"))
    st = T([4], "int32") if starts == "input" else int32_const(start)
    tensors = [T(list(SHAPE), "int32"), upd, st, T(list(SHAPE), "int32")]
    graph_in = [0] + ([1] if update == "input" else []) + ([2] if starts == "input" else [])
    path = tmp_path / f"dus_int32_{name}_{update}_{starts}.tflite"
    ops = [("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3], None)]
    path.write_bytes(graph_model(tensors, ops, graph_in, [3]))
    return path


@pytest.mark.parametrize("starts", ["constant", "input"])
@pytest.mark.parametrize("update", ["constant", "input"])
def test_int32_operand_equals_litert(update, starts, mli_builds, tmp_path):
    """int32 data (TFLite Micro runs DYNAMIC_UPDATE_SLICE on it): its 4-byte SA32 elements
    copied; tflite mode and the executor equal LiteRT, the C equals the executor in the four
    builds."""
    path = _int32_model(tmp_path, "negative", update, starts)
    g = read(path).main
    rng = np.random.default_rng(5)
    xs = {
        i: rng.integers(-(2**31), 2**31, (4, *g.tensors[i].shape), dtype=np.int64) for i in g.inputs
    }
    xs = {i: v.astype(np.int32) for i, v in xs.items()}
    if starts == "input":  # inside, beyond either end
        run_time = [[0, -3, -1, 7], [0, 9, 4, 0], [1, 2, 0, 1], [0, 0, 0, 0]]
        xs[2] = np.asarray(run_time, np.int32)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    kernel = "mlitool_update_slice_at" if starts == "input" else "mlitool_update_slice"
    assert [la.kernel for la in conv.model.layers] == [kernel]
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][3], ref)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )
