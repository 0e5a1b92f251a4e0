"""A long fuzz campaign: mutated copies of the shared and corpus models through inspect, convert
and run.

    python benchmarks/fuzz_campaign.py [--cases 10000] [--seed 1] [--models DIR ...]
        [--mutators fields,lengths,ops] [--report FILE]

Each case takes one model (in turn over every .tflite under ../shared/models, or
$MLITOOL_SHARED/models, and the Keras corpus tests/corpus; or under each --models DIR), mutates
it with one of the --mutators, in turn (`fields`: tests/support/mutate.py's byte- and
flatbuffer-field-level mutations; `lengths`: its quantization and graph input / output list
lengths; `ops`: tests/support/mutate_ops.py's op input / output lists emptied, shortened or
lengthened and option values of every stored field of every op set to 0, negative values,
limits, NaN) and runs one command in this process: `inspect`, `convert` (into a fresh
directory) or `run` in mli, float or tflite mode on a random input batch.

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

from mlitool import op_families  # noqa: E402
from tests.support.mutate import (  # noqa: E402
    field_slots,
    mutate,
    mutate_lengths,
    run_case,
    sample_input,
)
from tests.support.mutate_ops import mutate_ops, op_slots  # noqa: E402

op_families.load()  # an entry point: the mutations are read with the op registry

# name -> (mutator, the slots it takes of a model)
MUTATORS = {
    "fields": (mutate, field_slots),
    "lengths": (mutate_lengths, field_slots),
    "ops": (mutate_ops, op_slots),
}

CASE_SECONDS = 120


class _Hang(BaseException):  # not an Exception: the CLI turns those into exit 1
    pass


def _alarm(signum, frame):
    raise _Hang()


def campaign(
    models: list[Path], cases: int, seed: int, report: Path | None, mutators: list[str]
) -> int:
    originals = {m: m.read_bytes() for m in models}
    slots = {(name, m): MUTATORS[name][1](b) for name in mutators for m, b in originals.items()}
    per_mutator = collections.Counter()
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
        name = mutators[(case // len(models)) % len(mutators)]
        per_mutator[name] += 1
        work = root / "case"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        signal.alarm(CASE_SECONDS)
        try:
            argv, how, outcome, problem = run_case(
                model.name,
                originals[model],
                slots[name, model],
                inputs[model],
                rng,
                work,
                MUTATORS[name][0],
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
                    "mutator": name,
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
    print("per mutator: " + ", ".join(f"{k} {v}" for k, v in sorted(per_mutator.items())))
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
    ap.add_argument("--models", type=Path, nargs="+", default=None)
    ap.add_argument("--mutators", default=",".join(MUTATORS))
    ap.add_argument("--report", type=Path, default=None)
    a = ap.parse_args()
    shared = Path(os.environ.get("MLITOOL_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    corpus = Path(__file__).resolve().parents[1] / "tests" / "corpus"
    dirs = a.models or [shared / "models", corpus]
    models = [m for d in dirs for m in sorted(d.glob("**/*.tflite"))]
    mutators = a.mutators.split(",")
    if not models or not set(mutators) <= MUTATORS.keys():
        print(f"no .tflite models under {dirs}, or not mutators {mutators}", file=sys.stderr)
        return 2
    return campaign(models, a.cases, a.seed, a.report, mutators)


if __name__ == "__main__":
    sys.exit(main())
