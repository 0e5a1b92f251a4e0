"""Calibration is reproducible across machines: the same ranges and the same emitted bytes under
every BLAS kernel OpenBLAS picks (emulated with OPENBLAS_CORETYPE, in subprocesses: the kernel is
chosen when the library loads), with numpy's AVX2 loops (exp, tanh) switched off, whatever the
batch split. (--jobs never splits calibration: it
runs in the main process before any worker starts.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.paths import ROOT, SAMPLES

# OpenBLAS core types and the /proc/cpuinfo flags their kernels need (pni is SSE3). Zen is left
# out: OpenBLAS 0.3 runs it on Haswell's kernels.
CORES = {
    "Prescott": {"pni"},
    "Nehalem": {"ssse3", "sse4_2"},
    "Sandybridge": {"avx"},
    "Haswell": {"avx2", "fma"},
}
# Calibration batch per run: every split differs from the others (12 samples).
BATCHES = [1, 5, 7, 12, 3]

_CHILD = r"""
import ctypes, glob, hashlib, json, os, sys
from pathlib import Path
import numpy as np
from mlitool.calibrate import collect_ranges
from mlitool.convert import EmitOptions, convert
from mlitool.pipeline import ModelOptions
from mlitool.tflite.reader import read_model

model, cal, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
batch = int(sys.argv[4])
libs = glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*"))
core = None
for lib in libs:
    for sym in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
        fn = getattr(ctypes.CDLL(lib), sym, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            core = fn().decode()
            break
graph = read_model(str(model)).main
data = np.load(cal)
ranges = {m: {str(k): v for k, v in collect_ranges(graph, data, m, batch=batch).items()}
          for m in ("minmax", "percentile")}
convert(model, ModelOptions(calibration=cal), EmitOptions(out=out))
files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}
print(json.dumps({"core": core, "ranges": ranges, "files": files}))
"""


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split()}


def _numpy_features() -> dict:
    from numpy._core._multiarray_umath import __cpu_features__

    return __cpu_features__


def _dynamic_openblas() -> bool:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return "openblas" in blas.get("name", "") and "DYNAMIC_ARCH" in blas.get(
        "openblas configuration", ""
    )


def test_calibration_and_emitted_bytes_do_not_depend_on_blas_kernel_or_batch(tmp_path):
    if not _dynamic_openblas():
        pytest.skip("numpy's BLAS is not OpenBLAS built with DYNAMIC_ARCH: no core type to emulate")
    flags = _cpu_flags()
    cores = [c for c, need in CORES.items() if need <= flags]
    if len(cores) < 2:
        pytest.skip(f"this CPU runs fewer than two OpenBLAS core types ({cores})")
    cal = tmp_path / "cal.npy"
    np.save(cal, np.load(SAMPLES / "cnn_calib.npy")[:12])
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
    }
    setups = {core: {"OPENBLAS_CORETYPE": core} for core in cores}
    if _numpy_features().get("X86_V3"):  # numpy's exp / tanh differ without AVX2 + FMA
        setups["no numpy AVX2"] = {"NPY_DISABLE_CPU_FEATURES": "X86_V3"}
    runs = {}
    for (label, extra), batch in zip(setups.items(), BATCHES):
        out = tmp_path / label.replace(" ", "_")
        args = [
            sys.executable,
            "-c",
            _CHILD,
            str(SAMPLES / "cnn_float.tflite"),
            str(cal),
            str(out),
            str(batch),
        ]
        done = subprocess.run(
            args, cwd=ROOT, env={**env, **extra}, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{label}: {done.stderr[-3000:]}"
        runs[label] = json.loads(done.stdout.splitlines()[-1])
    kernels = {r["core"] for r in runs.values()}
    if len(kernels) < 2:
        pytest.skip(f"OPENBLAS_CORETYPE picked one kernel only ({kernels})")
    first, *others = runs
    for core in others:
        for key in ("ranges", "files"):
            assert runs[core][key] == runs[first][key], (key, first, core, runs[core]["core"])
    # The emitted C holds the calibrated parameters: the file set is the one convert writes.
    assert set(runs[first]["files"]) == {"cnn_float.h", "cnn_float.c", "cnn_float.json"}
    assert len(runs[first]["ranges"]["minmax"]) == 10  # the cnn's activations
