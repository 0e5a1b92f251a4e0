"""Options that change nothing say so (issue 25): --calibration / --weights-only on an int8
model are a warning line on every command that takes them; report, which has no
--weights-only, does not suggest it."""

from __future__ import annotations

import pytest

from tests.support.cli import run_main
from tests.support.paths import SAMPLES

INT8 = SAMPLES / "cnn_int8.tflite"
CALIB = SAMPLES / "cnn_calib.npy"
IGNORED = "warning: {} ignored: the model's activations are already quantized"


@pytest.mark.parametrize(
    "command",
    [
        ["convert"],
        ["verify", "-n", "2"],
        ["report", "--no-accuracy"],
        ["run", "-i", SAMPLES / "cnn_input_int8.npy"],
    ],
)
def test_calibration_of_an_int8_model_is_a_warning(command, tmp_path, capsys):
    args = [command[0], INT8, *command[1:], "-q", "-o", tmp_path, "--calibration", CALIB]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    assert err.splitlines() == [IGNORED.format("--calibration")]


def test_weights_only_of_an_int8_model_changes_no_byte(tmp_path, capsys):
    plain, flagged = tmp_path / "plain", tmp_path / "flagged"
    assert run_main(["convert", INT8, "-q", "-o", plain], capsys)[0] == 0
    args = ["convert", INT8, "-q", "-o", flagged, "--weights-only", "--calibration", CALIB]
    code, _, err = run_main(args, capsys)
    assert code == 0 and err.splitlines() == [IGNORED.format("--calibration and --weights-only")]
    for suffix in (".h", ".c"):
        name = f"cnn_int8{suffix}"
        assert (flagged / name).read_bytes() == (plain / name).read_bytes()


def test_run_in_tflite_mode_ignores_calibration(tmp_path, capsys):
    args = ["run", INT8, "-i", SAMPLES / "cnn_input_int8.npy", "-m", "tflite", "-q", "-o", tmp_path]
    code, _, err = run_main([*args, "--calibration", CALIB], capsys)
    assert code == 0
    assert err.splitlines() == ["warning: --calibration ignored: --mode tflite runs no MLI model"]


def test_report_on_a_float_model_suggests_calibration_only(capsys):
    code, _, err = run_main(["report", SAMPLES / "cnn_float.tflite", "--no-accuracy"], capsys)
    assert code == 2
    assert err.rstrip().endswith("; give report real inputs to calibrate on (--calibration DATA)")
    assert "--weights-only" not in err
