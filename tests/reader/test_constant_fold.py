"""Constant folding at import (mlitool/passes/constant_fold.py): dynamic-batch shape arithmetic
becomes constants, run-time shapes become the ones TFLite computes, and the folded graph runs in
tflite mode exactly as LiteRT runs the file; `inspect` and the manifest say what was folded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.mli.lower.driver import lower
from mlitool.passes.constant_fold import fold_constants
from mlitool.passes.context import PassContext
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.cli.test_bad_input import run_main
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, dynamic_flatten_model, graph_model, options

KERAS = Path(__file__).parents[1] / "fixtures" / "keras"


def _same_as_litert(path, graph, samples=4):
    """tflite mode on the folded `graph` equals LiteRT on the file at every op output left."""
    inputs = random_inputs(graph, samples, seed=3)
    ref = reference_outputs(path, graph, inputs)
    ours = run_graph(graph, inputs, "tflite", keep=True)
    for t, want in ref.items():
        assert ours[t].shape == want.shape, graph.tensors[t].name
        np.testing.assert_array_equal(ours[t], want, err_msg=graph.tensors[t].name)


@pytest.mark.parametrize("signatures", [True, False], ids=["signature", "shape-input"])
def test_dynamic_flatten_folds_into_a_reshape_view(signatures, tmp_path):
    path = tmp_path / "flatten.tflite"
    path.write_bytes(dynamic_flatten_model("int8", signatures))
    model = read(path)
    g = model.main
    assert [op.type for op in g.ops] == ["RESHAPE", "FULLY_CONNECTED"]
    assert model.folded_ops == ["op 0 (SHAPE)", "op 1 (STRIDED_SLICE)", "op 2 (PACK)"]
    assert model.batch_fixed == (["x"] if signatures else [])
    reshape = g.ops[0]
    assert g.slot(reshape, "shape").data.tolist() == [1, -1]  # PACK(batch 1, -1)
    assert g.tensors[reshape.outputs[0]].shape == (1, 32)  # the file stores [1, 1]
    mli = lower(g, format="sa8")
    assert [la.kind for la in mli.layers] == ["view", "fully_connected"]
    _same_as_litert(path, g)


def test_before_folding_the_flatten_is_refused(tmp_path):
    """What the graph is without folding: the RESHAPE's run-time shape refused."""
    from mlitool.tflite.validate import check_graph

    path = tmp_path / "flatten.tflite"
    path.write_bytes(dynamic_flatten_model("int8"))
    with pytest.raises(UnsupportedError, match="only known at run time"):
        check_graph(read_model(path).main, str(path))


def test_keras_reshape_dense_shapes_are_those_tflite_computes():
    """Real converter output: Reshape((16, 16)) then Dense on [batch, 16, 16] (Tensordot: GATHER,
    REDUCE_PROD, CONCATENATION of int32 shape vectors); the stored shapes are placeholders."""
    path = KERAS / "reshape_dense_int8.tflite"
    model = read(path)
    g = model.main
    assert model.folded_ops == [
        "op 1 (SHAPE)",
        "op 2 (STRIDED_SLICE)",
        "op 3 (PACK)",
        "op 5 (SHAPE)",
        "op 6 (GATHER)",
        "op 7 (REDUCE_PROD)",
        "op 8 (CONCATENATION)",
        "op 9 (GATHER)",
        "op 10 (REDUCE_PROD)",
        "op 11 (PACK)",
    ]
    assert model.removed_ops == ["op 4 (RESHAPE)"]  # it fed only op 5 (SHAPE)
    shapes = [(op.index, op.type, g.tensors[op.outputs[0]].shape) for op in g.ops]
    assert shapes == [
        (0, "CONV_2D", (1, 8, 8, 4)),
        (12, "RESHAPE", (16, 16)),  # stored [1, 1]
        (13, "FULLY_CONNECTED", (16, 5)),  # stored [1, 5]
        (14, "RESHAPE", (1, 16, 5)),
    ]
    _same_as_litert(path, g)


def test_an_op_its_kernel_refuses_is_left_for_the_validation(tmp_path):
    """A constant GATHER with an index outside its axis (TFLite refuses it too) is not folded;
    the validation names it."""
    path = tmp_path / "gather.tflite"
    tensors = [
        T([1, 4], "float32", name="x"),
        T([3], "int32", name="params", data=np.array([1, 2, 3])),
        T([1], "int32", name="index", data=np.array([3])),
        T([1], "int32", name="picked"),
        T([1, 4], "float32", name="y"),
    ]
    ops = [
        ("GATHER", [1, 2], [3], options("GatherOptions", axis=0)),
        ("RESHAPE", [0, 3], [4], None),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    with pytest.raises(UnsupportedError, match=r"op 0 \(GATHER\).*outside \[0, 3\)"):
        read(path)


def test_manifest_and_inspect_say_what_was_folded(tmp_path, capsys):
    path = tmp_path / "flatten.tflite"
    path.write_bytes(dynamic_flatten_model("int8"))
    code, _, err = run_main(["convert", str(path), "-o", str(tmp_path), "-q"], capsys)
    assert code == 0, err
    model = json.loads((tmp_path / "flatten.json").read_text())["model"]
    assert model["batch_fixed_to_1"] == ["x"]
    assert model["folded_ops"] == ["op 0 (SHAPE)", "op 1 (STRIDED_SLICE)", "op 2 (PACK)"]
    assert model["removed_ops"] == []

    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["batch_fixed_to_1"] == ["x"] and doc["problems"] == []
    rows = [(r["type"], r["folded"], r["supported"], r["output_shapes"]) for r in doc["ops"]]
    assert rows == [
        ("SHAPE", "constant", True, [[4]]),
        ("STRIDED_SLICE", "constant", True, [[]]),
        ("PACK", "constant", True, [[2]]),
        ("RESHAPE", None, True, [[1, 32]]),
        ("FULLY_CONNECTED", None, True, [[1, 3]]),
    ]
    code, out, err = run_main(["inspect", str(path)], capsys)
    assert code == 0, err
    assert "Batch fixed to 1 (MLI runs one sample): x" in out
    assert "Folded at import: 3 ops into constants" in out


@pytest.mark.filterwarnings("ignore:Warning. Enabling `experimental_preserve_all_tensors`")
def test_keras_upsampling_runs_in_tflite_mode_as_litert():
    """Real converter output: Keras 3's nearest UpSampling2D(2) as EXPAND_DIMS -> TILE -> RESHAPE
    per axis, the RESHAPE targets computed at run time (stored [1, 1, 16, 4]); folded, the
    shapes are TFLite's and tflite mode equals LiteRT at every op left (folding alone: on import
    the chain then becomes one RESIZE_NEAREST_NEIGHBOR, tests/reader/test_upsampling.py)."""
    path = KERAS / "upsample_int8.tflite"
    g = fold_constants(read_model(path).main, PassContext())
    shapes = [(op.type, g.tensors[op.outputs[0]].shape) for op in g.ops]
    assert shapes == [
        ("CONV_2D", (1, 8, 8, 4)),
        ("EXPAND_DIMS", (1, 8, 1, 8, 4)),
        ("TILE", (1, 8, 2, 8, 4)),
        ("RESHAPE", (1, 16, 8, 4)),
        ("EXPAND_DIMS", (1, 16, 8, 1, 4)),
        ("TILE", (1, 16, 8, 2, 4)),
        ("RESHAPE", (1, 16, 16, 4)),
        ("CONV_2D", (1, 16, 16, 2)),
    ]
    # LiteRT's reference resolver lacks TILE version 3 (int8): its builtin kernels, up to the
    # last convolution (its optimised 1x1 kernel rounds 4 of 512 values 1 LSB off the reference)
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    it = litert.Interpreter(
        model_path=str(path), num_threads=1, experimental_preserve_all_tensors=True
    )
    it.allocate_tensors()
    inputs = random_inputs(g, 4, seed=3)
    ours = run_graph(g, inputs, "tflite", keep=True)
    (x,) = inputs.items()
    for s in range(4):
        it.set_tensor(x[0], x[1][s])
        it.invoke()
        for op in g.ops[:-1]:
            t = op.outputs[0]
            np.testing.assert_array_equal(ours[t][s], it.get_tensor(t), err_msg=op.label)
