"""Time `mlitool tune` on the shared int8 models, and compare the mixes two source trees choose
(run by hand, not in CI).

    python benchmarks/bench_tune.py [--models ad01 resnet8 ...] [--tree DIR ...] [-n 32]
                                    [--json-out FILE]

For each model: all sa8 and all fx16 are measured first (a tune whose target step 0 meets,
`--min-snr -1000`), then two targets, 1/3 and 2/3 of the way from all-sa8 SNR to all-fx16 SNR
(rounded to 0.01 dB). Each target is searched once per --tree (default: this checkout), each
run a fresh `python -m mlitool tune ... -j 1` process with PYTHONPATH set to the tree, one tree
after the other for each target, so the trees are compared on the same machine in the same run.
To time the code of an older commit: `git archive COMMIT | tar -x -C /tmp/old` and pass
`--tree /tmp/old --tree .`.

Prints one row per (model, target, tree): seconds, mixes evaluated, the chosen formats (counts),
SNR / max LSB, RAM / ROM, and whether the chosen mix equals that of the first tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
MODELS = {
    "hello_world": "tflm/hello_world_int8.tflite",
    "ad01": "mlperf_tiny/ad01_int8.tflite",
    "micro_speech": "tflm/micro_speech_int8.tflite",
    "kws_ref_model": "mlperf_tiny/kws_ref_model_int8.tflite",
    "mnist_lstm": "tflm/mnist_lstm_int8.tflite",
    "resnet8": "mlperf_tiny/resnet8_int8.tflite",
    "vww_96": "mlperf_tiny/vww_96_int8.tflite",
    "mobilenet_v1": "embarc_mli/mobilenet_v1_int8.tflite",
}


def tune(tree: Path, model: Path, snr: float, samples: int) -> tuple[float, dict]:
    """(seconds, document) of one `mlitool tune` process on `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = ["tune", str(model), "--min-snr", f"{snr:.2f}", "-n", str(samples), "-j", "1"]
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "mlitool", *args, "--json", "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # no mlitool.toml of a tree applies
    )
    seconds = time.perf_counter() - t0
    if r.returncode not in (0, 3):
        raise SystemExit(f"{tree}: tune {model.name} failed ({r.returncode}): {r.stderr}")
    return seconds, json.loads(r.stdout)


def mix_of(doc: dict) -> dict[int, str]:
    return {la["op"]: la["format"] for la in doc["chosen"]["layers"]}


def row(name: str, target: str, tree: str, seconds: float, doc: dict, same: str) -> str:
    c = doc["chosen"]
    counts = "/".join(str(c["formats"][f]) for f in ("sa8", "fx8w16d", "fx16"))
    lsb = "-" if c["max_lsb"] is None else str(c["max_lsb"])
    return (
        f"| {name} | {target} | {tree} | {seconds:.1f} | {doc['search']['mixes_evaluated']} | "
        f"{counts} | {float(c['snr_db']):.2f} / {lsb} | {c['ram_bytes']:,} / {c['rom_bytes']:,} "
        f"| {'met' if doc['met'] else 'NOT met'} | {same} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["ad01", "resnet8", "vww_96", "mobilenet_v1"])
    ap.add_argument("--tree", type=Path, action="append", help="source tree (default: this one)")
    ap.add_argument("-n", "--samples", type=int, default=32)
    ap.add_argument("--json-out", type=Path, help="write every document and time to FILE")
    a = ap.parse_args()
    trees = [t.resolve() for t in (a.tree or [ROOT])]
    print(
        "| model | target dB | tree | s | mixes | sa8/fx8w16d/fx16 | SNR dB / max LSB "
        "| RAM / ROM B | verdict | mix as tree 1 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for name in a.models:
        model = SHARED / "models" / MODELS[name]
        _, ends = tune(trees[-1], model, -1000, a.samples)
        lo, hi = float(ends["steps"][0]["snr_db"]), float(ends["all_fx16"]["snr_db"])
        for frac, label in ((1 / 3, "1/3"), (2 / 3, "2/3")):
            snr = round(lo + frac * (hi - lo), 2)
            first = None
            for k, tree in enumerate(trees):
                seconds, doc = tune(tree, model, snr, a.samples)
                first = first or mix_of(doc)
                same = "-" if k == 0 else ("same" if mix_of(doc) == first else "DIFFERENT")
                target = f"{snr:.2f} ({label}: {lo:.2f}..{hi:.2f})"
                print(row(name, target, f"{k + 1}", seconds, doc, same), flush=True)
                results.append(
                    {"model": name, "target": snr, "tree": str(tree), "seconds": seconds,
                     "all_sa8": ends["steps"][0], "all_fx16": ends["all_fx16"], "doc": doc}
                )  # fmt: skip
    if a.json_out:
        a.json_out.write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
