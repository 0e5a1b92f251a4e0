"""--jobs N gives exactly what --jobs 1 gives (run, verify, report), and long commands show a
progress bar on a terminal only."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from rich.console import Console

from mlitool.errors import OptionError
from mlitool.pipeline import ModelOptions
from mlitool.plumbing.progress import RichProgress
from mlitool.verify.command import VerifyOptions, verify
from tests.support.cli import run_main
from tests.support.paths import SAMPLES

CNN = SAMPLES / "cnn_int8.tflite"


def test_verify_and_report_are_identical_with_any_number_of_jobs(capsys):
    docs = {}
    for jobs in (1, 2, 3):
        code, out, err = run_main(["verify", CNN, "-n", 40, "--jobs", jobs, "--json"], capsys)
        assert code == 0, err
        docs[jobs] = out
    assert docs[1] == docs[2] == docs[3] and json.loads(docs[1])["inputs"]["samples"] == 40
    reports = [
        run_main(["report", CNN, "-n", 20, "-j", jobs, "--json"], capsys)[1] for jobs in (1, 2)
    ]
    assert reports[0] == reports[1]


def test_run_is_identical_with_any_number_of_jobs(tmp_path, capsys):
    x = np.random.default_rng(7).integers(-128, 128, (37, 32, 32, 3), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    files = {}
    for jobs in (1, 2):
        for mode in ("mli", "tflite"):
            out = tmp_path / f"{mode}{jobs}.npz"
            code, _, err = run_main(
                [
                    "run",
                    CNN,
                    "-i",
                    tmp_path / "x.npy",
                    "--mode",
                    mode,
                    "-j",
                    jobs,
                    "--npz",
                    out,
                    "--dump-layers",
                ],
                capsys,
            )
            assert code == 0, err
            files[mode, jobs] = dict(np.load(out))
    for mode in ("mli", "tflite"):
        a, b = files[mode, 1], files[mode, 2]
        assert list(a) == list(b) and all(np.array_equal(a[k], b[k]) for k in a)
        assert a["Identity"].shape == (37, 1, 10)


def test_jobs_must_be_positive(capsys):
    code, _, err = run_main(["verify", CNN, "-n", 2, "--jobs", 0], capsys)
    assert code == 2 and "--jobs 0" in err


def test_progress_shows_done_total_and_time_on_a_terminal_only(capsys):
    buf = io.StringIO()
    p = RichProgress(Console(file=buf, force_terminal=True, width=100))
    verify(CNN, ModelOptions(), VerifyOptions(samples=40, jobs=1, progress=p))
    p.close()
    text = buf.getvalue()
    assert "verify (samples)" in text and "40/40" in text and "left" in text
    code, _, err = run_main(["verify", CNN, "-n", 40], capsys)  # stderr is not a terminal
    assert code == 0 and "verify (samples)" not in err and "\x1b" not in err


def _graph_of(*shapes):
    from types import SimpleNamespace

    return SimpleNamespace(
        tensors=[SimpleNamespace(shape=list(s), is_constant=False) for s in shapes]
    )


def test_batches_shrink_for_large_activations():
    from mlitool.plumbing.parallel import BATCH_ELEMENTS, MAX_BATCH, batch_size

    assert batch_size(_graph_of([1, 32, 32, 8], [1, 10])) == MAX_BATCH
    # Four tensors of 112x112x96 per sample: 4,816,896 elements, so 6 samples fit in 32 M.
    assert batch_size(_graph_of(*[[1, 112, 112, 96]] * 4)) == BATCH_ELEMENTS // 4_816_896 == 6
    assert batch_size(_graph_of([1, 4000, 4000, 3])) == 1  # never 0
    assert batch_size(_graph_of([1, 4000, 4000, 3]), 3) == 3  # the caller's choice wins
    with pytest.raises(OptionError):
        batch_size(_graph_of([1, 10]), 0)


def test_calibration_is_a_progress_stage(tmp_path):
    from mlitool.convert import EmitOptions, convert

    data = tmp_path / "cal.npy"
    np.save(data, np.random.default_rng(0).uniform(-1, 1, (37, 32, 32, 3)).astype(np.float32))
    buf = io.StringIO()
    p = RichProgress(Console(file=buf, force_terminal=True, width=100))
    convert(
        SAMPLES / "cnn_float.tflite", ModelOptions(calibration=data), EmitOptions(out=tmp_path), p
    )
    p.close()
    assert "calibration (samples)" in buf.getvalue() and "37/37" in buf.getvalue()
