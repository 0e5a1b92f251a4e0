"""`convert --fast-memory` of models whose layers are views only (no kernel call): the emitted C
compiles cleanly in every configuration (C99 strict and C++, with and without
-DNAME_CHECK_OPERANDS: no unused operand-check helper), runs bit-exact against the executor on
the real MLI, and the least budget (1 byte: nothing needs fast memory) gives a runtime with no
fast buffer at all."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import runtime_harness as H
from tests.support.fast_memory import least_budget, macro
from tests.support.paths import ROOT, mli_cflags

CORPUS_OPS = ROOT / "tests" / "corpus_ops"
VIEWS_ONLY = ["unpack_int8", "squeeze_builder_int8", "expand_dims_builder_int8"]
CXX = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", VIEWS_ONLY)
def test_views_only_in_fast_memory(name, budget, mli_builds, tmp_path):
    path = CORPUS_OPS / f"{name}.tflite"
    plain = H.convert(path, "sa8", tmp_path / "plain")
    assert {la.kind for la in plain.model.layers} == {"view"}
    if budget == "least":
        budget = least_budget(plain.model)
        assert budget == 1
    conv = H.convert(path, "sa8", tmp_path / "out", fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    fast_bytes = macro(conv, fm["macros"]["fast_bytes"])
    assert fast_bytes == fm["fast_bytes"] <= budget
    if budget == 1:  # the input in the slow arena; no fast buffer to give
        assert fast_bytes == 0
        assert "fast may be NULL" in (conv.out / f"{conv.name}.c").read_text()
    cflags = mli_cflags("2.0")
    check = f"-D{fm['macros']['check_operands']}"
    src = conv.out / f"{conv.name}.c"
    if shutil.which("g++"):
        for extra in ([], [check]):
            args = [*CXX, *cflags, *extra, "-I", str(conv.out), "-c", str(src)]
            r = subprocess.run([*args, "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr[-3000:]
    objs = H.compile_objects(conv, [*cflags, check])  # C99 -Wall -Wextra -Werror -pedantic
    results = H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 4, 0))
    H.assert_bit_exact(results)


@pytest.mark.parametrize("budget", ["1", "64K"])
def test_selftest_of_views_only_in_fast_memory(budget, mli_builds, tmp_path):
    """The self-test (its own fast and slow buffers, NAME_CHECK_OPERANDS on) passes."""
    from tests.emit.test_selftest import board, make

    model = CORPUS_OPS / "unpack_int8.tflite"
    objs = make(model, tmp_path, ("UP", "OFF"), fast=budget)
    (code, _, _), text = board(objs, mli_builds["UP", "OFF"], tmp_path / "exe")
    assert code == 0, text
    want = "0u" if budget == "1" else "256u"  # at 64K the 256-byte input stays in fast memory
    assert f"#define NET_FAST_BYTES {want}" in (tmp_path / "net.h").read_text()
