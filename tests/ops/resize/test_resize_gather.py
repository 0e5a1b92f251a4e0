"""Data-movement ops MLI lacks (RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, TILE, GATHER,
SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, PACK, UNPACK): tflite mode
equals LiteRT's reference kernels, the lowered layers (fallback C `gather4` / `resize_bilinear`,
or MLI compositions) make the mli executor equal tflite mode, and the emitted C on the real MLI
2.0.2 library equals the executor in the four builds, in sa8 and in fx16 (between a TANH and a
RELU, so the fallback sits between MLI kernels and sees negative values)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
from tests.support.tflite_build import activation, graph_model, int32_const, options

Q_IN = (0.05, 3)


# name -> (op, input shape, constant inputs, output shape(s), options, op code version)
CASES = {
    "bilinear": ("RESIZE_BILINEAR", (1, 5, 7, 3), [[11, 9]], (1, 11, 9, 3), {}, 1),
    "bilinear_2x": ("RESIZE_BILINEAR", (1, 4, 4, 3), [[8, 8]], (1, 8, 8, 3), {}, 1),
    "bilinear_align": (
        "RESIZE_BILINEAR",
        (1, 5, 7, 3),
        [[9, 13]],
        (1, 9, 13, 3),
        {"alignCorners": True},
        1,
    ),
    "bilinear_half": (
        "RESIZE_BILINEAR",
        (1, 6, 4, 2),
        [[13, 5]],
        (1, 13, 5, 2),
        {"halfPixelCenters": True},
        3,
    ),
    "bilinear_down_half": (
        "RESIZE_BILINEAR",
        (1, 9, 10, 2),
        [[4, 3]],
        (1, 4, 3, 2),
        {"halfPixelCenters": True},
        3,
    ),
    "nearest": ("RESIZE_NEAREST_NEIGHBOR", (1, 5, 7, 3), [[11, 9]], (1, 11, 9, 3), {}, 1),
    "nearest_align": (
        "RESIZE_NEAREST_NEIGHBOR",
        (1, 5, 7, 3),
        [[9, 13]],
        (1, 9, 13, 3),
        {"alignCorners": True},
        3,
    ),
    "nearest_half": (
        "RESIZE_NEAREST_NEIGHBOR",
        (1, 6, 4, 2),
        [[13, 5]],
        (1, 13, 5, 2),
        {"halfPixelCenters": True},
        3,
    ),
    "tile": ("TILE", (1, 3, 4, 2), [[1, 2, 3, 2]], (1, 6, 12, 4), None, 1),
    "tile5": ("TILE", (1, 3, 1, 4, 2), [[1, 1, 2, 1, 2]], (1, 3, 2, 4, 4), None, 1),
    "gather_c": ("GATHER", (1, 4, 5, 6), [[5, 0, 0, 2]], (1, 4, 5, 4), {"axis": 3}, 1),
    "gather_w2d": ("GATHER", (1, 4, 5, 6), [[[4, 1], [0, 3]]], (1, 4, 2, 2, 6), {"axis": 2}, 1),
    "gather_scalar": ("GATHER", (1, 7, 6), [np.int32(3)], (1, 6), {"axis": 1}, 1),
    "s2d": ("SPACE_TO_DEPTH", (1, 6, 4, 3), [], (1, 3, 2, 12), {"blockSize": 2}, 2),
    "d2s": ("DEPTH_TO_SPACE", (1, 3, 2, 12), [], (1, 6, 4, 3), {"blockSize": 2}, 2),
    "s2b_pad": (
        "SPACE_TO_BATCH_ND",
        (1, 4, 5, 2),
        [[1, 1], [[1, 2], [0, 3]]],
        (1, 7, 8, 2),
        None,
        2,
    ),
    "b2s_crop": (
        "BATCH_TO_SPACE_ND",
        (1, 6, 5, 2),
        [[1, 1], [[1, 2], [0, 3]]],
        (1, 3, 2, 2),
        None,
        2,
    ),
    # block other than 1 (space_batch fallback C): the block offsets are rows of one sample
    "s2b_block2": (
        "SPACE_TO_BATCH_ND",
        (1, 8, 8, 4),
        [[2, 2], [[1, 1], [0, 2]]],
        (4, 5, 5, 4),
        None,
        2,
    ),
    "s2b_block23": (
        "SPACE_TO_BATCH_ND",
        (1, 4, 5, 2),
        [[2, 3], [[0, 2], [1, 0]]],
        (6, 3, 2, 2),
        None,
        2,
    ),
    "s2b_block_1d": ("SPACE_TO_BATCH_ND", (1, 7, 3), [[2], [[1, 0]]], (2, 4, 3), None, 2),
    "b2s_block2": (
        "BATCH_TO_SPACE_ND",
        (4, 4, 4, 2),
        [[2, 2], [[1, 0], [0, 1]]],
        (1, 7, 7, 2),
        None,
        2,
    ),
    "b2s_block23": (
        "BATCH_TO_SPACE_ND",
        (6, 3, 2, 2),
        [[2, 3], [[1, 0], [0, 2]]],
        (1, 5, 4, 2),
        None,
        2,
    ),
    "b2s_block_1d": ("BATCH_TO_SPACE_ND", (2, 4, 3), [[2], [[0, 1]]], (1, 7, 3), None, 2),
}
LITERT_NO_INT16 = {"s2d", "d2s"}  # LiteRT refuses int16 SPACE_TO_DEPTH / DEPTH_TO_SPACE
_OPTS = {
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "TILE": None,
    "GATHER": "GatherOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_BATCH_ND": None,
    "BATCH_TO_SPACE_ND": None,
}


def _case_model(tmp_path, name, dtype="int8", between=False, case=None) -> str:
    """The op of CASES[name] (or `case`), alone (int8, int16 or float32), or `between` a TANH
    and a RELU (int8): MLI kernels on both sides, negative values into the op."""
    op, shape, consts, out_shape, opts, version = case or CASES[name]
    q = (1 / 128, 0) if between else Q_IN  # TANH's int8 output parameters
    tensors = [activation(shape, dtype, q)] + [int32_const(c) for c in consts]
    tensors.append(activation(out_shape, dtype, q))
    ins = list(range(len(tensors) - 1))
    out = len(tensors) - 1
    o = options(_OPTS[op], **opts) if _OPTS[op] else None
    ops = [(op, ins, [out], o)]
    graph_in, graph_out = 0, out
    if between:
        tensors += [activation(shape, dtype), activation(out_shape, dtype, q)]
        ops = [("TANH", [len(tensors) - 2], [0], None)] + ops
        ops.append(("RELU", [out], [len(tensors) - 1], None))
        graph_in, graph_out = len(tensors) - 2, len(tensors) - 1
    path = tmp_path / f"{name}_{dtype}{'_between' if between else ''}.tflite"
    vers = {op: version, "TANH": 1, "RELU": 1}
    path.write_bytes(graph_model(tensors, ops, [graph_in], [graph_out], vers))
    return path


def _inputs(g, n=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        x = rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)
    else:
        info = np.iinfo(t.dtype)
        x = rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)
    return {g.inputs[0]: x}


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        (n, d)
        for n in sorted(CASES)
        for d in ("int8", "int16", "float32")
        if not (d == "int16" and n in LITERT_NO_INT16)
    ],
)
def test_tflite_mode_equals_litert(name, dtype, tmp_path):
    path = _case_model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite" if dtype != "float32" else "float")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mli_mode_equals_tflite_mode(name, tmp_path):
    g = read(_case_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    xs = _inputs(g, seed=1)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _case_model(tmp_path, name, between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def _pack_unpack_model(tmp_path, kind: str) -> str:
    """PACK of two [1, 4, 3] inputs along axis 2, or UNPACK of [1, 3, 4, 2] along axis `kind`."""
    if kind == "pack":
        tensors = [activation((1, 4, 3)), activation((1, 4, 3)), activation((1, 4, 2, 3))]
        opts = options("PackOptions", valuesCount=2, axis=2)
        ops, ins, outs = [("PACK", [0, 1], [2], opts)], [0, 1], [2]
    else:
        axis = int(kind[-1])
        shape = (1, 3, 4, 2)
        piece = tuple(d for k, d in enumerate(shape) if k != axis)
        n = shape[axis]
        tensors = [activation(shape)] + [activation(piece) for _ in range(n)]
        opts = options("UnpackOptions", num=n, axis=axis)
        outs = list(range(1, n + 1))
        ops, ins = [("UNPACK", [0], outs, opts)], [0]
    path = tmp_path / f"{kind}.tflite"
    path.write_bytes(graph_model(tensors, ops, ins, outs))
    return path


@pytest.mark.parametrize("kind", ["pack", "unpack1", "unpack3"])
def test_pack_unpack_lower_onto_mli_and_equal_tflite_mode(kind, tmp_path, mli_builds):
    path = _pack_unpack_model(tmp_path, kind)
    g = read(path).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert {la.kind for la in model.layers} <= {"view", "copy"}  # MLI's own moves, no C
    rng = np.random.default_rng(2)
    xs = {i: rng.integers(-128, 128, (3, *g.tensors[i].shape)).astype(np.int8) for i in g.inputs}
    ref = reference_outputs(path, g, xs)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
    for fmt in ("sa8", "fx16"):
        out = tmp_path / fmt
        H.assert_bit_exact(H.run_case(path, fmt, out, mli_builds, mli_cflags("2.0")))


def _refusal(tmp_path, case, fmt="sa8", version="2.0") -> str:
    g = read(_case_model(tmp_path, "refused", case=case)).main
    with pytest.raises(UnsupportedError) as e:
        lower(g, format=fmt, mli_version=version, layout="hwc")
    return e.value.message


def test_refusals_say_why(tmp_path):
    s2b = ("SPACE_TO_BATCH_ND", (2, 4, 5, 2), [[2, 2], [[0, 0], [1, 0]]], (8, 2, 3, 2), None, 2)
    assert "tensor 't0' has batch 2 (MLI runs batch 1)" in _refusal(tmp_path, s2b)
    # GATHER with batch_dims converts now (tests/ops/gather/test_gather_batch_dims.py)
    tile = CASES["tile"]
    assert "fallback C for it needs MLI 2.x" in _refusal(tmp_path, tile, "fx16", "1.1")


def test_keras_upsampling2d_converts_and_runs_bit_exact(tmp_path, mli_builds):
    """Keras 3's nearest UpSampling2D as the real converter writes it (EXPAND_DIMS -> TILE ->
    RESHAPE, twice, between two CONV_2D; tflite mode vs LiteRT: tests/reader/test_upsampling):
    rewritten at import into one RESIZE_NEAREST_NEIGHBOR, one gather4 layer, whose C equals the
    executor in sa8 and fx16."""
    path = Path(__file__).parents[2] / "fixtures" / "keras" / "upsample_int8.tflite"
    g = read(path).main
    for fmt in ("sa8", "fx16"):
        model = lower(g, format=fmt, mli_version="2.0", layout="hwc")
        kinds = [(la.op_type, la.kind) for la in model.layers if la.op_type != "CONV_2D"]
        assert kinds == [("RESIZE_NEAREST_NEIGHBOR", "fallback")]
        H.assert_bit_exact(H.run_case(path, fmt, tmp_path / fmt, mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("name", ["s2b_block23", "b2s_block23"])
def test_space_batch_c_compiles_as_cxx(name, tmp_path):
    """The space_batch fallback C is also valid C++20 (-Wall -Wextra -Werror -pedantic)."""
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(_case_model(tmp_path, name, between=True), "sa8", tmp_path / "out")
    assert "net_space_batch(" in (conv.out / "net.c").read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    src, obj = conv.out / "net.c", conv.out / "net_cxx.o"
    r = subprocess.run(
        [*cxx, *mli_cflags("2.0"), "-I", str(conv.out), "-c", str(src), "-o", str(obj)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
