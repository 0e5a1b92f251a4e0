"""Seeded fuzzing: mutated copies of every shared model (byte- and flatbuffer-field-level, see
tests/support/mutate.py) through inspect, convert and run. Every case must end in a documented
exit code other than 1, without traceback or Python warning, with one stderr line when it fails,
and leave neither a partial output nor a temporary file. Long campaigns:
benchmarks/fuzz_campaign.py."""

from __future__ import annotations

import random
import shutil

import pytest

from tests.support.mutate import field_slots, run_case, sample_input
from tests.support.paths import shared_path

CASES = 300
SEED = 2024


def test_mutated_models_end_in_one_clear_line(tmp_path):
    models = sorted(shared_path("models").glob("**/*.tflite"))
    if not models:
        pytest.skip("no .tflite under ../shared/models")
    originals = {m: m.read_bytes() for m in models}
    slots = {m: field_slots(b) for m, b in originals.items()}
    inputs = {m: sample_input(b, tmp_path / f"{m.stem}.npy") for m, b in originals.items()}
    failures, codes = [], set()
    for case in range(CASES):
        model = models[case % len(models)]
        work = tmp_path / "case"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        argv, how, outcome, problem = run_case(model.name, originals[model], slots[model],
                                               inputs[model], random.Random(SEED * 7919 + case),
                                               work)
        codes.add(outcome.code)
        if problem:
            failures.append(f"case {case} {model.name} {argv[0]} ({how}): {problem}")
    assert not failures, "\n".join(failures)
    assert {0, 2} <= codes          # the mutations reach both accepted and refused models
