"""The static C helpers fallback kernels share (`mlitool.mli.fallback_fixedpoint`) are defined
once in NAME.c, however many kernels use them, and not at all where none does."""

from __future__ import annotations

import re

import pytest

from mlitool.mli.fallback import FallbackKernel, helper_names
from mlitool.mli.fallback_fixedpoint import FIXEDPOINT
from mlitool.mli.kinds import fallback_kernels
from mlitool.ops.binary.c_kernel import BATCH_MATMUL8
from mlitool.ops.unary.c_kernel import LUT8
from tests.support import runtime_harness as H
from tests.support.paths import ROOT

CORPUS = ROOT / "tests" / "corpus"


@pytest.mark.parametrize(
    "model, defined",
    [
        ("transformer_int8.tflite", 1),  # batch_matmul8, binary8, reduce8 (and lut8)
        ("act_zoo_int8.tflite", 0),  # compare8, select8, lut8: none uses them
    ],
)
def test_fixed_point_helpers_are_defined_once_where_used(model, defined, tmp_path):
    H.convert(CORPUS / model, "sa8", tmp_path)
    source = (tmp_path / "net.c").read_text()
    names = helper_names(FIXEDPOINT)
    assert names == ["wrap32", "srdhm", "rdbpot", "satpot", "mbqm", "clz"]
    for name in names:
        found = re.findall(rf"^static \w+ int32_t net_fb_{name}\(", source, re.M)
        assert len(found) == defined, name


def test_prototype_and_fixed_point_use_are_read_from_the_c():
    """A kernel's prototype is its definition's parameter list, white space folded; it takes the
    fixed-point helpers exactly where its C calls one."""
    assert BATCH_MATMUL8.signature == (
        "(const mli_tensor *lhs, const mli_tensor *rhs, const @CFG@ *cfg, mli_tensor *out)"
    )
    assert LUT8.signature == "(const mli_tensor *in, const mli_tensor *table, mli_tensor *out)"
    uses = sorted(k.name for k in fallback_kernels().values() if k.fixedpoint)
    # cumsum8 requantizes its running sums with @P@_mbqm, svdf8 its feature and unit sums
    assert uses == [
        "abs16",
        "batch_matmul8",
        "binary8",
        "cumsum8",
        "log_softmax8",
        "prelu16",
        "prelu8",
        "reduce16",
        "reduce8",
        "squared_difference16",
        "svdf8",
    ]
    one_call = "@STORAGE@mli_status @FN@(int32_t x) {\n    return @P@_clz(0u);\n}\n"
    assert FallbackKernel("k", "", one_call, run=None).fixedpoint
    assert not FallbackKernel("k", "", one_call.replace("@P@_clz", "@P@_count"), None).fixedpoint
