"""PAD on the channel axis (MediaPipe / BlazeFace residual blocks), alone and with spatial
padding: lowered onto MLI 2.x's mli_mov padding, tflite mode equal to LiteRT, and the emitted C on
the real MLI 2.0.2 library bit-exact against the executor in the four builds. MLI 1.x refuses it."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, single_op_model

PADS = {
    "channels": [[0, 0], [0, 0], [0, 0], [0, 5]],
    "channels_both": [[0, 0], [0, 0], [0, 0], [2, 3]],
    "spatial_and_channels": [[0, 0], [1, 0], [0, 2], [1, 1]],
}


def _model(tmp_path, name: str, zero_point: int):
    pads = np.int32(PADS[name])
    shape = [1, 5, 6, 3]
    out = [shape[i] + int(pads[i].sum()) for i in range(4)]
    path = tmp_path / f"pad_{name}_{zero_point}.tflite"
    path.write_bytes(
        single_op_model(
            "PAD",
            [T(shape, scale=[0.05], zero_point=[zero_point]), T([4, 2], dtype="int32", data=pads)],
            [T(out, scale=[0.05], zero_point=[zero_point])],
        )
    )
    return path


@pytest.mark.parametrize("zero_point", [0, -7])
@pytest.mark.parametrize("name", sorted(PADS))
def test_tflite_mode_equals_litert(name, zero_point, tmp_path):
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    assert litert
    path = _model(tmp_path, name, zero_point)
    g = read(path).main
    x = np.random.default_rng(1).integers(-128, 128, (4, 1, 5, 6, 3), dtype=np.int8)
    ours = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
    ref = run_litert(path, g, {g.inputs[0]: x}, [g.outputs[0]])[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)
    assert (ours[..., -1] == zero_point).all() if name == "channels" else True


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("zero_point", [0, -7])
@pytest.mark.parametrize("name", sorted(PADS))
def test_channel_padding_on_the_real_library(name, zero_point, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, zero_point)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_mli1_refuses_channel_padding(tmp_path):
    g = read(_model(tmp_path, "channels", 0)).main
    with pytest.raises(UnsupportedError, match="padding the channel axis needs MLI 2.x"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")
