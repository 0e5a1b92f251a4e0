"""The late int32 follow-ups' fallback C (update_slice_at: run-time DYNAMIC_UPDATE_SLICE starts;
fill_value: ZEROS_LIKE; pad32: int32 PADV2 with a value; gather4 and gather_rows for GATHER with
batch_dims; prelu16: 16x8 PRELU with a general slope) with `convert --fast-memory`: every MLI
kernel operand in the fast buffer (-DNAME_CHECK_OPERANDS, and the call wrappers where the model calls MLI
kernels), every output bit-exact against the executor in the four builds, at a budget that holds
the whole model (64 KiB, or twice the least for prelu16's 65,536 values) and at the least it
fits; the emitted C of each compiles as C++ with -Werror -pedantic."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.ops.activation.test_prelu16 import _model as prelu16_model
from tests.ops.gather.test_gather_batch_dims import _model as gather_model
from tests.ops.gather.test_gather_batch_dims import _run_time_model as gather_run_time_model
from tests.ops.movement.test_padv2_int32 import _model as padv2_model
from tests.ops.shape.test_zeros_like_fill import _model as zeros_like_model
from tests.ops.update_slice.test_dynamic_update_slice import _model as dus_model
from tests.support import runtime_harness as H
from tests.support.fast_memory import check_in_fast_memory, least_budget
from tests.support.paths import mli_cflags

# name -> (model maker, format, the fallback function the model's C calls)
MODELS = {
    "dus_run_time": (
        lambda p: dus_model(p, "far_end", "int8", "start_input", between=True),
        "sa8",
        "update_slice_at",
    ),
    "zeros_like_int8": (lambda p: zeros_like_model(p, "int8"), "sa8", "fill_value"),
    "zeros_like_int32": (lambda p: zeros_like_model(p, "int32"), "sa8", "fill_value"),
    "padv2_int32": (lambda p: padv2_model(p, 4, -7)[0], "sa8", "pad32"),
    "gather_batch_dims": (lambda p: gather_model(p, "inner_axis", tanh=True), "sa8", "gather4"),
    "prelu16": (lambda p: prelu16_model(p, "pow2", "pixels"), "fx16", "prelu16"),
    "gather_rows_batch": (lambda p: gather_run_time_model(p, "inner_axis"), "sa8", "gather_rows"),
}


@pytest.mark.parametrize("budget", ["roomy", "least"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_in_fast_memory_and_bit_exact(name, budget, mli_builds, tmp_path):
    make, fmt, _ = MODELS[name]
    path = make(tmp_path)
    least = least_budget(H.convert(path, fmt, tmp_path / "plain").model)
    budget = least if budget == "least" else max(64 * 1024, 2 * least)
    check_in_fast_memory(path, fmt, budget, mli_builds, tmp_path / "out")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_compiles_as_cxx(name, tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    make, fmt, kernel = MODELS[name]
    conv = H.convert(make(tmp_path), fmt, tmp_path / "out")
    src = conv.out / f"{conv.name}.c"
    assert f"{conv.name}_{kernel}(" in src.read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    args = [*cxx, *mli_cflags("2.0"), "-I", str(conv.out), "-c", str(src)]
    r = subprocess.run([*args, "-o", str(conv.out / "x.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
