"""Usage errors in our words (issue 25): a bad choice names the choices and, for a word people
use, the one they mean; an unknown option gets the closest of the command's own options; no
validator wording ("Value error, ...", "Input should be ...")."""

from __future__ import annotations

import pytest

from tests.support.cli import run_main
from tests.support.paths import SAMPLES

CNN = SAMPLES / "cnn_int8.tflite"


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ["convert", CNN, "--format", "int8"],
            "--format: 'int8' is not a format (sa8, fx16, fx8w16d, fx8); an int8 model converts "
            "with sa8 (see mlitool convert --help)",
        ),
        (
            ["report", CNN, "-f", "INT16"],
            "--format: 'INT16' is not a format (sa8, fx16, fx8w16d, fx8); a 16x8 model converts "
            "with fx16 or fx8w16d (see mlitool report --help)",
        ),
        (
            ["convert", CNN, "-f", "fx61"],
            "--format: 'fx61' is not a format (sa8, fx16, fx8w16d, fx8); did you mean fx16? "
            "(see mlitool convert --help)",
        ),
        (
            ["report", CNN, "--mli", "3.0"],
            "--mli: '3.0' is not an MLI version (2.0, 1.1, 1.0) (see mlitool report --help)",
        ),
        (
            ["run", CNN, "-i", "x.npy", "--mode", "fast"],
            "--mode: 'fast' is not a mode (mli, tflite, float) (see mlitool run --help)",
        ),
        (
            ["convert", CNN, "--align", "abc"],
            "--align: 'abc' is not an integer (see mlitool convert --help)",
        ),
        (
            ["verify", CNN, "--min-snr", "high"],
            "--min-snr: 'high' is not a number (see mlitool verify --help)",
        ),
        (
            ["convert", CNN, "--fromat", "sa8"],
            "no such option --fromat; did you mean --format? (see mlitool convert --help)",
        ),
        (
            ["report", CNN, "--jsno"],
            "no such option --jsno; did you mean --json? (see mlitool report --help)",
        ),
        (["inspect", CNN, "--zzz"], "no such option --zzz (see mlitool inspect --help)"),
    ],
)
def test_usage_error_line(args, line, capsys):
    code, out, err = run_main(args, capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"mlitool: error: {line}"]
