"""The non-MAC MLI kernels against the MLI 2.0.2 golden vectors: every case, all four builds.

Outputs must be bit-identical, and kernels that rewrite their output's parameters must report
exactly the values the real kernel left in the tensor (`*_post_*`).
"""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.kernels import activations, convert_tensor, eltwise, movement
from mlitool.mli.ops import output_params
from tests.support.golden import MODES, arith_of, load
from tests.support.paths import shared_path

_TYPES = ("fx8", "fx16", "sa8", "sa32", "fp32")
KERNELS = (
    [f"convert_{a}_to_{b}" for a in _TYPES for b in _TYPES if a != "fp32" or b != "fp32"]
    + [
        f"eltwise_{op}_{t}"
        for op in ("add", "sub", "mul", "min", "max")
        for t in ("fx8", "fx16", "sa8")
    ]
    + [f"{k}_{t}" for k in ("relu", "leaky_relu", "prelu") for t in ("fx8", "fx16", "sa8")]
    + [
        f"{k}_{t}"
        for k in ("sigm", "tanh", "softmax", "l2_normalize", "argmax")
        for t in ("fx16", "sa8")
    ]
    + [f"permute_{t}" for t in ("fx8", "fx16", "sa8")]
)


def _family(kernel: str) -> str:
    return kernel.rsplit("_", 1)[0] if not kernel.startswith("convert_") else "convert"


def run_case(kernel: str, case, arith):
    """(output with the batch of one removed, the output tensor's params after the call)."""
    t, cfg = case.tensors, case.cfg
    family = _family(kernel)
    out = t["out"]
    if family == "convert":
        got = convert_tensor.convert(t["in"].data[None], t["in"], out, arith)
    elif family.startswith("eltwise_"):
        fn = getattr(eltwise, family)
        got = fn(t["in1"].data[None], t["in2"].data[None], t["in1"], t["in2"], out, arith)
    elif family == "relu":
        got = activations.relu(t["in"].data[None], t["in"], out, cfg, arith)
    elif family in ("leaky_relu", "prelu"):
        fn = getattr(activations, family)
        args = (cfg,) if family == "prelu" else ()
        got = fn(t["in"].data[None], t["in"], t["slope"], out, *args, arith)
    elif family in ("sigm", "tanh"):
        got = getattr(activations, family)(t["in"].data[None], t["in"], out, arith)
    elif family == "softmax":
        got = activations.softmax(t["in"].data[None], t["in"], out, cfg, arith)
    elif family == "l2_normalize":
        got = activations.l2_normalize(t["in"].data[None], t["in"], t["epsilon"], out, cfg, arith)
    elif family == "argmax":
        got = movement.argmax(t["in"].data[None], t["in"], out, cfg, arith)
    elif family == "permute":
        got = movement.permute(t["in"].data[None], t["in"], out, cfg, arith)
    else:
        raise KeyError(kernel)
    post = output_params(family, t.get("in", t.get("in1")), out, cfg)
    assert got.shape[0] == 1
    return got[0], post


def same_params(a, b) -> bool:
    if a.el_type != b.el_type:
        return False
    if a.el_type.is_fx:
        return int(a.frac_bits) == int(b.frac_bits)
    if a.el_type.is_sa:
        return int(a.dim) == int(b.dim) and all(
            np.array_equal(
                np.asarray(getattr(a, f), np.int64).ravel(),
                np.asarray(getattr(b, f), np.int64).ravel(),
            )
            for f in ("zero_point", "scale", "scale_frac_bits")
        )
    return True


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("mode", MODES)
def test_golden(mode, kernel):
    golden = shared_path("golden")
    meta, cases = load(golden, mode, kernel)
    arith = arith_of(mode)
    failures = []
    for case in cases:
        got, post = run_case(kernel, case, arith)
        want = case.expected["out"]
        if got.dtype != want.dtype or got.shape != want.shape:
            failures.append(
                f"c{case.index:03d} [{case.tags}]: {got.dtype}{got.shape} != "
                f"{want.dtype}{want.shape}"
            )
        elif not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            failures.append(
                f"c{case.index:03d} [{case.tags}]: {int((diff > 0).sum())} of {want.size} "
                f"differ, max {diff.max()}"
            )
        if not same_params(post, case.post["out"]):
            failures.append(f"c{case.index:03d} [{case.tags}]: output params differ")
    assert not failures, f"{kernel} {mode}:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    "kernel",
    [f"eltwise_{op}_{t}" for op in ("add", "sub", "mul", "min", "max") for t in ("fx8", "sa8")],
)
@pytest.mark.parametrize("mode", MODES)
def test_eltwise_byte_pair_table(mode, kernel, monkeypatch):
    """The 8-bit lookup-table path (taken on large batches) gives the golden answers: forced on
    every case whose operands are two full int8 tensors."""
    monkeypatch.setattr(eltwise, "_TABLE_MIN_SIZE", 0)
    monkeypatch.setattr(eltwise, "_TABLES", {})
    meta, cases = load(shared_path("golden"), mode, kernel)
    tabled = 0
    for case in cases:
        t = case.tensors
        x1, x2 = t["in1"].data[None], t["in2"].data[None]
        tabled += eltwise._by_table(np.asarray(x1), np.asarray(x2), t["in1"], t["in2"], t["out"])
        got, _ = run_case(kernel, case, arith_of(mode))
        assert np.array_equal(got, case.expected["out"]), f"c{case.index:03d} [{case.tags}]"
    assert tabled, "no case took the table path"


@pytest.mark.parametrize(
    "kernel", [f"eltwise_{op}_{t}" for op in ("add", "mul") for t in ("fx8", "sa8")]
)
def test_eltwise_byte_pair_tables_of_both_round_modes_in_one_process(kernel, monkeypatch):
    """UP, CONVERGENT, then UP again with one table cache: each build gets its own tables (the
    golden answers of both modes, on cases the modes tell apart)."""
    monkeypatch.setattr(eltwise, "_TABLE_MIN_SIZE", 0)
    monkeypatch.setattr(eltwise, "_TABLES", {})
    up, conv = (
        load(shared_path("golden"), mode, kernel)[1]
        for mode in ("UP_ACCU_OFF", "CONVERGENT_ACCU_OFF")
    )
    assert any(not np.array_equal(a.expected["out"], b.expected["out"]) for a, b in zip(up, conv))
    for mode, cases in (("UP_ACCU_OFF", up), ("CONVERGENT_ACCU_OFF", conv), ("UP_ACCU_OFF", up)):
        for case in cases:
            got, _ = run_case(kernel, case, arith_of(mode))
            assert np.array_equal(got, case.expected["out"]), (
                f"{mode} c{case.index:03d} [{case.tags}]"
            )
