"""tune's JSON document equals the one recorded from the code before the search was made faster
(`git archive` of main at 5de272d, `-j 1`, run outside the repository, "model" cut to the file
name): lowering each mix once, fingerprints computed as far as they are compared, each step's
base run from the previous one change no step, no choice, no figure, no count. Re-recorded with
the same search when the footprint became the linked image (issue 36: RAM and ROM with the
structs, .bss, model and MLI kernel code, so the costs and some choices changed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_main
from tests.support.paths import SAMPLES, shared_path

RECORDED = Path(__file__).parents[1] / "fixtures" / "tune"


@pytest.mark.parametrize(
    "model, target, samples, jobs, recorded",
    [
        (None, "50", "8", "1", "cnn_int8.snr50.n8.json"),  # 5 single steps
        (None, "50", "8", "2", "cnn_int8.snr50.n8.json"),  # each worker its own base and cache
        ("resnet8_int8", "38.85", "2", "1", "resnet8_int8.snr38.85.n2.json"),  # pairs, back down
    ],
)
def test_document_as_recorded(capsys, model, target, samples, jobs, recorded):
    path = (
        SAMPLES / "cnn_int8.tflite"
        if model is None
        else shared_path("models", "mlperf_tiny", f"{model}.tflite")
    )
    args = ["tune", path, "--min-snr", target, "-n", samples, "-j", jobs, "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["model"] == str(path)
    want = json.loads((RECORDED / recorded).read_text())
    assert {**doc, "model": path.name} == want
