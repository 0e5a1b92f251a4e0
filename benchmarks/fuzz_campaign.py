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

from tests.support.mutate import field_slots, run_case, sample_input  # noqa: E402

CASE_SECONDS = 120


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


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
        work = root / "case"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        signal.alarm(CASE_SECONDS)
        try:
            argv, how, outcome, problem = run_case(
                model.name, originals[model], slots[model], inputs[model], rng, work
            )
            command = argv[0] + (f"-{argv[argv.index('--mode') + 1]}" if argv[0] == "run" else "")
            exits[outcome.code] += 1
            stderr = outcome.stderr[-500:]
        except _Hang:
            command, how, stderr = "?", "?", ""
            problem = f"no answer in {CASE_SECONDS} s"
            exits["hang"] += 1
        finally:
            signal.alarm(0)
        per_command[command] += 1
        if problem:
            failures[problem].append(
                {
                    "case": case,
                    "model": model.name,
                    "command": command,
                    "mutation": how,
                    "stderr": stderr,
                }
            )
        if (case + 1) % 500 == 0:
            print(
                f"{case + 1} cases, {time.monotonic() - start:.0f} s, "
                f"{sum(len(v) for v in failures.values())} failing",
                flush=True,
            )
    shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - start
    n_failing = sum(len(v) for v in failures.values())
    print(f"\n{cases} cases over {len(models)} models in {elapsed:.0f} s (seed {seed})")
    print("per command: " + ", ".join(f"{k} {v}" for k, v in sorted(per_command.items())))
    print("exit codes:  " + ", ".join(f"{k}: {v}" for k, v in sorted(exits.items(), key=str)))
    print(f"failing cases: {n_failing} at {len(failures)} distinct places")
    for problem, items in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        first = items[0]
        print(
            f"  {len(items):5d}  {problem}  (e.g. case {first['case']}, {first['model']}, "
            f"{first['command']}: {first['mutation']})"
        )
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
