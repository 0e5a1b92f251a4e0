"""The int16 fallback C of issue 35 (abs16, compare16 / select16, batch_matmul16,
squared_difference16, pad16) on the op corpus's 16x8 files in fx16 with `convert --fast-memory`:
every MLI kernel operand in the fast buffer where the model calls MLI kernels, every output
bit-exact against the executor in the four builds, at a budget that holds the whole model and at
the least it fits (tests/ops/test_fast_memory_issue35b.py's check); NAME.c compiles as C++."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import runtime_harness as H
from tests.support.fast_memory import check_in_fast_memory, least_budget
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = [
    "abs_int16",
    "batch_matmul_int16",
    "greater_builder_int16",
    "greater_int16",
    "padv2_builder_int16",
    "padv2_int16",
    "select_v2_builder_int16",
    "squared_difference_int16",
]


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", FILES)
def test_in_fast_memory_and_bit_exact(name, budget, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    if budget == "least":
        budget = least_budget(H.convert(path, "fx16", tmp_path / "plain").model)
    conv = check_in_fast_memory(path, "fx16", budget, mli_builds, tmp_path / "out")
    assert any(la.kind == "fallback" for la in conv.model.layers)


# the fallback function each file's NAME.c defines
KERNELS = {
    "abs_int16": "abs16",
    "batch_matmul_int16": "batch_matmul16",
    "greater_builder_int16": "compare16",
    "greater_int16": "select16",
    "padv2_builder_int16": "pad16",
    "padv2_int16": "pad16",
    "select_v2_builder_int16": "select16",
    "squared_difference_int16": "squared_difference16",
}


@pytest.mark.parametrize("name", FILES)
def test_c_compiles_as_cxx(name, tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(CORPUS / f"{name}.tflite", "fx16", tmp_path / "out")
    src = conv.out / "net.c"
    assert f"net_{KERNELS[name]}(" in src.read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd = [
        *cxx,
        *mli_cflags("2.0"),
        "-I",
        str(conv.out),
        "-c",
        str(src),
        "-o",
        str(tmp_path / "x.o"),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
