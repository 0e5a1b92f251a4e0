"""Input and calibration data that cannot be used: exit 2, one line naming the file; non-finite
values are counted and the first one located; no numpy warning reaches the user."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import InputDataError
from tests.cli.test_bad_input import run_main
from tests.support.paths import ROOT

FLOAT_MODEL = ROOT / "samples" / "cnn_float.tflite"
INT8_MODEL = ROOT / "samples" / "cnn_int8.tflite"


def batch(n: int = 3) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, (n, 1, 32, 32, 3)).astype(np.float32)


def error_line(args, capsys) -> str:
    code, out, err = run_main(args, capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err and "Warning" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    "model,mode", [(FLOAT_MODEL, "float"), (INT8_MODEL, "tflite"), (INT8_MODEL, "mli")]
)
def test_run_refuses_nan_and_inf_inputs(tmp_path, capsys, model, mode):
    a = batch()
    a[1, 0, 2, 3, 1] = np.nan
    a[2, 0, 0, 0, 0] = -np.inf
    np.save(tmp_path / "x.npy", a)
    line = error_line(
        [
            "run",
            str(model),
            "--mode",
            mode,
            "--input",
            str(tmp_path / "x.npy"),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
        capsys,
    )
    assert line == (
        f"mlitool: error: {tmp_path / 'x.npy'}: input 't': 2 non-finite value(s) "
        "(NaN or inf), the first nan at sample 1, index (0, 2, 3, 1)"
    )
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize("fill,first", [(np.nan, "nan"), (np.inf, "inf")])
def test_calibration_refuses_non_finite_data(tmp_path, capsys, fill, first):
    a = batch()
    a[0, 0, 5, 6, 2] = fill
    if fill is np.nan:
        a[:] = np.nan  # all-NaN data is refused as well
    np.save(tmp_path / "cal.npy", a)
    line = error_line(
        [
            "convert",
            str(FLOAT_MODEL),
            "--calibration",
            str(tmp_path / "cal.npy"),
            "--out",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    count, where = (
        (a.size, "sample 0, index (0, 0, 0, 0)")
        if fill is np.nan
        else (1, "sample 0, index (0, 5, 6, 2)")
    )
    assert line == (
        f"mlitool: error: {tmp_path / 'cal.npy'}: input 't': {count} non-finite "
        f"value(s) (NaN or inf), the first {first} at {where}"
    )
    assert not (tmp_path / "out").exists()


def test_collect_ranges_refuses_nan_reached_through_the_api():
    from mlitool.calibrate import collect_ranges
    from mlitool.tflite.reader import read_model

    graph = read_model(FLOAT_MODEL).main
    data = np.full((2, 1, 32, 32, 3), np.nan, np.float32)
    with pytest.raises(InputDataError, match="calibration: tensor 't' reaches non-finite values"):
        collect_ranges(graph, data)


def test_input_is_a_directory(tmp_path, capsys):
    line = error_line(["run", str(INT8_MODEL), "--input", str(tmp_path)], capsys)
    assert line == f"mlitool: error: {tmp_path}: is a directory; give a .npy or .npz file"


@pytest.mark.parametrize(
    "name,content",
    [("x.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), ("x.txt", b"1 2 3\n"), ("x.npy", b"")],
)
def test_input_is_not_numpy(tmp_path, capsys, name, content):
    (tmp_path / name).write_bytes(content)
    line = error_line(["run", str(INT8_MODEL), "--input", str(tmp_path / name)], capsys)
    assert line == (
        f"mlitool: error: {tmp_path / name}: is not a .npy or .npz file (no NumPy "
        "or zip signature); save arrays with numpy.save or numpy.savez"
    )


def test_pickled_npy_is_still_refused_as_a_pickle(tmp_path, capsys):
    np.save(tmp_path / "p.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    line = error_line(["run", str(INT8_MODEL), "--input", str(tmp_path / "p.npy")], capsys)
    assert "pickles are refused" in line
