"""A folder of .tflite files without corpus.json (MLITOOL_CORPUS, tools/corpus_table.py): an
unreadable file is listed with its error, not the end of the whole measure."""

from __future__ import annotations

from tests.support.corpus import entries
from tests.support.paths import ROOT


def test_an_unreadable_file_is_listed_with_its_error(tmp_path):
    good = (ROOT / "tests" / "corpus" / "flatten_dense_int8.tflite").read_bytes()
    (tmp_path / "good.tflite").write_bytes(good)
    (tmp_path / "cut.tflite").write_bytes(good[:3000])
    found = entries(tmp_path)
    assert found["good.tflite"]["variant"] == "int8"
    assert found["good.tflite"]["batch"] == "dynamic"
    assert "outside the file" in found["cut.tflite"]["error"]
