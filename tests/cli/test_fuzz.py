"""Seeded fuzzing: mutated copies of every shared model (byte- and flatbuffer-field-level, and
array lengths: quantization scales / zero points, graph inputs / outputs; see
tests/support/mutate.py; op input / output lists and option values: tests/support/mutate_ops.py)
through inspect, convert and run. Every case must end in a documented exit code other than 1,
without traceback or Python warning, with one stderr line when it fails (or convert's list of
refusals), and leave neither a partial output nor a temporary file. Long campaigns:
benchmarks/fuzz_campaign.py."""

from __future__ import annotations

import random
import shutil

import pytest

from tests.support import mutate as M
from tests.support.mutate_ops import mutate_ops, op_slots
from tests.support.paths import ROOT, shared_path

CASES = 300
LENGTH_CASES = 80
OP_CASES = 120
SEED = 2024


def _campaign(
    tmp_path, cases: int, seed: int, mutator, slots_of=M.field_slots
) -> tuple[list[str], set[int]]:
    models = sorted(shared_path("models").glob("**/*.tflite"))
    if not models:
        pytest.skip("no .tflite under ../shared/models")
    originals = {m: m.read_bytes() for m in models}
    slots = {m: slots_of(b) for m, b in originals.items()}
    inputs = {m: M.sample_input(b, tmp_path / f"{m.stem}.npy") for m, b in originals.items()}
    failures, codes = [], set()
    for case in range(cases):
        model = models[case % len(models)]
        work = tmp_path / "case"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        argv, how, outcome, problem = M.run_case(
            model.name,
            originals[model],
            slots[model],
            inputs[model],
            random.Random(seed * 7919 + case),
            work,
            mutator,
        )
        codes.add(outcome.code)
        if problem:
            failures.append(f"case {case} {model.name} {argv[0]} ({how}): {problem}")
    return failures, codes


def test_mutated_models_end_in_one_clear_line(tmp_path):
    failures, codes = _campaign(tmp_path, CASES, SEED, M.mutate)
    assert not failures, "\n".join(failures)
    assert {0, 2} <= codes  # the mutations reach both accepted and refused models


def test_shortened_quantization_and_graph_io_lists_end_in_one_clear_line(tmp_path):
    """Scales / zero points cut to one or none, graph inputs / outputs emptied, shortened or
    rewired: never an internal error (a per-tensor weight scale with per-channel bias scales
    and an empty output list were)."""
    failures, codes = _campaign(tmp_path, LENGTH_CASES, SEED, M.mutate_lengths)
    assert not failures, "\n".join(failures)
    assert {0, 2} <= codes


def test_op_lists_and_option_values_end_in_one_clear_line(tmp_path):
    """Op input / output lists emptied, shortened or lengthened, option values (strides,
    filters, axes, activations, betas, ...) set to 0, negative values, limits or NaN: never an
    internal error (an op without outputs and a stride of 0 were, issue 37)."""
    failures, codes = _campaign(tmp_path, OP_CASES, SEED, mutate_ops, op_slots)
    assert not failures, "\n".join(failures)
    assert {0, 2} <= codes


# Cases of the campaign over the PyTorch and op corpora (benchmarks/fuzz_campaign.py --models
# tests/corpus_torch tests/corpus_ops --seed 39) that were internal errors: a QUANTIZE writing
# complex64, and a per-axis QUANTIZE whose input was rewired to a tensor of another shape (its
# output took the computed shape, then the 32 scales met 10 elements).
@pytest.mark.parametrize(
    "model, case",
    [
        ("corpus_torch/ds_cnn_pt2e_qdq.tflite", 948),
        ("corpus_torch/squeezenet1_1_pt2e_qdq.tflite", 983),
        ("corpus_ops/neg_int8.tflite", 2080),
    ],
)
def test_found_by_the_corpus_campaign(tmp_path, model, case):
    path = ROOT / "tests" / model
    buf = path.read_bytes()
    npy = M.sample_input(buf, tmp_path / "x.npy")
    work = tmp_path / "case"
    work.mkdir()
    argv, how, outcome, problem = M.run_case(
        path.name,
        buf,
        M.field_slots(buf),
        npy,
        random.Random(39 * 1_000_003 + case),
        work,
        M.mutate,
    )
    assert not problem and outcome.code == 2, (argv, how, outcome.stderr)
    assert "malformed graph" in outcome.stderr, outcome.stderr
