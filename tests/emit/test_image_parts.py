"""The footprint's writable parts and MLI functions (issue 36) against the emitted C itself
(tests/support/c_image.py reads the definitions): activation structs, the runtime's statics
(.bss: tables, scratch, flags, fast-memory pointers and staging tensors), the MLI functions the
C calls; with and without --fast-memory, on models with tables, recurrent scratch, slice calls
and fallback kernels. No cross compiler needed (tests/emit/test_image_arc.py links them)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support import c_image
from tests.support.cli import run_main
from tests.support.paths import ROOT, shared_path

CORPUS = ROOT / "tests" / "corpus"
CASES = [
    ("mlperf_tiny/resnet8_int8", ()),
    ("corpus/gru_int8", ()),
    ("corpus/lstm_int8", ()),
    ("corpus/transformer_int8", ()),
    ("corpus/mobilenet_v3_small_int8", ()),
    ("corpus/transformer_int8", ("--fast-memory", "64K")),
    ("corpus/gru_int8", ("--fast-memory", "64K")),
]


def _model(where: str):
    folder, name = where.split("/")
    path = shared_path("models", folder, f"{name}.tflite") if folder != "corpus" else None
    return (path or CORPUS / f"{name}.tflite"), name


@pytest.mark.parametrize(("where", "extra"), CASES)
def test_writable_parts_and_functions_are_the_emitted_c(where, extra, tmp_path, capsys):
    model, name = _model(where)
    code, out, err = run_main(["convert", model, "-o", tmp_path, "--json", *extra], capsys)
    assert code == 0, err
    fp = json.loads(out)["footprint"]
    c_text = (tmp_path / f"{name}.c").read_text()
    assert fp["ram"]["writable_structs"] == c_image.writable_structs(c_text) > 0
    assert fp["rom"]["writable_structs"] == fp["ram"]["writable_structs"]
    assert fp["ram"]["bss"] == c_image.bss(c_text)
    calls = set(re.findall(r"\b(mli_(?:krn|hlp|mov)_\w+)\(", c_text))
    assert fp["mli_functions"] == sorted(calls)
    assert fp["rom"]["mli_code"] > 0 and fp["rom"]["model_code"] > 0
    assert fp["ram_bytes"] == sum(fp["ram"].values())
    assert fp["rom_bytes"] == sum(fp["rom"].values())
