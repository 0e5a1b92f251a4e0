"""The `--fast-memory` check of emitted C on the real MLI library, shared by the tests of each
piece of work: every kernel operand inside the fast buffer (the runtime's operand log with
`NAME_CHECK_OPERANDS`), the outputs bit-exact with the executor in the four builds."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags, shared_path


def api_header() -> Path:
    return shared_path("mli", "embarc_mli_2.0.2", "include", "api", "mli_kernels_api.h")


def macro(conv: H.Converted, name: str) -> int:
    """The value of `#define NAME <n>u` in the converted model's header."""
    text = (conv.out / f"{conv.name}.h").read_text()
    return int(re.search(rf"#define {name} (\d+)u", text).group(1))


def operands_outside(log: str, fast_bytes: int) -> list[tuple]:
    return [r for r in H.operand_records(log) if r[2] < 0 or r[2] + r[3] > fast_bytes]


def least_budget(model) -> int:
    """The smallest budget the model fits: the bytes the plan's refusal at 1 byte names, or 1
    when it fits that (views only: nothing needs fast memory)."""
    from mlitool.errors import UnsupportedError
    from mlitool.mli.memory.placement import plan_model

    try:
        plan = plan_model(model, 1)
    except UnsupportedError as refused:
        return int(re.search(r"needs at least (\d+) bytes", str(refused)).group(1))
    assert plan.fast_bytes == 0 and not any(la.kernel for la in model.layers)
    return 1


def check_in_fast_memory(path: Path, fmt: str, budget: int, builds: dict, out: Path, samples=4):
    """Convert `path` with `--fast-memory budget`, compile it with the operand check, run it in
    `builds` on seeded inputs: bit-exact with the executor, every MLI kernel operand (each kernel
    the model calls logged) inside the fast buffer, which is at most `budget`. The conversion."""
    cflags = mli_cflags("2.0")
    conv = H.convert(path, fmt, out, fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    fast_bytes = macro(conv, fm["macros"]["fast_bytes"])
    assert fast_bytes == fm["fast_bytes"] <= budget
    check = f"-D{fm['macros']['check_operands']}"
    objs = H.compile_objects(conv, [*cflags, check])
    called = {la.kernel for la in conv.model.layers if la.kernel.startswith("mli_krn_")}
    wrap = H.compile_wrappers(conv, cflags, api_header()) if called else None
    results = H.check(conv, objs, builds, H.random_inputs(conv.model, samples, 0), wrap=wrap)
    H.assert_bit_exact(results)
    for key, result in results.items():
        if called:
            assert {r[0] for r in H.operand_records(result.operand_log)} == called, key
            assert operands_outside(result.operand_log, fast_bytes) == [], key
    return conv
