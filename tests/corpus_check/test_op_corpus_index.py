"""The op corpus (tests/corpus_ops, tools/make_op_corpus.py) against its index and issue 35's
contract (tools/tflm_ops.json): every file is indexed, mlitool's reader finds the op types and
input types the generator recorded with TensorFlow's own flatbuffer reader, and every op of TFLite
Micro's resolver has a file of its own or a reason why not."""

from __future__ import annotations

import json

import pytest

from mlitool.tflite.reader import read_model
from tests.support.paths import ROOT

CORPUS = ROOT / "tests" / "corpus_ops"
INDEX = json.loads((CORPUS / "corpus.json").read_text())
CONTRACT = json.loads((ROOT / "tools" / "tflm_ops.json").read_text())


def test_every_file_is_indexed_and_every_indexed_file_exists():
    on_disk = {p.name for p in CORPUS.glob("*.tflite")}
    assert on_disk == set(INDEX["files"])


@pytest.mark.parametrize("name", sorted(INDEX["files"]))
def test_reader_agrees_with_the_index(name):
    entry = INDEX["files"][name]
    graph = read_model(CORPUS / name).main
    assert [op.custom_code or op.type for op in graph.ops] == entry["ops"]
    assert [graph.tensors[i].dtype for i in graph.inputs] == [i["dtype"] for i in entry["inputs"]]
    assert entry["op"] in entry["ops"]


def test_every_contract_op_has_a_file_or_a_reason():
    under_test = {e["op"] for e in INDEX["files"].values()}
    not_made = {op.strip() for key in INDEX["not_made"] for op in key.split("/")}
    for op in [*CONTRACT["ops"], *CONTRACT["custom_ops"]]:
        assert op in under_test or op in not_made, op
    # ...and every op under test is one of TFLite Micro's
    assert under_test <= set(CONTRACT["ops"]) | set(CONTRACT["custom_ops"])


def test_contract_counts():
    """100 builtins registered; IF / WHILE / CALL_ONCE and the three resource-variable ops set aside."""
    counts = CONTRACT["counts"]
    assert counts["builtins_registered"] == len(CONTRACT["ops"]) + len(CONTRACT["set_aside"]) == 100
    assert set(CONTRACT["set_aside"]) == {
        "IF",
        "WHILE",
        "CALL_ONCE",
        "VAR_HANDLE",
        "READ_VARIABLE",
        "ASSIGN_VARIABLE",
    }
