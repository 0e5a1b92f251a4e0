"""A long fuzz campaign: mutated copies of the shared models through inspect, convert and run.

    python benchmarks/fuzz_campaign.py [--cases 10000] [--seed 1] [--models DIR] [--report FILE]

Each case takes one model (in turn over every .tflite under ../shared/models, or
$MLITOOL_SHARED/models, or --models), mutates it (tests/support/mutate.py: byte- and
flatbuffer-field-level mutations) and runs one command in this process: `inspect`, `convert`
(into a fresh directory) or `run` in mli, float or tflite mode on a random input batch.

A case fails when the exit code is 1 (internal error) or outside the documented set, stderr holds
a traceback, a Python warning is raised, a failing command prints more than one line, or
`convert` leaves a partial output or a temporary file. Prints the figures (cases per command,
exit codes, failures grouped by place) and writes the failing cases to --report (JSON) with
the mutation that made each, so a case can be replayed (same seed and case number).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.mutate import field_slots, mutate, run_cli, sample_input  # noqa: E402

COMMANDS = ("inspect", "convert", "convert", "run-mli", "run-mli", "run-float", "run-tflite")
CASE_SECONDS = 120


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def args_for(command: str, model: Path, work: Path, npy: Path | None) -> list[str] | None:
    if command == "inspect":
        return ["inspect", str(model)]
    if command == "convert":
        return ["convert", str(model), "--out", str(work / "out"), "--name", "m"]
    if npy is None:
        return None
    mode = command.split("-")[1]
    return ["run", str(model), "--mode", mode, "--input", str(npy),
            "--output", str(work / "out.npz")]


def leftovers(command: str, work: Path, code: int) -> str:
    """What a finished convert left that it must not: temporary files, partial outputs."""
    out = work / "out"
    if command != "convert" or not out.exists():
        return ""
    names = sorted(p.name for p in out.iterdir())
    if any(n.endswith(".tmp") for n in names):
        return f"temporary files left: {names}"
    if code == 0 and names != ["m.c", "m.h", "m.json"]:
        return f"outputs after success: {names}"
    if code != 0 and names:
        return f"outputs after failure {code}: {names}"
    return ""


def campaign(models: list[Path], cases: int, seed: int, report: Path | None) -> int:
    originals = {m: m.read_bytes() for m in models}
    slots = {m: field_slots(b) for m, b in originals.items()}
    root = Path(tempfile.mkdtemp(prefix="mlitool-fuzz-"))
    inputs = {m: sample_input(b, root / f"{m.stem}.npy") for m, b in originals.items()}
    per_command = collections.Counter()
    exits = collections.Counter()
    failures: dict[str, list[dict]] = collections.defaultdict(list)
    signal.signal(signal.SIGALRM, _alarm)
    start = time.monotonic()
    for case in range(cases):
        rng = random.Random(seed * 1_000_003 + case)
        model = models[case % len(models)]
        command = rng.choice(COMMANDS)
        data, how = mutate(originals[model], rng, slots[model])
        work = root / "case"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        path = work / model.name
        path.write_bytes(data)
        argv = args_for(command, path, work, inputs[model])
        if argv is None:
            argv, command = args_for("convert", path, work, None), "convert"
        per_command[command] += 1
        signal.alarm(CASE_SECONDS)
        try:
            outcome = run_cli(argv)
            problem = leftovers(command, work, outcome.code)
        except _Hang:
            outcome, problem = None, f"no answer in {CASE_SECONDS} s"
        finally:
            signal.alarm(0)
        exits[outcome.code if outcome else "hang"] += 1
        if outcome is not None and not outcome.ok:
            if outcome.internal:
                problem = f"internal error at {outcome.where}"
            elif outcome.warnings:
                problem = f"warning: {outcome.warnings[0]}"
            else:
                problem = problem or f"exit {outcome.code}, stderr {outcome.stderr[-300:]!r}"
        if problem:
            failures[problem].append({"case": case, "model": model.name, "command": command,
                                      "mutation": how,
                                      "stderr": outcome.stderr[-500:] if outcome else ""})
        if (case + 1) % 500 == 0:
            print(f"{case + 1} cases, {time.monotonic() - start:.0f} s, "
                  f"{sum(len(v) for v in failures.values())} failing", flush=True)
    shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - start
    n_failing = sum(len(v) for v in failures.values())
    print(f"\n{cases} cases over {len(models)} models in {elapsed:.0f} s (seed {seed})")
    print("per command: " + ", ".join(f"{k} {v}" for k, v in sorted(per_command.items())))
    print("exit codes:  " + ", ".join(f"{k}: {v}" for k, v in sorted(exits.items(), key=str)))
    print(f"failing cases: {n_failing} at {len(failures)} distinct places")
    for problem, items in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        first = items[0]
        print(f"  {len(items):5d}  {problem}  (e.g. case {first['case']}, {first['model']}, "
              f"{first['command']}: {first['mutation']})")
    if report is not None:
        report.write_text(json.dumps(failures, indent=1))
    return 1 if n_failing else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", type=Path, default=None)
    ap.add_argument("--report", type=Path, default=None)
    a = ap.parse_args()
    shared = Path(os.environ.get("MLITOOL_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    models_dir = a.models or shared / "models"
    models = sorted(models_dir.glob("**/*.tflite"))
    if not models:
        print(f"no .tflite models under {models_dir}", file=sys.stderr)
        return 2
    return campaign(models, a.cases, a.seed, a.report)


if __name__ == "__main__":
    sys.exit(main())
