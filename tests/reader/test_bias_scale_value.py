"""A FULLY_CONNECTED whose int32 bias scale is not input x weight scale (PT2E after an eval-mode
Dropout writes 0.138 x that product; issue 34): TFLite's kernels add the raw int32 in units of
input x weight scale, so mlitool reads it so (`mlitool.passes.bias_scale`), with one warning:
the file converts in sa8 (before: "bias scale ... does not fit a positive int16") and fx16, and
mli mode equals LiteRT's integers to one output step in both (before, fx16 took the stored scale
and was off by the bias times 0.862)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.cli.entry import main
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import bias_models as B


def _run(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert exc.value.code == 0, err
    return err


def test_the_bias_takes_input_times_weight_scale_with_one_warning(tmp_path):
    model = read(B.dropout_bias_fc(tmp_path / "fc.tflite"))
    bias = model.main.tensors[2]
    assert bias.quant.scale.tolist() == [
        float(np.float32(B.FC_IN_SCALE) * np.float32(B.FC_W_SCALE))
    ]
    assert model.warnings == [
        "1 op(s) store an int32 bias scale of 0.138 x input x weight scale (op 0 "
        "(FULLY_CONNECTED)): read as TFLite's kernels read it, the raw int32 at input x weight "
        "scale"
    ]


def test_tflite_mode_equals_litert(tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = B.dropout_bias_fc(tmp_path / "fc.tflite")
    g = read(path).main
    x = np.random.default_rng(3).integers(-128, 128, (16, 1, 16), dtype=np.int8)
    want = run_litert(path, g, {0: x}, [3])[3]
    assert np.array_equal(run_graph(g, {0: x}, "tflite")[3], want)
    assert np.mean((want > -128) & (want < 127)) > 0.8  # mostly not saturated


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_converts_and_mli_mode_equals_litert(fmt, tmp_path, capsys):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = B.dropout_bias_fc(tmp_path / "fc.tflite")
    err = _run(["convert", path, "-o", tmp_path / "out", "--format", fmt, "-q"], capsys)
    g = read(path).main
    x = np.random.default_rng(4).integers(-128, 128, (16, 1, 16), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    npz = tmp_path / "mli.npz"
    _run(["run", path, "-i", tmp_path / "x.npy", "--format", fmt, "--npz", npz, "-q"], capsys)
    with np.load(npz) as f:
        (got,) = [f[k] for k in f.files]
    want = run_litert(path, g, {0: x}, [3])[3].astype(np.float64)
    real = (want.reshape(got.shape) - 2) * B.FC_OUT_SCALE  # LiteRT's output as real values
    got_real = got.astype(np.float64)
    if got.dtype.kind in "iu":  # sa8 keeps the model's int8 output
        got_real = (got_real - 2) * B.FC_OUT_SCALE
    np.testing.assert_allclose(got_real, real, atol=B.FC_OUT_SCALE * 1.01)
    assert err.count("store an int32 bias scale") == 1


def test_a_zero_bias_at_another_scale_is_left_alone(tmp_path):
    """A zero bias is zero at any scale (TF's 16x8 converter stores such scales): no warning,
    the file's scale kept."""
    path = B.dropout_bias_fc(tmp_path / "fc.tflite", bias=np.zeros(8, np.int32))
    model = read(path)
    assert model.warnings == []
    prod = float(np.float32(B.FC_IN_SCALE) * np.float32(B.FC_W_SCALE))
    assert model.main.tensors[2].quant.scale.tolist() == [float(np.float32(B.DROPOUT_RATIO * prod))]
