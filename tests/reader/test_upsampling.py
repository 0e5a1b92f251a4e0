"""Nearest upsampling built of EXPAND_DIMS / RESHAPE / TILE becomes one RESIZE_NEAREST_NEIGHBOR at
import (mlitool/passes/upsampling.py): the rewritten graph in tflite mode equals LiteRT running
the original file (its builtin kernels: the reference resolver lacks int8 TILE), and `inspect`
shows the rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.pipeline import read
from tests.cli.test_bad_input import run_main
from tests.support.tflite_build import T, graph_model, options

KERAS = Path(__file__).parents[1] / "fixtures" / "keras"
Q = dict(scale=0.05, zero_point=-3)


def _same_as_litert(path: Path, tensors: list[int], samples: int = 4) -> dict[int, np.ndarray]:
    """tflite mode on the graph as imported equals LiteRT on the file at `tensors`."""
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    g = read(path).main
    inputs = random_inputs(g, samples, seed=3)
    ref = oracle.run_litert(path, g, inputs, tensors)
    ours = run_graph(g, inputs, "tflite", keep=True)
    for t in tensors:
        np.testing.assert_array_equal(ours[t], ref[t], err_msg=g.tensors[t].name)
    return ours


def test_keras_upsampling_is_one_resize():
    path = KERAS / "upsample_int8.tflite"
    model = read(path)
    g = model.main
    assert [op.label for op in g.ops] == [
        "op 0 (CONV_2D)",
        "op 1 (RESIZE_NEAREST_NEIGHBOR)",
        "op 13 (CONV_2D)",
    ]
    resize = g.ops[1]
    chain = [
        "op 1 (EXPAND_DIMS)",
        "op 2 (TILE)",
        "op 6 (RESHAPE)",
        "op 7 (EXPAND_DIMS)",
        "op 8 (TILE)",
        "op 12 (RESHAPE)",
    ]
    assert model.rewritten_ops == {"op 1 (RESIZE_NEAREST_NEIGHBOR)": chain}
    assert resize.options["align_corners"] is False and not resize.options["half_pixel_centers"]
    assert g.slot(resize, "size").data.tolist() == [16, 16]
    assert (resize.inputs[0], resize.outputs[0]) == (15, 27)  # conv output -> last RESHAPE's
    # up to the last convolution (LiteRT's optimised 1x1 kernel rounds 4 of 512 values 1 LSB
    # off its reference one)
    _same_as_litert(path, [15, 27])


def _chain_model(path: Path, dtype: str = "int8", also_read: bool = False) -> Path:
    """x [1, 4, 5, 3] -RESHAPE-> [1, 4, 1, 5, 3] -TILE(1,1,2,1,1)-> [1, 4, 2, 5, 3]
    -RESHAPE-> [1, 8, 5, 1, 3] -TILE(1,1,1,3,1)-> [1, 8, 5, 3, 3] -RESHAPE-> y [1, 8, 15, 3]:
    older exports' form, H x2 and W x3 (a factor whose float32 scale is inexact). `also_read`:
    the H chain's result [1, 8, 5, 3] (the middle RESHAPE viewed) is also a graph output."""
    q = Q if dtype == "int8" else dict(scale=None)
    shapes = [[1, 4, 5, 3], [1, 4, 1, 5, 3], [1, 4, 2, 5, 3], [1, 8, 5, 3]]
    shapes += [[1, 8, 5, 1, 3], [1, 8, 5, 3, 3], [1, 8, 15, 3]]
    tensors = [T(s, dtype, name=f"t{i}", **q) for i, s in enumerate(shapes)]
    consts = {
        "s1": [1, 4, 1, 5, 3],
        "m2": [1, 1, 2, 1, 1],
        "s3": [1, 8, 5, 3],
        "s4": [1, 8, 5, 1, 3],
        "m5": [1, 1, 1, 3, 1],
        "s6": [1, 8, 15, 3],
    }
    for name, v in consts.items():
        tensors.append(T([len(v)], "int32", data=np.array(v, np.int32), name=name))
    c = {name: len(shapes) + i for i, name in enumerate(consts)}
    ops = [
        ("RESHAPE", [0, c["s1"]], [1], options("ReshapeOptions", newShape=consts["s1"])),
        ("TILE", [1, c["m2"]], [2], None),
        ("RESHAPE", [2, c["s3"]], [3], options("ReshapeOptions", newShape=consts["s3"])),
        ("RESHAPE", [3, c["s4"]], [4], options("ReshapeOptions", newShape=consts["s4"])),
        ("TILE", [4, c["m5"]], [5], None),
        ("RESHAPE", [5, c["s6"]], [6], options("ReshapeOptions", newShape=consts["s6"])),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [6, 3] if also_read else [6]))
    return path


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_rank5_reshape_chains_make_one_resize(dtype, tmp_path):
    path = _chain_model(tmp_path / "up.tflite", dtype)
    g = read(path).main
    assert [(op.label, op.inputs[0], op.outputs[0]) for op in g.ops] == [
        ("op 0 (RESIZE_NEAREST_NEIGHBOR)", 0, 6)
    ]
    assert g.slot(g.ops[0], "size").data.tolist() == [8, 15]
    _same_as_litert(path, [6])


def test_a_chain_whose_middle_is_read_is_two_resizes(tmp_path):
    """The H chain's result is a graph output: it stays, so H and W become one resize each."""
    path = _chain_model(tmp_path / "up.tflite", also_read=True)
    model = read(path)
    assert [(op.label, op.inputs[0], op.outputs[0]) for op in model.main.ops] == [
        ("op 0 (RESIZE_NEAREST_NEIGHBOR)", 0, 3),
        ("op 3 (RESIZE_NEAREST_NEIGHBOR)", 3, 6),
    ]
    assert list(model.rewritten_ops.values()) == [
        ["op 0 (RESHAPE)", "op 1 (TILE)", "op 2 (RESHAPE)"],
        ["op 3 (RESHAPE)", "op 4 (TILE)", "op 5 (RESHAPE)"],
    ]
    _same_as_litert(path, [3, 6])


def test_tiling_the_whole_map_is_not_upsampling(tmp_path):
    """TILE (1, 2, 1, 1) repeats the map below itself (rows 0..3, 0..3), which nearest
    upsampling (rows 0, 0, 1, 1...) is not: left as it is."""
    path = tmp_path / "tile.tflite"
    tensors = [
        T([1, 4, 5, 3], name="x", **Q),
        T([4], "int32", data=np.array([1, 2, 1, 1], np.int32)),
        T([1, 8, 5, 3], name="y", **Q),
    ]
    path.write_bytes(graph_model(tensors, [("TILE", [0, 1], [2], None)], [0], [2]))
    model = read(path)
    assert [op.type for op in model.main.ops] == ["TILE"] and model.rewritten_ops == {}


def test_inspect_shows_the_rewrite(capsys):
    path = KERAS / "upsample_int8.tflite"
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    into = {"into": "op 1 (RESIZE_NEAREST_NEIGHBOR)"}
    rows = {r["index"]: (r["folded"], r["rewritten"], r["output_shapes"]) for r in doc["ops"]}
    chain = doc["rewritten_ops"]["op 1 (RESIZE_NEAREST_NEIGHBOR)"]
    assert rows[1] == (None, {"as": "RESIZE_NEAREST_NEIGHBOR", "replaces": chain}, [[1, 16, 16, 4]])
    assert rows[2] == ("rewritten", into, [[1, 8, 2, 8, 4]])
    assert rows[12] == ("rewritten", into, [[1, 16, 16, 4]])
    assert rows[0][1] is None and rows[3][0] == "constant"
    code, out, err = run_main(["inspect", str(path)], capsys)
    assert code == 0, err
    assert "Rewritten at import (MLI column: rewritten): op 1 (RESIZE_NEAREST_NEIGHBOR) " in out
    assert "│  2 │ TILE" in out and "rewritten" in out.split("│  2 │ TILE")[1].split("\n")[0]
