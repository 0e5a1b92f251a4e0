"""Benchmark the emitted C runtime against `run --mode mli` on real models (run by hand, not a test).

    python benchmarks/bench_runtime.py [--runs 200] [--batch 16] [--repeat 3] [--shared ../shared]

For each shared int8 model converted to sa8 (MLI 2.0): `convert` writes NAME.c with its runtime; a
small driver compiled with gcc -O2 and linked to MLI 2.0.2 built natively with -O2 (ROUND_MODE=UP,
FULL_ACCU=OFF, DBG_MODE_RET_CODES: the default `vpx` build, through tests/support/mli_build.py and
its cache) times NAME_run on one random input. The baseline is the in-process executor of `run
--mode mli` (same build settings) on a batch of `--batch` random inputs and on one, measured in the
same run. Prints the best of `--repeat` as time per inference and the ratios executor / C (above 1:
the C is faster), checks that both
give the same outputs for the timed input, and compares NAME_ARENA_BYTES with the planner's lower
bound (the most bytes alive at once, at the runtime's alignment).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_executor import best_of  # noqa: E402

from mlitool.emit.writer import emit  # noqa: E402
from mlitool.execute.mli.bridge import run_mli  # noqa: E402
from mlitool.execute.mli.kernels.intops import Arith  # noqa: E402
from mlitool.execute.reference.inputs import random_inputs  # noqa: E402
from mlitool.mli.memory.arena import model_arena  # noqa: E402
from mlitool.pipeline import ModelOptions, load  # noqa: E402
from tests.support.mli_build import MliUnavailable, build_mli  # noqa: E402

MODELS = {
    "kws_ref_model_int8": "models/mlperf_tiny/kws_ref_model_int8.tflite",
    "resnet8_int8": "models/mlperf_tiny/resnet8_int8.tflite",
    "ad01_int8": "models/mlperf_tiny/ad01_int8.tflite",
    "vww_96_int8": "models/mlperf_tiny/vww_96_int8.tflite",
}
BUILD = ("UP", "OFF")
ARITH = Arith("up", False)

# Times `runs` calls of net_run, copying the input in before each as an application would; prints
# ns per inference, then output 0 of the last run.
DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "net.h"

static unsigned char arena_storage[NET_ARENA_BYTES + NET_ARENA_ALIGN];
static unsigned char input[1 << 20];

int main(int argc, char **argv) {
    unsigned char *arena = arena_storage + (NET_ARENA_ALIGN - (size_t)arena_storage % NET_ARENA_ALIGN) % NET_ARENA_ALIGN;
    long runs = atol(argv[1]), i;
    size_t bytes;
    struct timespec t0, t1;
    FILE *f = fopen(argv[2], "rb");
    mli_tensor *in, *out;
    if (f == NULL || net_init(arena, NET_ARENA_BYTES) != MLI_STATUS_OK) return 2;
    in = net_input(0);
    out = net_output(0);
    bytes = fread(input, 1, sizeof input, f);
    fclose(f);
    if (bytes != in->data.capacity) return 4;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < runs; i++) {
        memcpy(in->data.mem.pi8, input, bytes);
        if (net_run() != MLI_STATUS_OK) return 3;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / runs);
    for (i = 0; i < (long)out->data.capacity; i++) printf("%d ", out->data.mem.pi8[i]);
    printf("\n");
    return 0;
}
"""


def _compile(mli, work: Path) -> Path:
    """The emitted sources of the very model the executor runs, with the driver, at -O2."""
    emit(mli, work, "net", runtime=True)
    (work / "driver.c").write_text(DRIVER)
    mli = build_mli((BUILD,))[BUILD]
    exe = work / "driver"
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-O2",
            *mli.cflags,
            f"-I{work}",
            str(work / "driver.c"),
            str(work / "net.c"),
            "-o",
            str(exe),
            *mli.ldflags,
        ],
        check=True,
    )
    return exe


def _c_per_inference(
    exe: Path, x: np.ndarray, runs: int, repeat: int, work: Path
) -> tuple[float, list[int]]:
    (work / "input.bin").write_bytes(np.ascontiguousarray(x).tobytes())
    best, outputs = float("inf"), []
    for _ in range(repeat):
        lines = subprocess.run(
            [str(exe), str(runs), str(work / "input.bin")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        best = min(best, float(lines[0]) * 1e-9)
        outputs = [int(v) for v in lines[1].split()]
    return best, outputs


def _arena_bytes(header: str) -> int:
    return int(re.search(r"#define NET_ARENA_BYTES\s+(\d+)u", header).group(1))


def bench(path: Path, runs: int, batch: int, repeat: int) -> dict:
    graph, mli = load(path, ModelOptions(format="sa8"))
    x = random_inputs(graph, batch, seed=0)
    inp, out = graph.inputs[0], graph.outputs[0]
    t_exec = best_of(lambda: run_mli(graph, mli, x, ARITH), repeat) / batch
    one = {i: v[:1] for i, v in x.items()}
    t_exec1 = best_of(lambda: run_mli(graph, mli, one, ARITH), repeat)
    want = run_mli(graph, mli, one, ARITH)[0][out].reshape(-1).tolist()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        exe = _compile(mli, work)
        t_c, got = _c_per_inference(exe, x[inp][0], runs, repeat, work)
        arena = _arena_bytes((work / "net.h").read_text())
    bound = model_arena(mli).lower_bound
    return {
        "exec": t_exec,
        "exec1": t_exec1,
        "c": t_c,
        "same": got == want,
        "arena": arena,
        "bound": bound,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="NAME_run calls per timed C loop")
    ap.add_argument("--batch", type=int, default=16, help="inputs per executor batch")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared")),
    )
    args = ap.parse_args()
    try:
        build_mli((BUILD,))
    except MliUnavailable as reason:
        sys.exit(f"cannot build MLI: {reason}")
    print(
        f"sa8, MLI {BUILD[0]}/ACCU {BUILD[1]}, best of {args.repeat}; ms per inference; "
        f"baseline: run --mode mli (executor, batch {args.batch} and 1); C: gcc -O2, {args.runs} runs"
    )
    print(
        f"{'model':<20}{'exec b' + str(args.batch):>10}{'exec b1':>10}{'C':>10}{'b/C':>7}{'b1/C':>7}{'same':>6}"
        f"{'arena B':>10}{'bound B':>10}{'arena/bound':>13}"
    )
    for name, rel in MODELS.items():
        path = args.shared / rel
        if not path.exists():
            print(f"{name}: {path} is absent, skipped")
            continue
        r = bench(path, args.runs, args.batch, args.repeat)
        print(
            f"{name:<20}{r['exec'] * 1e3:>10.3f}{r['exec1'] * 1e3:>10.3f}{r['c'] * 1e3:>10.3f}"
            f"{r['exec'] / r['c']:>7.1f}{r['exec1'] / r['c']:>7.1f}"
            f"{'yes' if r['same'] else 'NO':>6}{r['arena']:>10}{r['bound']:>10}{r['arena'] / r['bound']:>13.3f}"
        )


if __name__ == "__main__":
    main()
