"""Mutation testing by hand (not in CI): cosmic-ray mutates one module at a time, one change per
run, and runs the tests that cover the module; a mutant the tests pass survived.

    pip install -e '.[mutation]'
    python benchmarks/mutation.py [TARGET ...] [--functions F,G] [--root DIR] [--list]

TARGETs are the names of `TARGETS` (default: every one; `--list` prints them). Each runs
`cosmic-ray init`, the operator filter (`OPERATORS`: the changes a reviewer would try: constants
+-1, comparison bounds, + / -, * / /, shifts, & / |, and / or, not, negation, loops that never
run), `cr-filter-pragma` (a line marked `# pragma: no mutate` is skipped) and `cosmic-ray exec`,
then prints the score (killed / (killed + survived); a timeout or a crash counts as killed) and
every survivor (line, operator). Survivors shown equivalent are named in `EQUIVALENT` with the
reason, and left out of the score; any other survivor needs a test.

cosmic-ray edits the module in place while its tests run: run this on a clean tree and edit
nothing meanwhile; the script refuses a module with uncommitted changes and checks each module
is restored afterwards. Sessions go to .cache/mutation/ (gitignored). `--root DIR` runs in
another checkout of the project (e.g. an older commit unpacked with `git archive`, to compare
scores before and after new tests); test paths that do not exist there are left out. Each mutant
runs a small test selection (a few seconds): a module of ~200 mutants takes 10-20 minutes on
one core.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

# name: (module, tests that cover it, timeout in seconds for one test run)
TARGETS: dict[str, tuple[str, list[str], int]] = {
    # arithmetic
    "exact_sums": (
        "mlitool/execute/exact_sums.py",
        [
            "tests/execute/test_exact_guards.py",
            "tests/execute/test_mli_mac_golden.py::test_chunked_float32_sums",
            "tests/execute/test_mli_mac_golden.py::test_int64_accumulation_path",
        ],
        300,
    ),
    "macquant": (
        "mlitool/execute/mli/kernels/macquant.py",
        [
            "tests/execute/test_exact_guards.py",
            "tests/execute/test_mli_rounding.py",
            "tests/execute/test_mli_mac_golden.py::test_golden[UP_ACCU_OFF-fully_connected_sa8_sa8_sa32]",
            "tests/execute/test_mli_mac_golden.py::test_golden[CONVERGENT_ACCU_ON-conv2d_hwcn_sa8_sa8_sa32]",
        ],
        300,
    ),
    "eltwise": (
        "mlitool/execute/mli/kernels/eltwise.py",
        [
            "tests/execute/test_mli_eltwise_limits.py",
            "tests/execute/test_mli_elt_golden.py",
            "-k 'eltwise and (UP_ACCU_OFF or CONVERGENT_ACCU_ON or both_round or limits)'",
        ],
        300,
    ),
    "tflite_lstm": (
        "mlitool/ops/recurrent/tflite_mode.py",
        ["tests/ops/recurrent/test_tflite_lstm.py"],
        300,
    ),
    "gemmlowp16": (
        "mlitool/execute/reference/gemmlowp16.py",
        ["tests/ops/recurrent/test_tflite_lstm.py"],
        300,
    ),
    "mli_intops": (
        "mlitool/execute/mli/kernels/intops.py",
        ["tests/execute/test_mli_rounding.py", "tests/execute/test_mli_intops_asl.py"],
        300,
    ),
    "tflite_fixedpoint": (
        "mlitool/execute/reference/fixedpoint.py",
        ["tests/execute/test_mli_rounding.py", "tests/execute/test_exec_tflite_ops.py"],
        300,
    ),
    # runtime, arena
    "runtime": ("mlitool/emit/runtime.py", ["tests/emit/test_runtime_api.py"], 900),
    "arena": ("mlitool/mli/memory/arena.py", ["tests/report/test_report_memory.py"], 300),
    # streaming statistics
    "stats": (
        "mlitool/verify/stats.py",
        ["tests/verify/test_metrics.py", "tests/verify/test_verify_outputs.py"],
        300,
    ),
    # validation
    "validate": (
        "mlitool/tflite/validate.py",
        ["tests/cli/test_malformed_graph.py", "tests/lower/test_lower_checks.py"],
        300,
    ),
}

# Survivors shown equivalent (no input tells them apart): {target: [(operator, text of the line,
# why)]}. They are counted apart from the score; a survivor not named here needs a test.
EQUIVALENT: dict[str, list[tuple[str, str, str]]] = {
    "exact_sums": [
        ("NumberReplacer", "_MIN_F32_CHUNK = 16", "speed only: float32 chunks or one float64 sum"),
        (
            "ReplaceComparisonOperator_GtE_Gt",
            "if chunk >= _MIN_F32_CHUNK:",
            "the same speed threshold",
        ),
        ("ReplaceFalseWithTrue", "copy=False", "a copy holds the same values"),
        ("NumberReplacer", "return 0", "max_abs of an empty operand: a sum of no term either way"),
        ("NumberReplacer", "max(term_bound, 1)", "2: shorter chunks for a bound of 0 or 1, exact"),
    ],
}

_KEPT = (
    "NumberReplacer",
    "ReplaceComparisonOperator_(Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Eq_NotEq|NotEq_Eq)",
    (
        "ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Mul|LShift_RShift|"
        "RShift_LShift|BitAnd_BitOr|BitOr_BitAnd)"
    ),
    "AddNot",
    "ReplaceAndWithOr",
    "ReplaceOrWithAnd",
    "ReplaceTrueWithFalse",
    "ReplaceFalseWithTrue",
    "ZeroIterationForLoop",
    "ReplaceUnaryOperator_USub_Delete",
)
OPERATORS = f"core/({'|'.join(_KEPT)})$"


def _config(module: str, tests: list[str], timeout: int) -> str:
    command = f"{sys.executable} -m pytest -x -q -p no:cacheprovider " + " ".join(tests)
    return (
        f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {float(timeout)}\n'
        f'excluded-modules = []\ntest-command = "{command}"\n\n'
        f'[cosmic-ray.distributor]\nname = "local"\n\n'
        f'[cosmic-ray.filters.operators-filter]\nexclude-operators = ["(?!{OPERATORS})"]\n'
    )


def _tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _existing(root: Path, tests: list[str]) -> list[str]:
    """The tests whose file exists under root, and the options."""
    return [t for t in tests if t.startswith("-") or (root / t.split("::")[0]).exists()]


def score(session: Path, module: Path, equivalent=()) -> tuple[int, int, int, list[str]]:
    """(killed, survived, skipped, survivors as 'line: operator: text') of a finished session;
    survivors matching `equivalent` (operator, line text, why) are marked as such."""
    db = sqlite3.connect(session)
    rows = db.execute(
        "SELECT r.worker_outcome, r.test_outcome, m.start_pos_row, m.operator_name "
        "FROM work_results r JOIN mutation_specs m ON m.job_id = r.job_id"
    ).fetchall()
    db.close()
    lines = module.read_text().splitlines()
    killed = survived = skipped = 0
    survivors = []
    for worker, test, row, operator in rows:
        worker, test = str(worker).lower(), str(test).lower()
        if worker in ("skipped", "no-test"):
            skipped += 1
        elif test == "survived":
            op, text = operator.removeprefix("core/"), lines[row - 1].strip()
            why = next((w for o, t, w in equivalent if op.startswith(o) and t in text), None)
            survived += why is None
            survivors.append(f"{row}: {op}: {text}" + (f"  [equivalent: {why}]" if why else ""))
        else:
            killed += 1
    return killed, survived, skipped, sorted(survivors, key=lambda s: int(s.split(":")[0]))


def _keep_functions(session: Path, functions: set[str]) -> None:
    """Skip the mutants outside `functions` ("<module>" names module-level code)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            if not all((m.definition_name or "<module>") in functions for m in item.mutations):
                db.set_result(
                    item.job_id,
                    WorkResult(output="outside --functions", worker_outcome=WorkerOutcome.SKIPPED),
                )


def run_target(root: Path, name: str, functions: set[str] | None = None) -> tuple[int, int]:
    module, tests, timeout = TARGETS[name]
    tests = _existing(root, tests)
    path = root / module
    if all(t.startswith("-") for t in tests):
        print(f"{name}: no test selection exists under {root}; skipped")
        return 0, 0
    if (root / ".git").exists() and subprocess.run(
        ["git", "diff", "--quiet", "--", module], cwd=root, check=False
    ).returncode:
        sys.exit(
            f"{module} has uncommitted changes: cosmic-ray edits it in place; commit or stash first"
        )
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    work = root / ".cache" / "mutation" / name
    work.mkdir(parents=True, exist_ok=True)
    config, session = work / "config.toml", work / "session.sqlite"
    config.write_text(_config(module, tests, timeout))
    session.unlink(missing_ok=True)
    env = dict(os.environ, CI="1")
    env.setdefault("MLITOOL_SHARED", str(HERE.parent / "shared"))

    def tool(*args: str) -> None:
        subprocess.run(
            [_tool(args[0]), *args[1:]], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL
        )

    try:
        tool("cosmic-ray", "init", str(config), str(session))
        tool("cr-filter-operators", str(session), str(config))
        tool("cr-filter-pragma", str(session))
        if functions:
            _keep_functions(session, functions)
        tool("cosmic-ray", "exec", str(config), str(session))
    finally:
        if hashlib.sha256(path.read_bytes()).hexdigest() != before:
            sys.exit(f"{module} was not restored: `git checkout -- {module}` before anything else")
    killed, survived, skipped, survivors = score(session, path, EQUIVALENT.get(name, ()))
    total = killed + survived
    print(
        f"{name}: {module}: {killed}/{total} killed ({100 * killed / max(total, 1):.1f} %), "
        f"{len(survivors) - survived} named equivalent, {skipped} filtered; "
        f"tests: {' '.join(tests)}"
    )
    for s in survivors:
        print(f"    survived {s}")
    return killed, survived


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="names from TARGETS (default: all)")
    ap.add_argument("--root", type=Path, default=HERE, help="the project checkout to mutate")
    ap.add_argument(
        "--functions",
        help="comma-separated: mutate only these functions "
        "(<module> for module-level code), to bound a long run",
    )
    ap.add_argument("--list", action="store_true", help="print the targets and exit")
    args = ap.parse_args()
    if args.list:
        for name, (module, tests, _) in TARGETS.items():
            print(f"{name:18} {module:42} {' '.join(tests)}")
        return
    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; --list shows them")
    functions = set(args.functions.split(",")) if args.functions else None
    for name in args.targets or TARGETS:
        run_target(args.root.resolve(), name, functions)


if __name__ == "__main__":
    main()
