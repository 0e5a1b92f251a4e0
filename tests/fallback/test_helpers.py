"""The static C helpers fallback kernels share (`mlitool.fallback.fixedpoint_c`) are defined
once in NAME.c, however many kernels use them, and not at all where none does."""

from __future__ import annotations

import re

import pytest

from mlitool.fallback import helper_names
from mlitool.fallback.fixedpoint_c import FIXEDPOINT
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
