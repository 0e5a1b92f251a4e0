"""TFLite_Detection_PostProcess (issue 35): the custom op read by its custom code with its
flexbuffer options; float / tflite mode equal LiteRT (fast and regular NMS, one or several classes
per detection, with and without a background class, equal scores); the libstdc++ partial sort
the fast NMS reproduces equals g++'s std::partial_sort; the `detection_postprocess` fallback C
equals the executor on the real MLI 2.0.2 library in the four builds and compiles as C++20."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from flatbuffers import flexbuffers

from mlitool.errors import ModelFormatError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import check_supported, lower
from mlitool.mli.target import target_of
from mlitool.ops.detection.reference import partial_argsort
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.detection_models import defined_rows, detection_model, grid_anchors, options
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags

TIES = np.array([0.25, 0.5, 0.75, 0.9], np.float32)
# Every place twice: the pairs overlap (IoU above 0.5 unless the encodings move them apart), so
# the NMS suppresses boxes.
ANCHORS = np.concatenate([grid_anchors(2, 5)] * 2)
# (name, options, background, equal scores)
CASES = [
    ("fast", dict(), True, False),
    ("fast_ties", dict(), True, True),
    ("fast_two_classes_ties", dict(max_classes_per_detection=2), True, True),
    ("fast_all_classes", dict(max_classes_per_detection=3), False, True),
    ("fast_more_than_classes", dict(max_classes_per_detection=4), True, False),
    ("regular", dict(use_regular_nms=True, detections_per_class=4), True, False),
    ("regular_ties", dict(use_regular_nms=True, detections_per_class=4), True, True),
    ("regular_two", dict(use_regular_nms=True, max_classes_per_detection=2), False, True),
    # fewer boxes above the score threshold than max_detections: counts below it
    ("fast_sparse", dict(nms_score_threshold=0.8, max_detections=10), True, False),
    (
        "fast_sparse_two",
        dict(nms_score_threshold=0.9, max_detections=8, max_classes_per_detection=2),
        True,
        True,
    ),
    (
        "regular_sparse",
        dict(
            use_regular_nms=True, nms_score_threshold=0.8, max_detections=10, detections_per_class=3
        ),
        True,
        False,
    ),
]


def _opts(changes: dict) -> dict:
    base = dict(num_classes=3, max_detections=5, nms_score_threshold=0.2)
    return options(**{**base, **changes})


def _model(tmp_path, name, changes, background):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(detection_model(ANCHORS, _opts(changes), background=background))
    return path


def _inputs(g, n, ties, seed=0):
    rng = np.random.default_rng(seed)
    enc, sc = (g.tensors[i] for i in g.inputs)
    x = rng.uniform(-1, 1, (n, *enc.shape)).astype(np.float32)
    if ties:
        s = rng.choice(TIES, (n, *sc.shape))
    else:
        s = rng.uniform(0, 1, (n, *sc.shape)).astype(np.float32)
    return {g.inputs[0]: x, g.inputs[1]: s}


def test_custom_op_named_by_its_code_with_its_options(tmp_path):
    path = _model(tmp_path, "m", dict(use_regular_nms=True), True)
    op = read(path).main.ops[0]
    assert (op.type, op.custom_code, op.label) == (
        "TFLite_Detection_PostProcess",
        "TFLite_Detection_PostProcess",
        "op 0 (TFLite_Detection_PostProcess)",
    )
    assert flexbuffers.Loads(bytearray(op.custom_options)) == op.options
    assert op.options["use_regular_nms"] is True and op.options["max_detections"] == 5
    assert op.options["nms_iou_threshold"] == 0.5


def test_options_left_out_take_tflite_defaults(tmp_path):
    """detections_per_class 100, use_regular_nms false when the map leaves them out."""
    opts = _opts({})
    del opts["detections_per_class"], opts["use_regular_nms"]
    path = tmp_path / "m.tflite"
    path.write_bytes(detection_model(grid_anchors(4, 5), opts))
    g = read(path).main
    xs = _inputs(g, 6, False)
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite")
    for s, n in enumerate(ref[g.outputs[3]][:, 0].astype(int)):
        rows = defined_rows(opts, n)
        for o in g.outputs[:3]:
            np.testing.assert_array_equal(ours[o][s, 0][rows], ref[o][s, 0][rows])


def test_options_not_a_flexbuffer_leave_an_unknown_custom_op(tmp_path):
    good = detection_model(grid_anchors(2, 3), options())
    opts = bytes(flexbuffers.Dumps(options()))
    path = tmp_path / "bad.tflite"
    path.write_bytes(good.replace(opts, b"\xff" * len(opts)))
    model = read(path)
    assert model.main.ops[0].type == "CUSTOM"
    assert any("not a flexbuffer" in w for w in model.warnings), model.warnings


def test_a_missing_option_is_malformed(tmp_path):
    opts = options()
    del opts["y_scale"]
    path = tmp_path / "m.tflite"
    path.write_bytes(detection_model(grid_anchors(2, 3), opts))
    with pytest.raises(ModelFormatError, match="custom option 'y_scale' is missing"):
        read(path)


def test_negative_anchor_sizes_are_refused(tmp_path):
    anchors = grid_anchors(2, 3)
    anchors[4, 2] = -0.1
    path = tmp_path / "m.tflite"
    path.write_bytes(detection_model(anchors, options()))
    g = read(path).main
    with pytest.raises(Exception, match="negative height or width"):
        check_supported(g, target_of("2.0"), "hwc")


@pytest.mark.parametrize("name, changes, background, ties", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["float", "tflite"])
def test_equals_litert(tmp_path, name, changes, background, ties, mode):
    """Every row LiteRT writes, and the count; mlitool writes zeros in the others."""
    path = _model(tmp_path, name, changes, background)
    g = read(path).main
    xs = _inputs(g, 12, ties)
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, mode)
    opts = _opts(changes)
    counts = ref[g.outputs[3]][:, 0]
    np.testing.assert_array_equal(ours[g.outputs[3]][:, 0], counts)
    assert counts.min() >= 1 and counts.max() <= opts["max_detections"]
    for s, count in enumerate(counts.astype(int)):
        rows = defined_rows(opts, count)
        for o in g.outputs[:3]:
            np.testing.assert_array_equal(ours[o][s, 0][rows], ref[o][s, 0][rows])
            assert not np.any(ours[o][s, 0][~rows])


PARTIAL_SORT = r"""
#include <algorithm>
#include <cstdio>
#include <numeric>
int main() {
    int n, k;
    while (std::scanf("%d %d", &n, &k) == 2) {
        float v[64];
        int idx[64];
        for (int i = 0; i < n; i++) std::scanf("%f", &v[i]);
        std::iota(idx, idx + n, 0);
        std::partial_sort(idx, idx + k, idx + n, [&](int i, int j) { return v[i] > v[j]; });
        for (int i = 0; i < k; i++) std::printf("%d ", idx[i]);
        std::printf("\n");
    }
    return 0;
}
"""


def test_partial_sort_is_libstdcxx(tmp_path):
    """LiteRT's DecreasingPartialArgSort sorts with std::partial_sort and no tie-break: with
    equal scores the order is the library's. Against g++'s libstdc++ on arrays full of ties."""
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    src, exe = tmp_path / "ps.cc", tmp_path / "ps"
    src.write_text(PARTIAL_SORT)
    subprocess.run(["g++", "-O1", "-std=c++17", str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(300):
        n = int(rng.integers(2, 40))
        k = int(rng.integers(2, n + 1))
        cases.append((k, rng.choice(TIES[: int(rng.integers(1, 5))], n)))
    text = "".join(f"{len(v)} {k} {' '.join(map(str, v))}\n" for k, v in cases)
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    for (k, v), line in zip(cases, out.stdout.splitlines(), strict=True):
        assert partial_argsort(v, len(v), k)[:k] == [int(t) for t in line.split()]


C_CASES = [
    "fast_ties",
    "fast_two_classes_ties",
    "regular_ties",
    "regular_two",
    "fast_sparse_two",
    "regular_sparse",
]


@pytest.mark.parametrize("name", C_CASES)
def test_c_on_the_real_library(name, mli_builds, tmp_path):
    """The emitted C equals the mli executor, which equals tflite mode, in the four builds."""
    _, changes, background, ties = next(c for c in CASES if c[0] == name)
    path = _model(tmp_path, name, changes, background)
    conv = H.convert(path, "sa8", tmp_path / "out")
    g = conv.graph
    xs = _inputs(g, 10, ties, seed=5)
    names = conv.model.inputs
    assert [conv.model.tensor(n).source_index for n in names] == list(g.inputs)
    inputs = {n: xs[i].reshape(10, *conv.model.tensor(n).shape) for n, i in zip(names, g.inputs)}
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))
    # ... and the executor's outputs are tflite mode's
    values = H.executor_values(conv.model, inputs, H.ARITH[("UP", "OFF")])
    ref = run_graph(g, xs, "tflite")
    for o, name_out in zip(g.outputs, conv.model.outputs):
        np.testing.assert_array_equal(values[name_out].reshape(ref[o].shape), ref[o])


def test_c_compiles_as_cxx(tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(_model(tmp_path, "m", {}, True), "sa8", tmp_path / "out")
    src = conv.out / "net.c"
    assert "net_detection_postprocess(" in src.read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd = [*cxx, *mli_cflags("2.0"), "-I", str(conv.out), "-c", str(src)]
    r = subprocess.run([*cmd, "-o", str(conv.out / "x.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_layers(tmp_path):
    """One fallback layer writing the outputs and its working memory, one view layer showing
    the four outputs in it; the float32 inputs stay FP32 (no quantization)."""
    g = read(_model(tmp_path, "m", {}, True)).main
    m = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    assert [(la.kind, la.kernel) for la in m.layers] == [
        ("fallback", "mlitool_detection_postprocess"),
        ("view", ""),
    ]
    assert {m.tensor(n).el_type.name for n in m.inputs + m.outputs} == {"FP32"}
    packed = m.tensor(m.layers[0].outputs[0])
    offsets = [m.tensor(n).offset for n in m.outputs]
    assert offsets == [0, 20, 25, 30] and all(m.tensor(n).buffer == packed.name for n in m.outputs)


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", ["fast_two_classes_ties", "regular_ties"])
def test_fast_memory(name, budget, mli_builds, tmp_path):
    """`convert --fast-memory`: outputs bit-exact against the executor in the four builds, at a
    budget that holds the whole model and at the least it fits (-DNAME_CHECK_OPERANDS)."""
    from tests.support.fast_memory import least_budget, macro

    _, changes, background, ties = next(c for c in CASES if c[0] == name)
    path = _model(tmp_path, name, changes, background)
    if budget == "least":
        budget = least_budget(H.convert(path, "sa8", tmp_path / "plain").model)
    conv = H.convert(path, "sa8", tmp_path / "out", fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    assert macro(conv, fm["macros"]["fast_bytes"]) == fm["fast_bytes"] <= budget
    check = f"-D{fm['macros']['check_operands']}"
    objs = H.compile_objects(conv, [*mli_cflags("2.0"), check])
    g = conv.graph
    xs = _inputs(g, 6, ties, seed=2)
    inputs = {
        n: xs[i].reshape(6, *conv.model.tensor(n).shape)
        for n, i in zip(conv.model.inputs, g.inputs)
    }
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))


def test_int8_model_dequantize_then_detection(mli_builds, tmp_path):
    """An int8 SSD's tail (DEQUANTIZE of int8 boxes and scores, then the op): tflite mode equals
    LiteRT, the DEQUANTIZEs become converts to FP32, and the C equals the executor."""
    from tests.support.detection_models import int8_detection_model

    opts = _opts(dict(use_regular_nms=True, detections_per_class=3))
    path = tmp_path / "int8.tflite"
    path.write_bytes(int8_detection_model(grid_anchors(4, 5), opts))
    g = read(path).main
    rng = np.random.default_rng(4)
    xs = {i: rng.integers(-128, 128, (8, *g.tensors[i].shape)).astype(np.int8) for i in g.inputs}
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite")
    count = g.outputs[3]
    np.testing.assert_array_equal(ours[count], ref[count])
    for o in g.outputs[:3]:
        np.testing.assert_array_equal(ours[o], ref[o])  # regular NMS writes every row
    conv = H.convert(path, "sa8", tmp_path / "out")
    assert [la.kind for la in conv.model.layers] == ["convert", "convert", "fallback", "view"]
    inputs = {
        n: xs[i].reshape(8, *conv.model.tensor(n).shape)
        for n, i in zip(conv.model.inputs, g.inputs)
    }
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))
    values = H.executor_values(conv.model, inputs, H.ARITH[("UP", "OFF")])
    for o, name in zip(g.outputs, conv.model.outputs):
        np.testing.assert_array_equal(values[name].reshape(ref[o].shape), ref[o])
