"""Random inputs that are indices (`mlitool.execute.reference.inputs.index_inputs`): an integer
input feeding only index slots (GATHER positions, EMBEDDING_LOOKUP ids, GATHER_ND indices),
directly or through integer ops, is drawn in [0, n) of what it indexes, so verify and report
work on such models without --input, and say so; any other integer input keeps the whole
range."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.reference.inputs import index_inputs, random_inputs
from mlitool.pipeline import read
from tests.support.cli import run_main
from tests.support.paths import ROOT
from tests.support.tflite_build import T, graph_model, int32_const, options

CORPUS_OPS = ROOT / "tests" / "corpus_ops"


def _graph(tmp_path, data: bytes):
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    return read(path).main


def _gather_nd(out_also: bool) -> bytes:
    """int32 indices [3, 2] into the first two axes of a [8, 5, 4] table (GATHER_ND); with
    `out_also` they are a graph output too (their values matter as they are)."""
    table = np.arange(160, dtype=np.int8).reshape(8, 5, 4)
    tensors = [
        T([3, 2], "int32", name="idx"),
        T([8, 5, 4], scale=0.1, zero_point=0, data=table, name="table"),
        T([3, 4], scale=0.1, zero_point=0, name="out"),
    ]
    outs = [2, 0] if out_also else [2]
    return graph_model(tensors, [("GATHER_ND", [1, 0], [2], None)], [0], outs)


def _gather_after_add(axis: int) -> bytes:
    """int32 positions [6] + 1 (ADD), then GATHER of a [16, 4] table along `axis`; and an
    int32 input `count` that an ADD turns into an output."""
    table = np.arange(64, dtype=np.int8).reshape(16, 4)
    tensors = [
        T([6], "int32", name="pos"),
        int32_const([1]),
        T([6], "int32", name="pos1"),
        T([16, 4], scale=0.1, zero_point=0, data=table, name="table"),
        T([6, 4] if axis == 0 else [16, 6], scale=0.1, zero_point=0, name="out"),
        T([6], "int32", name="count"),
        T([6], "int32", name="count1"),
    ]
    add = options("AddOptions", fusedActivationFunction=0)
    ops = [
        ("ADD", [0, 1], [2], add),
        ("GATHER", [3, 2], [4], options("GatherOptions", axis=axis)),
        ("ADD", [5, 1], [6], add),
    ]
    return graph_model(tensors, ops, [0, 5], [4, 6])


@pytest.mark.parametrize("axis, n", [(0, 16), (1, 4)])
def test_index_through_integer_ops(tmp_path, axis, n):
    g = _graph(tmp_path, _gather_after_add(axis))
    assert index_inputs(g) == {0: n}  # `count` reaches no index slot
    x = random_inputs(g, 200, seed=1)
    assert x[0].dtype == np.int32 and x[0].min() == 0 and x[0].max() == n - 1
    info = np.iinfo(np.int32)
    assert x[5].min() < info.min // 2 and x[5].max() > info.max // 2  # the whole range


@pytest.mark.parametrize("out_also, want", [(False, {0: 5}), (True, {})])
def test_gather_nd_bound_and_outputs(tmp_path, out_also, want):
    """GATHER_ND's components index axes of 8 and 5: both valid in [0, 5)."""
    assert index_inputs(_graph(tmp_path, _gather_nd(out_also))) == want


@pytest.mark.parametrize(
    "name, tensor, hi",
    [("embedding_lookup_int8", "ids", 9), ("embedding_int8", "idx", 15)],
)
def test_verify_and_report_without_input(name, tensor, hi, tmp_path, capsys):
    """embedding_lookup_int8 (ids into 10 rows), embedding_int8 (Keras: LESS / ADD / SUB /
    SELECT, then GATHER of 16 rows): bit-exact against LiteRT, the draw in the note and JSON."""
    model = CORPUS_OPS / f"{name}.tflite"
    args = ["verify", model, "-n", "16", "--oracle", "litert", "--max-lsb", "0", "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    inputs = json.loads(out)["inputs"]
    assert inputs["index_inputs"] == {tensor: [0, hi]}
    assert inputs["note"].endswith(f"; indices '{tensor}' in [0, {hi}]")
    code, _, err = run_main(["report", model, "-n", "8", "-o", tmp_path], capsys)
    assert code == 0, err
    meta = dict(json.loads((tmp_path / f"{name}.report.json").read_text())["meta"])
    assert meta["inputs"] == f"random, seed 0; indices '{tensor}' in [0, {hi}]"
