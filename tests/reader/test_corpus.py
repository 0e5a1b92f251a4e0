"""The Keras-export corpus (tests/corpus, written by tools/make_corpus.py) is what corpus.json says.

corpus.json was written from TensorFlow's own flatbuffer tools at generation time; the TFLite
interpreter and mlitool's reader must both see the same op list, input dtype and shape signature
(dynamic batch: -1) in every committed file.
"""

from __future__ import annotations

import json

import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from mlitool.tflite.reader import read_model
from tests.support.paths import ROOT

CORPUS = ROOT / "tests" / "corpus"
MANIFEST = json.loads((CORPUS / "corpus.json").read_text())
FILES = MANIFEST["files"]


def test_every_corpus_file_is_listed_and_small():
    on_disk = {p.name for p in CORPUS.glob("*.tflite")}
    assert on_disk == set(FILES)
    calib = {e["calibration"] for e in FILES.values() if e.get("calibration")}
    assert {p.name for p in CORPUS.glob("*.npy")} == calib
    assert not set(MANIFEST["dropped"]) & on_disk
    # A few MB in all: the corpus is committed.
    assert sum(p.stat().st_size for p in CORPUS.iterdir()) < 3_500_000


def test_corpus_covers_variants_and_batches():
    kinds = {(e["variant"], e["batch"]) for e in FILES.values()}
    assert {
        ("int8", "dynamic"),
        ("int8", "fixed"),
        ("16x8", "dynamic"),
        ("float32", "dynamic"),
    } <= kinds
    for e in FILES.values():
        (inp,) = e["inputs"]
        assert inp["dtype"] == {"int8": "int8", "16x8": "int16", "float32": "float32"}[e["variant"]]
        assert (inp["shape"][0] == -1) == (e["batch"] == "dynamic")


@pytest.mark.parametrize("name", sorted(FILES))
def test_interpreter_and_reader_see_the_recorded_graph(name):
    entry = FILES[name]
    (inp,) = entry["inputs"]
    # Builtin kernels, no delegate (one would replace ops in the list): LiteRT 2.3's reference
    # resolver lacks ELU v1, TILE v3 and DEPTH_TO_SPACE v2, which the converter writes.
    it = Interpreter(
        model_path=str(CORPUS / name),
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    assert [d["op_name"] for d in it._get_ops_details()] == entry["ops"]
    (d,) = it.get_input_details()
    assert list(d["shape_signature"]) == inp["shape"]
    assert len(it.get_output_details()) == entry["outputs"]

    g = read_model(CORPUS / name).main
    assert [op.type for op in g.ops] == entry["ops"]
    (t,) = [g.tensors[i] for i in g.inputs]
    assert (t.dtype, list(t.shape_signature or t.shape)) == (inp["dtype"], inp["shape"])
    assert len(g.outputs) == entry["outputs"]
