"""Element-wise ops between activations that broadcast (squeeze-and-excite `[1,1,1,C] x
[1,H,W,C]`, per-row, per-pixel scalars, both operands broadcasting, a rank-1 operand): lowered as
one kernel call per slice, tflite mode equal to LiteRT, and the emitted loop on the real MLI 2.0.2
library bit-exact against the executor in the four builds."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from mlitool.convert import EmitOptions, convert
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import ModelOptions, read
from tests.emit.test_emit_cxx import CXX
from tests.emit.test_kernel_calls import _calls_in_c
from tests.support import runtime_harness as H
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, options, single_op_model

# name: (op, shape a, shape b, output shape, kernel calls, elements per call, looped output
# dimensions of the MLI tensors (the batch dropped)): the calls run over the leading dimensions
# or, where fewer, over the trailing ones (one call per channel over a strided view of its pixels)
CASES = {
    "se_channel_scale": ("MUL", [1, 4, 5, 6], [1, 1, 1, 6], [1, 4, 5, 6], 6, 20, (2,)),
    "se_channel_scale_first": ("MUL", [1, 1, 1, 6], [1, 4, 5, 6], [1, 4, 5, 6], 6, 20, (2,)),
    "se_mobilenet_v3": ("MUL", [1, 24, 24, 16], [1, 1, 1, 16], [1, 24, 24, 16], 16, 576, (2,)),
    "per_row": ("ADD", [1, 4, 5, 6], [1, 4, 1, 6], [1, 4, 5, 6], 20, 6, (0, 1)),
    "per_pixel_scalar": ("SUB", [1, 4, 5, 6], [1, 4, 5, 1], [1, 4, 5, 6], 6, 20, (2,)),
    "per_pixel_many": ("SUB", [1, 4, 5, 40], [1, 4, 5, 1], [1, 4, 5, 40], 20, 40, (0, 1)),
    "per_column_block": ("ADD", [1, 1, 5, 6], [1, 4, 5, 6], [1, 4, 5, 6], 4, 30, (0,)),
    "both_broadcast": ("MAXIMUM", [1, 4, 1, 6], [1, 1, 5, 6], [1, 4, 5, 6], 20, 6, (0, 1)),
    "two_trailing_loops": ("MUL", [1, 16, 2, 3], [1, 1, 2, 3], [1, 16, 2, 3], 6, 16, (1, 2)),
    "rank1_bias": ("SUB", [1, 2, 12, 16], [16], [1, 2, 12, 16], 16, 24, (2,)),
    "ranks_differ": ("ADD", [1, 1, 6], [6], [1, 1, 6], 1, 6, ()),  # one call, views of equal rank
}
OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}


def _model(tmp_path, name: str):
    op, a, b, out, *_ = CASES[name]
    path = tmp_path / f"{name}.tflite"
    opts = options(OPTIONS[op]) if op in OPTIONS else None
    path.write_bytes(
        single_op_model(
            op,
            [
                T(a, scale=[0.05], zero_point=[3]),
                T(
                    b,
                    scale=[0.08] if op != "MAXIMUM" else [0.05],
                    zero_point=[-5] if op != "MAXIMUM" else [3],
                ),
            ],
            [T(out, scale=[0.1], zero_point=[-2])],
            opts,
        )
    )
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_as_one_call_per_slice(name, tmp_path):
    g = read(_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = [la for la in model.layers if la.calls]
    *_, calls, size, loops = CASES[name]
    out = model.tensor(layer.outputs[0])
    assert layer.calls.loops == loops
    assert int(np.prod([out.shape[d] for d in loops])) == calls == layer.calls.count(out.shape)
    assert model.tensor(layer.calls.views[-1]).size == size
    assert f"{calls} kernel calls" in " ".join(layer.notes)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_mode_equals_litert(name, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = _model(tmp_path, name)
    g = read(path).main
    rng = np.random.default_rng(2)
    xs = {
        i: rng.integers(-128, 128, (3,) + tuple(g.tensors[i].shape), dtype=np.int8)
        for i in g.inputs
    }
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    ref = run_litert(path, g, xs, [g.outputs[0]])[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_broadcast_on_the_real_library(name, fmt, mli_builds, tmp_path):
    H.assert_bit_exact(
        H.run_case(_model(tmp_path, name), fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"))
    )


def test_mli_mode_follows_tflite_mode(tmp_path):
    """The sliced calls compute the broadcast op: within 1 LSB of TFLite's arithmetic."""
    from mlitool.execute.mli.bridge import run_mli
    from mlitool.execute.mli.presets import arith_for

    path = _model(tmp_path, "se_channel_scale")
    g = read(path).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    rng = np.random.default_rng(3)
    xs = {
        i: rng.integers(-128, 128, (8,) + tuple(g.tensors[i].shape), dtype=np.int8)
        for i in g.inputs
    }
    ref = run_graph(g, xs, "tflite")[g.outputs[0]].astype(np.int32)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    diff = np.abs(np.asarray(ours[g.outputs[0]], np.int32) - ref)
    assert diff.max() <= 1 and (diff == 0).mean() > 0.5


def test_mli1_refuses_activation_broadcast(tmp_path):
    g = read(_model(tmp_path, "se_channel_scale")).main
    with pytest.raises(UnsupportedError, match="done for MLI 2.x only"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_per_channel_loop_is_cxx_and_its_calls_are_the_manifests(fmt, tmp_path):
    """The squeeze-excite MUL [1,24,24,16] x [1,1,1,16] runs 16 calls (one per channel, over a
    [576, 1] view with mem_stride [16, 1]), not 576 over 16 elements: NAME_run's loop has that
    bound, the manifest says so, and the emitted C compiles as C++20 with -Werror -pedantic."""
    convert(
        _model(tmp_path, "se_mobilenet_v3"),
        ModelOptions(format=fmt, mli="2.0"),
        EmitOptions(out=tmp_path, name="net"),
    )
    manifest = json.loads((tmp_path / "net.json").read_text())
    (layer,) = manifest["layers"]
    assert _calls_in_c((tmp_path / "net.c").read_text(), "net") == {0: 16}
    assert layer["kernel_calls"] == manifest["kernel_calls_per_inference"] == 16
    assert layer["slice_calls"]["looped"] == [2]
    views = {t["c_name"]: t for t in manifest["tensors"]}
    in0, scalar, out = (views[v] for v in layer["slice_calls"]["views"])
    assert [(t["shape"], t["mem_stride"]) for t in (in0, scalar, out)] == [
        ([576, 1], [16, 1]),
        ([1], [1]),
        ([576, 1], [16, 1]),
    ]
    cmd = CXX + [*mli_cflags("2.0"), "-I", str(tmp_path), "-c", "net.c", "-o", "net.o"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[:4000]


def test_keras_mobilenet_v3_small_on_the_real_library(mli_builds, tmp_path):
    """Keras MobileNetV3-Small (tests/corpus): its squeeze-excite MULs loop over channels (the
    first) and over pixels (the rest), every layer bit-exact against the executor on MLI 2.0.2
    in the four builds."""
    path = ROOT / "tests" / "corpus" / "mobilenet_v3_small_int8.tflite"
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
