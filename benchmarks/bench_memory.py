"""Peak memory and core scaling of `verify` and `run` over many samples (run by hand).

    python benchmarks/bench_memory.py [--model PATH] [--samples 32 128 512] [--jobs 2]

Each measurement is a fresh `python -m mlitool` process; peak RSS is the largest resident set of
that process or any of its workers (getrusage of the children, in a fresh parent per run). Prints seconds and MB
per sample count (memory should not grow with the count), then the speedup of --jobs N over
--jobs 1 measured in the same run (the baseline).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "models" / "embarc_mli" / "mobilenet_v1_int8.tflite"


_PROBE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
    "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def measure(args: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one mlitool process and its workers, measured by a fresh
    parent so one measurement's peak does not carry into the next."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, sys.executable, "-m", "mlitool", *args],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - t0, int(r.stdout.split()[-1]) / 1024  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, default=DEFAULT)
    ap.add_argument("--samples", type=int, nargs="+", default=[32, 128, 512])
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    a = ap.parse_args()
    print(f"{a.model.name}: verify (mli, tflite and float modes per sample), --jobs 1")
    print(f"{'samples':>8} {'seconds':>8} {'peak MB':>8}")
    for n in a.samples:
        s, mb = measure(["verify", str(a.model), "-n", str(n), "-q", "--jobs", "1"])
        print(f"{n:>8} {s:>8.1f} {mb:>8.0f}")
    n = a.samples[0]
    one, _ = measure(["verify", str(a.model), "-n", str(n), "-q", "--jobs", "1"])
    many, mb = measure(["verify", str(a.model), "-n", str(n), "-q", "--jobs", str(a.jobs)])
    print(
        f"verify -n {n}: --jobs {a.jobs} {many:.1f} s vs --jobs 1 {one:.1f} s "
        f"(baseline) -> {one / many:.2f}x, peak {mb:.0f} MB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        from mlitool.pipeline import read

        g = read(a.model).main
        shape = (max(a.samples),) + tuple(g.tensors[g.inputs[0]].shape)
        x = np.random.default_rng(0).integers(-128, 128, shape, dtype=np.int8)
        np.save(Path(tmp) / "x.npy", x)
        s, mb = measure(
            [
                "run",
                str(a.model),
                "-i",
                str(Path(tmp) / "x.npy"),
                "--npz",
                str(Path(tmp) / "y.npz"),
                "-q",
                "--jobs",
                "1",
            ]
        )
        print(
            f"run, {shape[0]} samples: {s:.1f} s, peak {mb:.0f} MB (inputs {x.nbytes / 2**20:.0f} MB)"
        )


if __name__ == "__main__":
    main()
