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


# Cases of the campaigns over the PyTorch and op corpora (benchmarks/fuzz_campaign.py --models
# tests/corpus_torch tests/corpus_ops [tests/corpus ../shared/models] --seed 39 / 40) that were
# internal errors or a hang: a QUANTIZE writing complex64, a per-axis QUANTIZE whose input was
# rewired to a tensor of another shape (its output took the computed shape, then the 32 scales
# met 10 elements), and the cases named below.
@pytest.mark.parametrize(
    "model, seed, case, mutator",
    [
        ("corpus_torch/ds_cnn_pt2e_qdq.tflite", 39, 948, "fields"),
        ("corpus_torch/squeezenet1_1_pt2e_qdq.tflite", 39, 983, "fields"),
        ("corpus_ops/neg_int8.tflite", 39, 2080, "fields"),
        # a CUMSUM whose output shape is not its input's (float and int8)
        ("corpus_ops/cumsum_exclusive_float32.tflite", 40, 103, "fields"),
        ("corpus_ops/cumsum_exclusive_int8.tflite", 40, 7895, "fields"),
        # UNPACK's num -1 with eight outputs
        ("corpus_ops/unpack_int16.tflite", 40, 9954, "ops"),
        # an op writing a tensor another op wrote: the upsampling pass walked a cycle for ever
        ("corpus_ops/reshape_float32.tflite", 40, 4688, "fields"),
        # int8 weights left without scales; a signalling NaN scale (a warning in a cast); ADD_N's
        # output shape; infinite scales in the bias pass (a warning in a subtraction)
        ("corpus_torch/conv_gru_h0_pt2e_int8.tflite", 41, 1490, "lengths"),
        ("corpus_torch/ds_cnn_pt2e_int8.tflite", 41, 5576, "fields"),
        ("corpus_ops/add_n_float32.tflite", 41, 6737, "fields"),
        ("corpus_ops/conv_2d_grouped_int16.tflite", 41, 7888, "fields"),
        # a float TRANSPOSE permutation (a warning in a cast); MEAN axes no longer constant
        ("corpus_torch/shufflenet_v2_float_nchw.tflite", 42, 1152, "fields"),
        ("corpus_ops/mean_float32.tflite", 42, 6872, "fields"),
        # a denormal scale (divide by zero warning); a block size of 0; an unknown fused
        # activation in a float island; a weight pair's TRANSPOSE that is no permutation
        ("corpus_torch/resnet18_pt2e_qdq.tflite", 43, 3376, "fields"),
        ("corpus_ops/space_to_batch_nd_float32.tflite", 43, 5827, "fields"),
        ("corpus_torch/resnet18_pt2e_int8.tflite", 43, 6343, "ops"),
        ("corpus_torch/ds_cnn_pt2e_qdq.tflite", 43, 8916, "fields"),
        # a custom op mlitool knows with no outputs / inputs (the passes read them); an SVDF
        # whose state is another tensor; a zero bias scale (0 / 0 in a cast)
        ("corpus_ops/detection_postprocess_multiclass_float32.tflite", 44, 954, "ops"),
        ("corpus_ops/detection_postprocess_regular_float32.tflite", 44, 2284, "ops"),
        ("corpus_ops/svdf_float32.tflite", 44, 5562, "fields"),
        ("corpus_torch/efficientnet_b0_pt2e_qdq.tflite", 44, 1608, "fields"),
        # an op mlitool does not know, without inputs or outputs, before the island passes; a
        # complex64 CAST; a REDUCE_ALL's output shape; a dilation of 2^31 - 1
        ("corpus_ops/depth_to_space_int8.tflite", 45, 73, "fields"),
        ("corpus_ops/cast_to_int32_builder_int8.tflite", 45, 1554, "fields"),
        ("corpus_ops/expand_dims_builder_float32.tflite", 45, 1615, "fields"),
        ("corpus_ops/depthwise_conv_2d_dilated_int8.tflite", 45, 4103, "ops"),
        # a DYNAMIC_UPDATE_SLICE island with run-time starts writing another shape
        ("corpus_ops/dus_run_time_starts_int8.tflite", 46, 7637, "fields"),
        # a complex64 tensor read by the output-shape check (a warning); two start indices
        # for a rank-4 operand
        ("corpus_ops/resize_bilinear_int8.tflite", 48, 247, "fields"),
        ("corpus_ops/dus_int32_data_float32.tflite", 48, 4114, "ops"),
        # an unknown fused activation in a float island of several ops
        ("corpus_torch/resnet18_pt2e_int8.tflite", 49, 4382, "ops"),
        # a NaN output scale of a bool CAST read by a QUANTIZE
        ("corpus_ops/cast_bool_float_int8.tflite", 50, 7584, "fields"),
    ],
)
def test_found_by_the_corpus_campaign(tmp_path, model, seed, case, mutator):
    path = ROOT / "tests" / model
    buf = path.read_bytes()
    npy = M.sample_input(buf, tmp_path / "x.npy")
    work = tmp_path / "case"
    work.mkdir()
    argv, how, outcome, problem = M.run_case(
        path.name,
        buf,
        (op_slots if mutator == "ops" else M.field_slots)(buf),
        npy,
        random.Random(seed * 1_000_003 + case),
        work,
        {"ops": mutate_ops, "lengths": M.mutate_lengths, "fields": M.mutate}[mutator],
    )
    # no internal error, traceback or warning; a refusal (inspect: a problem listed, exit 0)
    assert not problem and outcome.code in (0, 2, 4), (argv, how, outcome.stderr)
