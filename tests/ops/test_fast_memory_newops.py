"""The fallback C the new-ops work added (prelu8: a PRELU slope of any shape; update_slice:
DYNAMIC_UPDATE_SLICE; gather4 for BROADCAST_TO to a higher rank) with `convert --fast-memory`:
every MLI kernel operand in the fast buffer (-DNAME_CHECK_OPERANDS, and the call wrappers where
the model calls MLI kernels, as tests/emit/test_runtime_fast_memory checks), every output
bit-exact against the executor in the four builds, at a budget that holds the whole model and at
the least it fits; the emitted C of each compiles as C++ with -Werror -pedantic."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.ops.activation.test_prelu_general import CASES as PRELU_CASES
from tests.ops.activation.test_prelu_general import _model as prelu_model
from tests.ops.gather.test_pad_broadcast_reverse import _model as gather_model
from tests.ops.update_slice.test_dynamic_update_slice import _model as dus_model
from tests.support import runtime_harness as H
from tests.support.fast_memory import check_in_fast_memory, least_budget
from tests.support.paths import mli_cflags

# the fallback kernel each model's C calls
KERNELS = {
    "prelu_full": "prelu8",
    "dus_constant": "update_slice",
    "dus_input": "update_slice",
    "broadcast_rank": "gather4",
}
MODELS = {
    "prelu_full": lambda p: prelu_model(p, PRELU_CASES["full"], between=True),
    "dus_constant": lambda p: dus_model(p, "negative", "int8", "constant", between=True),
    "dus_input": lambda p: dus_model(p, "far_end", "int8", "input", between=True),
    "broadcast_rank": lambda p: gather_model(p, "broadcast_rank2_to_4", between=True),
}


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_in_fast_memory_and_bit_exact(name, budget, mli_builds, tmp_path):
    path = MODELS[name](tmp_path)
    if budget == "least":
        budget = least_budget(H.convert(path, "sa8", tmp_path / "plain").model)
    check_in_fast_memory(path, "sa8", budget, mli_builds, tmp_path / "out")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_compiles_as_cxx(name, tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(MODELS[name](tmp_path), "sa8", tmp_path / "out")
    src = conv.out / f"{conv.name}.c"
    assert f"{conv.name}_{KERNELS[name]}(" in src.read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    args = [*cxx, *mli_cflags("2.0"), "-I", str(conv.out), "-c", str(src)]
    r = subprocess.run([*args, "-o", str(conv.out / "x.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
