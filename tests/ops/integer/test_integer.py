"""int32 activations as fallback C (`mlitool/ops/integer`): arithmetic, comparisons, SELECT_V2,
CAST and GATHER by run-time indices on int32 tensors. tflite mode against LiteRT (int32 edge
values: wrapping sums and products, floor division of every sign), TFLite's error on a zero
divisor, the `mli` executor against tflite mode, the emitted C against the executor on the real
MLI 2.0.2 library in the four builds (and in fast memory), compiled as C++ too; the arena's
bytes of int32 tensors; int64 tensors other than ARG_MIN / ARG_MAX indices refused."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mlitool.errors import InputDataError, UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.mli.memory.arena import model_arena
from mlitool.mli.types import ElType
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.fast_memory import least_budget
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

I32 = np.iinfo(np.int32)
EDGES = np.array([I32.min, I32.min + 1, -7, -2, -1, 0, 1, 2, 7, I32.max - 1, I32.max], np.int64)
BINARY = {
    "ADD": ("AddOptions", {"fusedActivationFunction": 0}),
    "SUB": ("SubOptions", {"fusedActivationFunction": 0}),
    "MUL": ("MulOptions", {"fusedActivationFunction": 0}),
    "DIV": ("DivOptions", {"fusedActivationFunction": 0}),
    "SQUARED_DIFFERENCE": (None, None),
    "FLOOR_DIV": (None, None),
    "FLOOR_MOD": (None, None),
    "MAXIMUM": (None, None),
    "MINIMUM": (None, None),
    "LESS": (None, None),
    "GREATER_EQUAL": (None, None),
    "EQUAL": (None, None),
}
COMPARE = {"LESS", "GREATER_EQUAL", "EQUAL"}
A_SHAPE, B_SHAPE = [1, 11, 11], [1, 1, 11]  # b broadcast along the rows


def _binary_model(tmp_path, name: str, relu: bool = False):
    table, fields = BINARY[name]
    if relu:
        fields = {"fusedActivationFunction": 1}  # RELU: int32 clamp at 0
    out = T(A_SHAPE, "bool" if name in COMPARE else "int32")
    tensors = [T(A_SHAPE, "int32"), T(B_SHAPE, "int32"), out]
    opts = options(table, **fields) if table else None
    path = tmp_path / f"{name.lower()}.tflite"
    path.write_bytes(graph_model(tensors, [(name, [0, 1], [2], opts)], [0, 1], [2]))
    return path


def _edge_inputs(name: str, n: int = 3, seed: int = 0) -> dict[int, np.ndarray]:
    """Every pair of edge values (a along the rows, b along the columns), then random ones;
    divisors without 0 (TFLite fails on it) and no INT32_MIN / -1."""
    rng = np.random.default_rng(seed)
    a = np.broadcast_to(EDGES[:, None], (11, 11))
    b = EDGES[None, :]
    if name in ("DIV", "FLOOR_DIV", "FLOOR_MOD"):  # x86 division traps on INT32_MIN / -1
        a, b = np.where(a == I32.min, -8, a), np.where(b == 0, 3, b)
    xs_a = [a] + [rng.integers(I32.min, I32.max, (11, 11), endpoint=True) for _ in range(n - 1)]
    xs_b = [b] + [rng.integers(-50, 50, (1, 11)) | 1 for _ in range(n - 1)]
    return {
        0: np.stack(xs_a).reshape(n, *A_SHAPE).astype(np.int32),
        1: np.stack(xs_b).reshape(n, *B_SHAPE).astype(np.int32),
    }


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_equals_litert_and_the_executor_equals_tflite_mode(name, tmp_path):
    path = _binary_model(tmp_path, name)
    g = read(path).main
    xs = _edge_inputs(name)
    ref = reference_outputs(path, g, xs)[2]
    ours = run_graph(g, xs, "tflite")[2]
    np.testing.assert_array_equal(ours, ref)
    assert ours.dtype == ref.dtype
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_binary32"]
    mli, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(mli[2], ref)


def test_wrapping_and_the_fused_relu_are_tflites(tmp_path):
    """INT32_MAX + 1 wraps to INT32_MIN (TFLite's int32 ADD), then RELU clamps it to 0."""
    path = _binary_model(tmp_path, "ADD", relu=True)
    g = read(path).main
    xs = _edge_inputs("ADD")
    ref = reference_outputs(path, g, xs)[2]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[2], ref)
    assert ref.min() == 0
    plain = run_graph(read(_binary_model(tmp_path, "ADD")).main, xs, "tflite")[2]
    assert plain[0, 0, -1, 6] == I32.min  # INT32_MAX + 1
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    np.testing.assert_array_equal(run_mli(g, model, xs, arith_for("vpx"))[0][2], ref)


@pytest.mark.parametrize("name", ["DIV", "FLOOR_DIV", "FLOOR_MOD"])
def test_a_zero_divisor_fails_as_in_tflite_and_gives_0_in_c(name, tmp_path):
    path = _binary_model(tmp_path, name)
    g = read(path).main
    xs = {0: np.full((1, *A_SHAPE), 5, np.int32), 1: np.zeros((1, *B_SHAPE), np.int32)}
    with pytest.raises(RuntimeError):  # LiteRT: "Division by 0"
        reference_outputs(path, g, xs)
    with pytest.raises(InputDataError, match="Division by 0"):
        run_graph(g, xs, "tflite")
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert not run_mli(g, model, xs, arith_for("vpx"))[0][2].any()


@pytest.mark.parametrize(
    "name", ["ADD", "MUL", "DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE", "LESS"]
)
def test_binary_c_on_the_real_library(name, mli_builds, tmp_path):
    path = _binary_model(tmp_path, name)
    g = read(path).main
    xs = _edge_inputs(name, 2)
    xs[1][0, 0, 0, 5] = 0  # the C's zero divisor
    conv = H.convert(path, "sa8", tmp_path / "out")
    real = H.model_inputs(g, conv.model, xs)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), real)
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


# --- SELECT_V2 and a chain (Keras Embedding's index arithmetic) ------------------------------


def _chain_model(tmp_path):
    """idx < 0 ? idx + 16 : idx, then GATHER of an int8 table's rows (axis 0) by it, and the
    int32 SELECT_V2 itself as a second output."""
    table = np.arange(16 * 4, dtype=np.int8).reshape(16, 4) - 32
    tensors = [
        T([1, 6], "int32"),  # 0 idx
        T([1], "int32", data=np.array([0], np.int32)),  # 1
        T([1], "int32", data=np.array([16], np.int32)),  # 2
        T([1, 6], "bool"),  # 3 idx < 0
        T([1, 6], "int32"),  # 4 idx + 16
        T([1, 6], "int32"),  # 5 select
        T([16, 4], "int8", scale=[0.1], zero_point=[-2], data=table),  # 6
        T([1, 6, 4], "int8", scale=[0.1], zero_point=[-2]),  # 7
    ]
    ops = [
        ("LESS", [0, 1], [3], None),
        ("ADD", [0, 2], [4], options("AddOptions", fusedActivationFunction=0)),
        ("SELECT_V2", [3, 4, 0], [5], None),
        ("GATHER", [6, 5], [7], options("GatherOptions", axis=0)),
    ]
    path = tmp_path / "chain.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [7, 5]))
    return path


def test_chain_equals_litert_and_its_c_the_executor(mli_builds, tmp_path):
    path = _chain_model(tmp_path)
    g = read(path).main
    ids = np.array([[[-16, -1, 0, 5, 15, -3]], [[3, -7, 9, 0, -16, 14]]], np.int32)
    xs = {0: ids}
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite")
    for o in (5, 7):
        np.testing.assert_array_equal(ours[o], ref[o])
    conv = H.convert(path, "sa8", tmp_path / "out")
    kernels = [la.kernel for la in conv.model.layers]
    assert kernels == [
        "mlitool_binary32",
        "mlitool_binary32",
        "mlitool_select32",
        "mlitool_gather_rows",
    ]
    mli, _ = run_mli(g, conv.model, xs, arith_for("vpx"))
    for o in (5, 7):
        np.testing.assert_array_equal(mli[o], ref[o])
    # random int32 ids: mostly out of range, rows of raw 0 in C and in the executor
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


def test_an_index_out_of_range_fails_in_tflite_mode_and_gives_a_row_of_raw_0(tmp_path):
    path = _chain_model(tmp_path)
    g = read(path).main
    xs = {0: np.array([[[20, 1, 2, 3, 4, 5]]], np.int32)}
    with pytest.raises(RuntimeError):  # LiteRT: gather index out of bounds
        reference_outputs(path, g, xs)
    with pytest.raises(UnsupportedError):
        run_graph(g, xs, "tflite")
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    rows = run_mli(g, model, xs, arith_for("vpx"))[0][7]
    assert not rows[0, 0, 0].any()  # raw 0 (not the zero point): the C's documented choice
    assert rows[0, 0, 1].tolist() == [-28, -27, -26, -25]


def test_int32_tensors_take_four_bytes_in_the_arena_and_fit_fast_memory(mli_builds, tmp_path):
    path = _chain_model(tmp_path)
    model = H.convert(path, "sa8", tmp_path / "plain").model
    sizes = {p.buffer.name: p.buffer.size for p in model_arena(model).placements}
    ints = [n for n, t in model.tensors.items() if t.el_type == ElType.SA32 and n in sizes]
    assert ints and all(sizes[n] == 4 * model.tensors[n].size for n in ints)
    assert model_arena(model).align == 4
    budget = least_budget(model)
    conv = H.convert(path, "sa8", tmp_path / "out", fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    assert fm["fast_bytes"] <= budget
    objs = H.compile_objects(conv, [*mli_cflags("2.0"), f"-D{fm['macros']['check_operands']}"])
    H.assert_bit_exact(H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 4, 0)))


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_the_int32_kernels_compile_as_cxx20(tmp_path):
    conv = H.convert(_chain_model(tmp_path), "sa8", tmp_path / "out")
    div = H.convert(_binary_model(tmp_path, "FLOOR_DIV"), "sa8", tmp_path / "div", name="div")
    cast = H.convert(_cast_model(tmp_path, "bool", "int32"), "sa8", tmp_path / "cast", name="c")
    for c in (conv, div, cast):
        cmd = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
        cmd += [*mli_cflags("2.0"), "-I", str(c.out), "-c", f"{c.name}.c", "-o", "x.o"]
        res = subprocess.run(cmd, cwd=c.out, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[:4000]


# --- CAST --------------------------------------------------------------------------------------

CASTS = [
    ("int32", "int8"),
    ("int32", "bool"),
    ("bool", "int32"),
    ("int8", "int32"),
    ("float32", "int32"),
    ("int32", "float32"),
    ("int32", "int16"),
    ("int16", "int32"),
    ("float32", "int8"),
    ("int8", "float32"),
    ("int8", "bool"),
]


def _cast_model(tmp_path, src: str, dst: str):
    shape = [1, 4, 8]
    q = {"scale": [0.5], "zero_point": [-3]}
    tensors = [T(shape, src, **(q if src == "int8" else {})), T(shape, dst)]
    path = tmp_path / f"cast_{src}_{dst}.tflite"
    path.write_bytes(graph_model(tensors, [("CAST", [0], [1], None)], [0], [1]))
    return path


def _cast_inputs(src: str, n: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (n, 1, 4, 8)
    if src == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if src == "int8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    if src == "int16":
        return rng.integers(-32768, 32768, shape).astype(np.int16)
    if src == "float32":
        return rng.uniform(-300, 300, shape).astype(np.float32)
    x = rng.integers(-100000, 100000, shape)
    x.reshape(-1)[:11] = EDGES
    return x.astype(np.int32)


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast_equals_litert(src, dst, tmp_path):
    path = _cast_model(tmp_path, src, dst)
    g = read(path).main
    xs = {0: _cast_inputs(src)}
    ref = reference_outputs(path, g, xs)[1]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[1], ref)
    model = lower(
        g, format="sa8", mli_version="2.0", layout="hwc", weights_only="float32" in (src, dst)
    )
    assert [la.kernel for la in model.layers] == ["mlitool_cast32"]
    if "float32" not in (src, dst):  # integers on both sides: the same values
        np.testing.assert_array_equal(run_mli(g, model, xs, arith_for("vpx"))[0][1], ref)


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast_c_on_the_real_library(src, dst, mli_builds, tmp_path):
    path = _cast_model(tmp_path, src, dst)
    cal = None
    if "float32" in (src, dst):
        cal = tmp_path / "cal.npy"
        np.save(cal, _cast_inputs(src, 8, seed=1))
    results = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=8
    )
    H.assert_bit_exact(results)


def test_int32_to_float_levels_are_the_nearest(tmp_path):
    """CAST int32 -> float32 held as SA8: each integer lands on the level nearest its value
    (the thresholds' binary search), saturating outside the range."""
    path = _cast_model(tmp_path, "int32", "float32")
    g = read(path).main
    cal = {0: (-40.0, 40.0), 1: (-40.0, 40.0)}
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", ranges=cal)
    v = np.arange(-64, 64, dtype=np.int32).reshape(4, 1, 4, 8)
    out = run_mli(g, model, {0: v}, arith_for("vpx"))[0][1]
    m = model.tensor(model.outputs[0])
    s, zp = float(m.real_scale()[0]), int(m.zero_point[0])
    lo, hi = (-128 - zp) * s, (127 - zp) * s
    inside = (v >= lo) & (v <= hi)
    assert inside.any() and not inside.all()
    assert np.abs(v - out)[inside].max() <= s / 2 + 1e-6
    np.testing.assert_allclose(out[~inside], np.where(v[~inside] < lo, lo, hi), rtol=1e-6)


def test_int64_tensors_other_than_indices_are_refused(tmp_path):
    tensors = [T([1, 8], "int64"), T([1, 8], "int32")]
    path = tmp_path / "cast64.tflite"
    path.write_bytes(graph_model(tensors, [("CAST", [0], [1], None)], [0], [1]))
    with pytest.raises(UnsupportedError, match="has type int64"):
        lower(read(path).main, format="sa8", mli_version="2.0", layout="hwc")


def _cast_quantize_model(tmp_path, scale: float, zp: int):
    shape = [1, 4, 8]
    tensors = [T(shape, "int32"), T(shape, "float32"), T(shape, scale=[scale], zero_point=[zp])]
    ops = [("CAST", [0], [1], None), ("QUANTIZE", [1], [2], None)]
    path = tmp_path / "cast_quantize.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [2]))
    return path


@pytest.mark.parametrize("scale,zp", [(0.37, 5), (1e6, -128), (3e-5, 0)])
def test_cast_then_quantize_is_tflites_quantize_on_every_int32(scale, zp, mli_builds, tmp_path):
    """int32 -> CAST float32 -> QUANTIZE int8: one CAST whose thresholds are TFLite's levels,
    equal to LiteRT on edge values, levels' boundaries and random integers, in the executor
    and in C."""
    path = _cast_quantize_model(tmp_path, scale, zp)
    g = read(path).main
    assert [op.type for op in g.ops] == ["CAST"]
    rng = np.random.default_rng(0)
    around = np.round((np.arange(-130, 130) - zp) * scale).astype(np.int64)  # boundaries
    v = np.concatenate([EDGES, around - 1, around, around + 1, rng.integers(-2000, 2000, 3000)])
    v = np.clip(v, I32.min, I32.max)
    # TFLite's int32 conversion of a quotient past 2**31 is undefined (x86: INT32_MIN, so -128);
    # mlitool saturates (127): those are left out
    v = v[np.abs(v.astype(np.float32) / np.float32(scale)) < 2.0**31]
    v = np.resize(v, (len(v) // 32 + 1) * 32).reshape(-1, 1, 4, 8).astype(np.int32)
    xs = {0: v}
    ref = reference_outputs(path, g, xs)[2]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[2], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    np.testing.assert_array_equal(run_mli(g, model, xs, arith_for("vpx"))[0][2], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


def _view_model(tmp_path):
    """int32 [1, 2, 3] -> RESHAPE [1, 6] -> MUL by a constant -> RESHAPE [1, 3, 2]."""
    tensors = [
        T([1, 2, 3], "int32"),
        T([2], "int32", data=np.array([1, 6], np.int32)),
        T([1, 6], "int32"),
        T([6], "int32", data=np.array([3, -1, 0, 7, -100000, 2], np.int32)),
        T([1, 6], "int32"),
        T([3], "int32", data=np.array([1, 3, 2], np.int32)),
        T([1, 3, 2], "int32"),
    ]
    mul = options("MulOptions", fusedActivationFunction=0)
    ops = [
        ("RESHAPE", [0, 1], [2], None),
        ("MUL", [2, 3], [4], mul),
        ("RESHAPE", [4, 5], [6], None),
    ]
    path = tmp_path / "views.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [6]))
    return path


def test_views_of_int32_tensors(mli_builds, tmp_path):
    """RESHAPE of int32 activations (a graph input, an op's output): SA32 views, no convert."""
    path = _view_model(tmp_path)
    g = read(path).main
    xs = {0: _cast_inputs("int32", 4)[:, :, :2, :3].reshape(4, 1, 2, 3)}
    ref = reference_outputs(path, g, xs)[6]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[6], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    assert [la.kind for la in conv.model.layers] == ["view", "fallback", "view"]
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][6], ref)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


def _movement_model(tmp_path):
    """int32 [1, 4, 6]: a SLICE (a view), a STRIDED_SLICE of every other row (an mli_mov
    copy), their CONCATENATION, a STRIDED_SLICE reversing the last axis (gather4), the ADD of
    the two, SPLIT in halves and CONCATENATION of the halves swapped."""

    def c(v):
        return T([len(v)], "int32", data=np.array(v, np.int32))

    tensors = [
        T([1, 4, 6], "int32"),  # 0
        c([0, 0, 0]),  # 1
        c([1, 2, 6]),  # 2
        T([1, 2, 6], "int32"),  # 3 slice
        c([0, 0, 0]),  # 4
        c([1, 4, 6]),  # 5
        c([1, 2, 1]),  # 6
        T([1, 2, 6], "int32"),  # 7 every other row
        T([1, 4, 6], "int32"),  # 8 concat
        c([0, 0, -1]),  # 9
        c([1, 4, 0]),  # 10
        c([1, 1, -1]),  # 11
        T([1, 4, 6], "int32"),  # 12 reversed
        T([1, 4, 6], "int32"),  # 13 sum
        T([], "int32", data=np.array(2, np.int32)),  # 14 split axis
        T([1, 4, 3], "int32"),  # 15
        T([1, 4, 3], "int32"),  # 16
        T([1, 4, 6], "int32"),  # 17 out
    ]
    ss = options("StridedSliceOptions", endMask=4)
    ops = [
        ("SLICE", [0, 1, 2], [3], options("SliceOptions")),
        ("STRIDED_SLICE", [0, 4, 5, 6], [7], options("StridedSliceOptions")),
        ("CONCATENATION", [3, 7], [8], options("ConcatenationOptions", axis=1)),
        ("STRIDED_SLICE", [0, 9, 10, 11], [12], ss),
        ("ADD", [8, 12], [13], options("AddOptions", fusedActivationFunction=0)),
        ("SPLIT", [14, 13], [15, 16], options("SplitOptions", numSplits=2)),
        ("CONCATENATION", [16, 15], [17], options("ConcatenationOptions", axis=2)),
    ]
    path = tmp_path / "movement.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [17]))
    return path


def test_int32_data_movement(mli_builds, tmp_path):
    """Slices, CONCATENATION, SPLIT of int32 tensors move SA32 elements: no convert, equal to
    LiteRT, the C to the executor in the four builds."""
    path = _movement_model(tmp_path)
    g = read(path).main
    xs = {0: _cast_inputs("int32", 4)[:, :, :4, :6].reshape(4, 1, 4, 6)}
    ref = reference_outputs(path, g, xs)[17]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[17], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    assert "convert" not in {la.kind for la in conv.model.layers}
    assert {t.el_type for t in conv.model.tensors.values() if not t.role.is_constant} == {
        ElType.SA32
    }
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][17], ref)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


def test_int32_index_gathers(mli_builds, tmp_path):
    """REVERSE_V2 and TILE of an int32 activation: gather4 moving 4-byte elements."""
    tensors = [
        T([1, 3, 4], "int32"),
        T([1], "int32", data=np.array([2], np.int32)),
        T([1, 3, 4], "int32"),
        T([3], "int32", data=np.array([1, 2, 1], np.int32)),
        T([1, 6, 4], "int32"),
    ]
    ops = [
        ("REVERSE_V2", [0, 1], [2], options("ReverseV2Options")),
        ("TILE", [2, 3], [4], options("TileOptions")),
    ]
    path = tmp_path / "gathers.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    g = read(path).main
    xs = {0: _cast_inputs("int32", 4)[:, :, :3, :4].reshape(4, 1, 3, 4)}
    ref = reference_outputs(path, g, xs)[4]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[4], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    assert [la.kernel for la in conv.model.layers] == ["mlitool_gather4"] * 2
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][4], ref)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )


@pytest.mark.parametrize("rank", [3, 4])
def test_int32_pad(rank, mli_builds, tmp_path):
    """PAD of an int32 activation: mli_mov's padding of SA32 elements with 0."""
    shape = [1, 3, 4] if rank == 3 else [1, 3, 4, 2]
    pads = [[0, 0], [1, 2], [0, 1]] + ([[0, 0]] if rank == 4 else [])
    out = [1, 6, 5] + ([2] if rank == 4 else [])
    tensors = [
        T(shape, "int32"),
        T([rank, 2], "int32", data=np.array(pads, np.int32)),
        T(out, "int32"),
    ]
    path = tmp_path / "pad.tflite"
    path.write_bytes(graph_model(tensors, [("PAD", [0, 1], [2], options("PadOptions"))], [0], [2]))
    g = read(path).main
    xs = {0: np.random.default_rng(0).integers(I32.min, I32.max, (4, *shape)).astype(np.int32)}
    ref = reference_outputs(path, g, xs)[2]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[2], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][2], ref)
    H.assert_bit_exact(
        H.check(
            conv,
            H.compile_objects(conv, mli_cflags("2.0")),
            mli_builds,
            H.model_inputs(g, conv.model, xs),
        )
    )


@pytest.mark.parametrize("dst", ["int32", "int16", "int8", "bool"])
def test_cast_of_float_saturates_as_litert(dst, tmp_path):
    """LiteRT truncates a float toward 0 and saturates to the integer type, NaN to its largest
    value; tflite and float mode do the same."""
    x = [3e9, -3e9, np.nan, np.inf, -np.inf, 300.7, -200.2, 40000.5, -1.9, 1.9, 127.9, -0.0]
    x = np.array(x * 2, np.float32).reshape(1, 24)
    tensors = [T([24], "float32"), T([24], dst)]
    path = tmp_path / "cast.tflite"
    path.write_bytes(graph_model(tensors, [("CAST", [0], [1], None)], [0], [1]))
    g = read(path).main
    ref = reference_outputs(path, g, {0: x})[1]
    for mode in ("tflite", "float"):
        np.testing.assert_array_equal(run_graph(g, {0: x}, mode)[1], ref, err_msg=mode)
