"""PyTorch's MaxPool2d(padding=1) as litert-torch writes it (issue 34): PADV2 filling -inf (an
int8 file: -128) before a VALID MAX_POOL_2D. TFLite runs it, so it is not malformed; the pass
`pool_padding` takes the padding into the pool (MLI ignores padding in its max pooling), so the
float file converts weights-only and calibrated (before: "malformed graph: constant data holds 1
NaN or inf value(s)") and the int8 file converts in fx16 (before: "PADV2 value -128 is not real
zero"); tflite mode equals LiteRT, and the emitted C on the real MLI 2.0.2 library equals mli
mode in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.cli.entry import main
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import ModelOptions, load, read, settle
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

SHAPE = [1, 9, 8, 3]  # odd H: the last window of H reads padding on one side only


def padded_max_pool(path, dtype: str):
    """x [1,9,8,3] -> PADV2 (1 on each side of H and W, -inf / -128) -> MAX_POOL_2D 3x3 s2
    VALID -> [1,4,4,3]."""
    q = {} if dtype == "float32" else {"scale": [0.05], "zero_point": [-7]}
    fill = np.array(-np.inf if dtype == "float32" else -128, dtype)
    tensors = [
        T(SHAPE, dtype=dtype, name="x", **q),
        T([4, 2], dtype="int32", name="paddings", data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]])),
        T([], dtype=dtype, name="fill", data=fill, **q),
        T([1, 11, 10, 3], dtype=dtype, name="padded", **q),
        T([1, 5, 4, 3], dtype=dtype, name="y", **q),
    ]
    pool = options("Pool2DOptions", padding=1, strideW=2, strideH=2, filterWidth=3, filterHeight=3)
    path.write_bytes(
        graph_model(
            tensors,
            [("PADV2", [0, 1, 2], [3], None), ("MAX_POOL_2D", [3], [4], pool)],
            [0],
            [4],
        )
    )
    return path


def _calibration(tmp_path):
    data = np.random.default_rng(5).uniform(-1, 1, (4, *SHAPE[1:])).astype(np.float32)
    np.save(tmp_path / "calib.npy", data)
    return tmp_path / "calib.npy"


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_tflite_mode_equals_litert(dtype, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = padded_max_pool(tmp_path / "m.tflite", dtype)
    g = read(path).main  # before: malformed (a -inf constant)
    rng = np.random.default_rng(6)
    if dtype == "float32":
        x = rng.uniform(-1, 1, (4, *SHAPE)).astype(np.float32)
    else:
        x = rng.integers(-128, 128, (4, *SHAPE)).astype(np.int8)
    want = run_litert(path, g, {0: x}, [4])[4]
    got = run_graph(g, {0: x}, "tflite")[4]
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.isfinite(want.astype(np.float64)).all()


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("way", ["weights-only", "calibrated", "int8"])
def test_converts_with_the_padding_in_the_pool(way, fmt, tmp_path):
    path = padded_max_pool(tmp_path / "m.tflite", "int8" if way == "int8" else "float32")
    opts = ModelOptions(
        format=fmt,
        weights_only=way == "weights-only",
        calibration=_calibration(tmp_path) if way == "calibrated" else None,
    )
    _, model = load(path, settle(opts))
    kinds = [layer.kind for layer in model.layers]
    assert "padding" not in kinds and kinds.count("maxpool") == 1, kinds
    (pool,) = [layer for layer in model.layers if layer.kind == "maxpool"]
    assert (pool.cfg["padding_top"], pool.cfg["padding_bottom"]) == (1, 1)
    assert (pool.cfg["padding_left"], pool.cfg["padding_right"]) == (1, 1)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_the_c_equals_mli_mode(dtype, fmt, mli_builds, tmp_path):
    path = padded_max_pool(tmp_path / "m.tflite", dtype)
    calibration = _calibration(tmp_path) if dtype == "float32" else None
    results = H.run_case(
        path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calibration
    )
    H.assert_bit_exact(results)


def test_int8_mli_mode_equals_litert(tmp_path, capsys):
    """A max pool moves int8 values: sa8 mli mode gives LiteRT's integers exactly."""
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = padded_max_pool(tmp_path / "m.tflite", "int8")
    x = np.random.default_rng(7).integers(-128, 128, (6, *SHAPE)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "-i", str(tmp_path / "x.npy"), "--npz", str(tmp_path / "o.npz")])
    assert exc.value.code == 0, capsys.readouterr().err
    with np.load(tmp_path / "o.npz") as f:
        (got,) = [f[k] for k in f.files]
    want = run_litert(path, read(path).main, {0: x}, [4])[4]
    assert np.array_equal(got.reshape(want.shape), want)
