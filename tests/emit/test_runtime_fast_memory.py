"""`convert --fast-memory SIZE` on the real MLI 2.0.2 library: every kernel operand in the fast
buffer, every output bit-exact.

Each case converts a model for a budget, compiles NAME.c with -DNAME_CHECK_OPERANDS (NAME_run
returns MLI_STATUS_BAD_TENSOR before a call whose operand lies outside the fast buffer) and links
it, in the four ROUND_MODE x FULL_ACCU builds, with wrappers around every mli_krn_* the model calls
(`-Wl,--wrap=`) that log each operand's address: every logged operand lies inside the first
NAME_FAST_BYTES of the fast buffer, every layer's output equals `run_model` (`run --mode mli`). The
budgets are those of issue 24 where the model fits, at least one of them with activations in the
slow arena, and budgets below a layer's operands, which tile it by output rows: strides, dilation,
padding on the edge tiles only, inputs staged or viewed in place, element-wise layers, the
per-element activations (relu, leaky_relu, prelu, sigm and tanh with their tables, conversions, the
fallback table look-up), and weights over the budget, which slice convolutions and fully connected
layers by output channels (per-axis and per-tensor weights, alone and inside row tiles); fx16 and
fx8w16d conversions (int16 activations) in tiles and with a slow arena; Keras exports of the corpus
(MobileNetV2, U-Net, a 1-D KWS, a transformer block) at 16 KB or their least, 32, 64 and 128 KB, in
fewer builds where another case has all four; so are MobileNet v1 and the MNIST LSTM. Two sabotaged
sources show that each of the two checks catches a kernel given a weight in slow memory on its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.support import runtime_harness as H
from tests.support.fast_memory import api_header, least_budget, macro, operands_outside
from tests.support.paths import ROOT, SAMPLES, mli_cflags, shared_path
from tests.support.tflite_build import T, graph_model, options

K = 1024
CORPUS = ROOT / "tests" / "corpus"
CASES = [
    ("cnn_int8", 16 * K),  # conv1 (input in place) and maxpool in 2 row tiles each
    ("mlperf_tiny/kws_ref_model_int8", 12000),  # 9 layers tiled, conv1 10x4 stride 2 pad 4/5
    ("ops/conv_dilation", 700),  # dilation 2, padding 2/2: 4 tiles
    ("ops/conv_stride2_same", 500),  # stride 2, padding 0/1: 4 tiles of one row
    ("ops/max_pool", 300),  # 3x3 stride 2, padding 1/1: 2 tiles
    ("cnn_int8", 8 * K),  # 6 layers tiled, the ADD too (two inputs, no halo)
    ("mlperf_tiny/resnet8_int8", 40 * K),  # its ADDs and convolutions in row tiles
    ("cnn_int8", 24 * K),  # the 16 KB conv output in the slow arena
    ("cnn_int8", 32 * K),  # everything resident
    ("fc_int8", 16 * K),
    ("mlperf_tiny/kws_ref_model_int8", 32 * K),
    ("mlperf_tiny/resnet8_int8", 64 * K),  # 32 KB of activations in the slow arena
    ("mlperf_tiny/resnet8_int8", 128 * K),
    ("mlperf_tiny/vww_96_int8", 128 * K),  # 36 KB in the slow arena
    ("mlperf_tiny/ad01_int8", 128 * K),
    ("tflm/hello_world_int8", 16 * K),
    ("tflm/micro_speech_int8", 32 * K),
    ("mlperf_tiny/vww_96_int8", 64 * K),  # layer 26's 1x1 conv, 256 -> 256, in 2 channel slices
    ("mlperf_tiny/ad01_int8", 16 * K),  # every FC layer in neuron slices (per-tensor weights)
    ("tflm/micro_speech_int8", 16 * K),  # the FC 4000 -> 4 in 2 neuron slices
    ("tflm/micro_speech_int8", 8724),  # the least: the FC in 4 slices, an input in slow memory
    ("mlperf_tiny/vww_96_int8", 8 * K),  # 1x1 convs in 3 row tiles x 4 channel slices
    ("mlperf_tiny/resnet8_int8", 8 * K),  # 3x3 convs in rows x channels, per-axis weights
]

# fx16 and fx8w16d (int16 activations, 2-aligned offsets, fx8 weights): shared models in row
# tiles and channel slices, activations in the slow arena.
FX_CASES = [
    ("mlperf_tiny/kws_ref_model_int8", "fx16", 32 * K),  # 8 layers tiled, 32000 B slow
    ("mlperf_tiny/vww_96_int8", "fx8w16d", 16 * K),  # 25 layers tiled, 126 KB slow
    ("cnn_int8", "fx16", 17100),  # once its least (an untiled relu): now the relu fits whole
    ("mlperf_tiny/resnet8_int8", "fx16", 64 * K),  # the relus after the ADDs in 2 row tiles
    ("mlperf_tiny/resnet8_int8", "fx16", 32 * K),  # 12 layers tiled, 4 of them relus
]
ALL_CASES = [(m, "sa8", b) for m, b in CASES] + FX_CASES


def _path(model: str) -> Path:
    if model.startswith("corpus/"):
        return CORPUS / f"{model[len('corpus/') :]}.tflite"
    if "/" in model and not model.startswith("ops/"):
        return shared_path("models", f"{model}.tflite")
    return SAMPLES / f"{model}.tflite"


def _case_id(model: str, fmt: str, budget) -> str:
    size = budget if isinstance(budget, str) else f"{budget // K}K" if budget % K == 0 else budget
    return f"{model.split('/')[-1]}-{size}" + ("" if fmt == "sa8" else f"-{fmt}")


def _prepare(path: Path, budget: int, out: Path, cflags: list[str], fmt: str = "sa8"):
    conv = H.convert(path, fmt, out, fast_memory=budget)
    check = f"-D{conv.manifest['runtime']['fast_memory']['macros']['check_operands']}"
    return conv, check


@pytest.mark.parametrize("model,fmt,budget", ALL_CASES, ids=[_case_id(*c) for c in ALL_CASES])
def test_every_operand_in_fast_memory_and_bit_exact(model, fmt, budget, mli_builds, tmp_path):
    _check_case(_path(model), fmt, budget, mli_builds, tmp_path)


def _check_case(path: Path, fmt: str, budget: int, builds: dict, tmp_path, samples: int = 4):
    cflags = mli_cflags("2.0")
    conv, check = _prepare(path, budget, tmp_path, cflags, fmt)
    fm = conv.manifest["runtime"]["fast_memory"]
    fast_bytes = macro(conv, fm["macros"]["fast_bytes"])
    assert fast_bytes == fm["fast_bytes"] <= budget
    assert macro(conv, fm["macros"]["slow_bytes"]) == fm["slow_bytes"]
    objs = H.compile_objects(conv, [*cflags, check])
    wrap = H.compile_wrappers(conv, cflags, api_header())
    inputs = H.random_inputs(conv.model, samples, 0)
    results = H.check(conv, objs, builds, inputs, wrap=wrap)
    H.assert_bit_exact(results)
    called = {la.kernel for la in conv.model.layers if la.kernel.startswith("mli_krn_")}
    for key, result in results.items():
        records = H.operand_records(result.operand_log)
        assert {r[0] for r in records} == called, key
        assert operands_outside(result.operand_log, fast_bytes) == [], key
    return conv


# Keras exports of the corpus (tests/corpus): MobileNetV2's inverted residuals in row tiles
# (all four builds, every budget), a U-Net (its skip concatenations staged from the slow arena;
# 16 KB is too small: at its least), a 1-D KWS and a transformer block (tiny: at their least),
# MobileNetV3-Small (broadcast loops over the channels' strided views and over pixels).
# "least": the bytes the refusal at 1 byte names, which must then fit.
KERAS_CASES = [
    ("mobilenet_v2_int8", 16 * K, 4),
    ("mobilenet_v2_int8", 32 * K, 1),
    ("mobilenet_v2_int8", 64 * K, 1),
    ("mobilenet_v2_int8", 128 * K, 1),
    ("unet_int8", "least", 2),
    ("unet_int8", 32 * K, 1),
    ("unet_int8", 64 * K, 1),
    ("kws_conv1d_int8", "least", 1),
    ("transformer_int8", "least", 1),
    ("mobilenet_v3_small_int8", "least", 4),  # squeeze-excite loops over channels and pixels
    ("mobilenet_v3_small_int8", 32 * K, 1),
]


@pytest.mark.parametrize(
    "model,budget,builds", KERAS_CASES, ids=[_case_id(m, "sa8", b) for m, b, _ in KERAS_CASES]
)
def test_keras_fixtures_in_fast_memory(model, budget, builds, mli_builds, tmp_path):
    from mlitool.mli.memory.placement import plan_model
    from mlitool.pipeline import ModelOptions, load, settle

    path = CORPUS / f"{model}.tflite"
    if budget == "least":
        _, mli = load(path, settle(ModelOptions()))
        budget = least_budget(mli)
        assert plan_model(mli, budget).fast_bytes == budget  # fits, and with nothing to spare
    keys = [("UP", "OFF"), ("CONVERGENT", "ON"), ("UP", "ON"), ("CONVERGENT", "OFF")][:builds]
    _check_case(path, "sa8", budget, {k: mli_builds[k] for k in keys}, tmp_path, samples=2)


# The two shared int8 models the cases above leave out, in the same way as the Keras fixtures:
# every budget in at least one build, one budget in all four.
# MobileNet v1 (128x128x3, 192 KB of activations in the slow arena at every budget): 28 layers
# in 527 calls at 16 KB, 8 in 20 at 128 KB. The MNIST LSTM: at its least (7,588 B) the FC in
# two neuron slices, each LSTM step whole; from 16 KB on everything resident.
MORE_CASES = [
    ("embarc_mli/mobilenet_v1_int8", 16 * K, 4),
    ("embarc_mli/mobilenet_v1_int8", 32 * K, 1),
    ("embarc_mli/mobilenet_v1_int8", 64 * K, 1),
    ("embarc_mli/mobilenet_v1_int8", 128 * K, 1),
    ("tflm/mnist_lstm_int8", "least", 4),
    ("tflm/mnist_lstm_int8", 16 * K, 1),
    ("tflm/mnist_lstm_int8", 32 * K, 1),
    ("tflm/mnist_lstm_int8", 64 * K, 1),
    ("tflm/mnist_lstm_int8", 128 * K, 1),
]


@pytest.mark.parametrize(
    "model,budget,builds", MORE_CASES, ids=[_case_id(m, "sa8", b) for m, b, _ in MORE_CASES]
)
def test_more_shared_models_in_fast_memory(model, budget, builds, mli_builds, tmp_path):
    from mlitool.mli.memory.placement import plan_model
    from mlitool.pipeline import ModelOptions, load, settle

    path = _path(model)
    if budget == "least":
        _, mli = load(path, settle(ModelOptions()))
        budget = least_budget(mli)
        assert plan_model(mli, budget).fast_bytes == budget
    keys = [("UP", "OFF"), ("CONVERGENT", "ON"), ("UP", "ON"), ("CONVERGENT", "OFF")][:builds]
    _check_case(path, "sa8", budget, {k: mli_builds[k] for k in keys}, tmp_path, samples=2)


def _pools(tmp_path) -> Path:
    """x [1,13,10,8] -> AVERAGE_POOL_2D 3x3 stride 1 SAME -> a -> AVERAGE_POOL_2D 3x3 stride 2
    SAME -> y [1,7,5,8]: MLI averages over the taps inside the input only, so a tile that
    padded an inner row would divide by the wrong count."""
    pool = dict(padding=0, filterWidth=3, filterHeight=3)
    tensors = [
        T([1, 13, 10, 8], scale=[0.05], zero_point=[3], name="x"),
        T([1, 13, 10, 8], scale=[0.05], zero_point=[3], name="a"),
        T([1, 7, 5, 8], scale=[0.05], zero_point=[3], name="y"),
    ]
    ops = [
        ("AVERAGE_POOL_2D", [0], [1], options("Pool2DOptions", strideW=1, strideH=1, **pool)),
        ("AVERAGE_POOL_2D", [1], [2], options("Pool2DOptions", strideW=2, strideH=2, **pool)),
    ]
    path = tmp_path / "pools.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [2]))
    return path


def test_average_pools_in_row_tiles(mli_builds, tmp_path):
    cflags = mli_cflags("2.0")
    conv, check = _prepare(_pools(tmp_path), 1000, tmp_path / "out", cflags)
    layers = conv.manifest["runtime"]["fast_memory"]["layers"]
    assert [la["tiles"] for la in layers] == [3, 2]  # 5+4+4 and 4+3 rows
    objs = H.compile_objects(conv, [*cflags, check])
    wrap = H.compile_wrappers(conv, cflags, api_header())
    results = H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 4, 1), wrap=wrap)
    H.assert_bit_exact(results)
    fast_bytes = conv.manifest["runtime"]["fast_memory"]["fast_bytes"]
    for key, result in results.items():
        calls = len(H.operand_records(result.operand_log)) // (2 * 4)  # 2 operands, 4 samples
        assert calls == 5, key
        assert operands_outside(result.operand_log, fast_bytes) == [], key


def _activations(tmp_path) -> Path:
    """x [1,12,10,8] -> LEAKY_RELU -> PRELU (a slope per channel) -> LOGISTIC -> TANH -> ABS
    (fallback C, a 256-entry table) -> RELU6 -> y: the per-element kernels, each reading the
    rows it writes; in fx16 the ABS between two inserted conversions."""
    shape = [1, 12, 10, 8]
    alpha = np.arange(-40, 40, 10, dtype=np.int8).reshape(1, 1, 8)
    tensors = [
        T(shape, scale=[0.05], zero_point=[3], name="x"),
        T(shape, scale=[0.04], zero_point=[-20], name="a"),
        T([1, 1, 8], scale=[0.01], zero_point=[0], name="alpha", data=alpha),
        T(shape, scale=[0.04], zero_point=[-10], name="b"),
        T(shape, scale=[1 / 256], zero_point=[-128], name="c"),
        T(shape, scale=[1 / 128], zero_point=[0], name="d"),
        T(shape, scale=[1 / 128], zero_point=[-128], name="e"),
        T(shape, scale=[1 / 128], zero_point=[-128], name="y"),
    ]
    ops = [
        ("LEAKY_RELU", [0], [1], options("LeakyReluOptions", alpha=0.2)),
        ("PRELU", [1, 2], [3], None),
        ("LOGISTIC", [3], [4], None),
        ("TANH", [4], [5], None),
        ("ABS", [5], [6], None),
        ("RELU6", [6], [7], None),
    ]
    path = tmp_path / "acts.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [7]))
    return path


@pytest.mark.parametrize(
    "fmt,tiles",
    [
        # 960-byte rows of 80: the sigm and tanh tables (640 + 688 bytes) leave 672 bytes for a
        # layer's staged rows; ABS's 256-byte table leaves room for 2 rows in and 2 out
        ("sa8", [3, 3, 3, 3, 6, 3]),
        # 160-byte rows: 2 rows in and 2 out, not 3; the conversions around ABS (160 + 80
        # bytes a row) and ABS itself (80 + 80 and its table) not 3 either
        ("fx16", [6] * 8),
    ],
)
def test_per_element_activations_in_row_tiles(fmt, tiles, mli_builds, tmp_path):
    path = _activations(tmp_path)
    conv = _check_case(path, fmt, 2000, mli_builds, tmp_path / "out")
    assert [la["tiles"] for la in conv.manifest["runtime"]["fast_memory"]["layers"]] == tiles


def test_plans_with_a_slow_arena_move_activations():
    """The cases above that claim a slow arena have one (else they would test nothing new)."""
    from mlitool.mli.kernels import LUT_LENGTHS, luts_of
    from mlitool.mli.memory.placement import plan_fast_memory
    from mlitool.pipeline import ModelOptions, load, settle

    _, model = load(SAMPLES / "cnn_int8.tflite", settle(ModelOptions()))
    luts = [k for k in LUT_LENGTHS if any(k in luts_of(la.kind) for la in model.layers)]
    plan = plan_fast_memory(model, 24 * K, luts)
    # 24 KB cannot hold conv1's 32x32x16 output (16384 bytes) resident next to the 4096-byte
    # activations after it: it and three of those go to the slow arena (one at a time, 16384
    # bytes). Fast: maxpool's output resident (4096) + the largest staging, layer 0's weights,
    # bias and output (432 + 64 + 16384) + the softmax table (358 int16, 716 bytes, 4-aligned).
    assert sorted(p.buffer.size for p in plan.slow.placements) == [4096, 4096, 4096, 16384]
    assert plan.slow_bytes == 16384
    assert plan.staging_bytes == 432 + 64 + 16384
    assert plan.fast_bytes == 4096 + 432 + 64 + 16384 + 716 <= 24 * K


def _sabotaged(conv: H.Converted) -> None:
    """Layer 0 as an emitter that forgot to stage the weights would write it: no copy, the
    kernel (and the check) given the weights where they are, in slow memory."""
    path = conv.out / f"{conv.name}.c"
    text = path.read_text()
    start, end = text.index("/* 0: "), text.index("/* 1: ")
    layer = text[start:end]
    stage = re.search(r"    status = \w+_stage_constant\(&(\w+), 0u.*?\n(.*?\n){3}", layer)
    layer = layer.replace(stage.group(0), "")
    layer = re.sub(r"&\w+_stage\[0\]", "&" + stage.group(1), layer)
    path.write_text(text[:start] + layer + text[end:])


def test_check_operands_refuses_a_weight_in_slow_memory(mli_builds, tmp_path):
    cflags = mli_cflags("2.0")
    conv, check = _prepare(SAMPLES / "cnn_int8.tflite", 32 * K, tmp_path, cflags)
    _sabotaged(conv)
    objs = H.compile_objects(conv, [*cflags, check])
    build = mli_builds[("UP", "OFF")]
    exe = H.link(objs, build, tmp_path / "net")
    n = H.write_inputs(conv.model, H.random_inputs(conv.model, 1, 0), tmp_path / "in.bin")
    r = H.subprocess.run(
        [str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin"), str(n)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 3
    # MLI_STATUS_BAD_TENSOR (1) before layer 0 finished
    assert "status 1 in the layer after 4294967295" in r.stderr


def test_wrappers_see_a_weight_in_slow_memory(mli_builds, tmp_path):
    cflags = mli_cflags("2.0")
    conv, _ = _prepare(SAMPLES / "cnn_int8.tflite", 32 * K, tmp_path, cflags)
    _sabotaged(conv)
    objs = H.compile_objects(conv, cflags)  # no CHECK_OPERANDS: the kernel runs
    wrap = H.compile_wrappers(conv, cflags, api_header())
    build = {("UP", "OFF"): mli_builds[("UP", "OFF")]}
    inputs = H.random_inputs(conv.model, 1, 0)
    result = H.check(conv, objs, build, inputs, wrap=wrap)[("UP", "OFF")]
    assert result.differing == 0  # same values, wrong memory
    outside = operands_outside(
        result.operand_log, conv.manifest["runtime"]["fast_memory"]["fast_bytes"]
    )
    weights = conv.model.tensors[conv.model.layers[0].weights]
    assert [(r[0], r[1], r[3]) for r in outside] == [
        (conv.model.layers[0].kernel, 1, weights.nbytes)
    ]


def test_no_plan_without_the_option_and_unchanged_samples(tmp_path):
    """Without --fast-memory the runtime is the one-arena one (no fast-memory names)."""
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "sa8", tmp_path)
    assert "fast_memory" not in conv.manifest["runtime"]
    assert "FAST_BYTES" not in (tmp_path / "net.h").read_text()
    assert np.asarray(conv.manifest["runtime"]["arena"]["bytes"]) > 0
