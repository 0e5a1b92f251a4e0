"""Outputs that cannot be written: exit 5, one line with the path and the operating system's
message, nothing partial, no temporary file left; temporaries of a killed run are removed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from tests.cli.test_bad_input import run_main
from tests.support.paths import ROOT

MODEL = ROOT / "samples" / "fc_int8.tflite"


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_out_below_a_file(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub"
    code, _, err = run_main(["convert", str(MODEL), "--out", str(out)], capsys)
    assert code == 5
    assert one_error_line(err) == (
        f"mlitool: error: {out}: cannot create the directory: Not a directory"
    )


def test_out_under_proc(tmp_path, capsys):
    code, _, err = run_main(["convert", str(MODEL), "--out", "/proc/mlitool-test/sub"], capsys)
    assert code == 5
    assert one_error_line(err) == (
        "mlitool: error: /proc/mlitool-test/sub: cannot create the "
        "directory: No such file or directory"
    )


def test_run_output_is_a_directory(tmp_path, capsys):
    np.save(tmp_path / "in.npy", np.zeros((2, 1, 64), np.float32))
    target = tmp_path / "X.npz"
    target.mkdir()
    code, _, err = run_main(
        [
            "run",
            str(MODEL),
            "--mode",
            "tflite",
            "--input",
            str(tmp_path / "in.npy"),
            "--npz",
            str(target),
        ],
        capsys,
    )
    assert code == 5
    assert one_error_line(err) == f"mlitool: error: {target}: cannot write: Is a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npz", "in.npy"]
    assert not any(target.iterdir())


def test_file_size_limit_leaves_nothing(tmp_path):
    """A real write failure (RLIMIT_FSIZE: EFBIG, as a full disk gives ENOSPC) in a subprocess:
    exit 5 with the OS message, no output file and no temporary file; earlier outputs stay."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "fc_int8.h").write_text("earlier\n")
    script = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))\n"
        "from mlitool.cli.entry import main\n"
        "main(sys.argv[1:])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "convert", str(MODEL), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 5, proc.stderr
    line = one_error_line(proc.stderr)
    assert line.startswith(f"mlitool: error: {out}/fc_int8.") and line.endswith(
        ": cannot write: File too large"
    ), line
    assert sorted(p.name for p in out.iterdir()) == ["fc_int8.h"]
    assert (out / "fc_int8.h").read_text() == "earlier\n"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporaries_of_a_killed_run_are_removed(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    stale = [out / f".fc_int8.c.{_dead_pid()}.k3j2.tmp", out / f".fc_int8.json.{_dead_pid()}.x.tmp"]
    live = out / f".fc_int8.c.{os.getpid()}.abcd.tmp"  # a run still writing: kept
    other = out / f".other.c.{_dead_pid()}.abcd.tmp"  # not a file this run writes: kept
    for p in stale + [live, other]:
        p.write_bytes(b"partial")
    code, _, err = run_main(["convert", str(MODEL), "--out", str(out)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["fc_int8.c", "fc_int8.h", "fc_int8.json", live.name, other.name]
    )


def test_killed_convert_leaves_no_partial_file_and_the_next_run_cleans_up(tmp_path):
    """SIGKILL a real convert while it writes, then convert again: only complete outputs."""
    out = tmp_path / "out"
    model = ROOT / "samples" / "cnn_int8.tflite"
    script = (
        "import os, signal, sys\n"
        "import mlitool.plumbing.fsio as fsio\n"
        "def killed(fd):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "fsio._Fsync = killed\n"
        "from mlitool.cli.entry import main\n"
        "main(sys.argv[1:])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "convert", str(model), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr
    left = sorted(p.name for p in out.iterdir())
    assert len(left) == 1 and left[0].startswith(".cnn_int8.") and left[0].endswith(".tmp")
    proc = subprocess.run(
        [sys.executable, "-m", "mlitool", "convert", str(model), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["cnn_int8.c", "cnn_int8.h", "cnn_int8.json"]
