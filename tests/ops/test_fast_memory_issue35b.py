"""The fallback C and kernels issue 35 added (space_batch, logic8, REDUCE_ALL in reduce8, CAST's
select8, group_conv2d, the dilated folds) with `convert --fast-memory`: every MLI kernel operand in
the fast buffer (-DNAME_CHECK_OPERANDS, and the call wrappers where the model calls MLI kernels,
as tests/emit/test_runtime_fast_memory checks), every output bit-exact against the executor in
the four builds, at a budget that holds the whole model and at the least it fits."""

from __future__ import annotations

import pytest

from tests.ops.conv.test_grouped_conv import _model as grouped_model
from tests.ops.logical.test_logical import _model as logical_model
from tests.ops.resize.test_resize_gather import _case_model as resize_model
from tests.ops.shape.test_cast_bool import _int8_model as cast_model
from tests.reader.test_dilated import _conv_model as dilated_model
from tests.support import runtime_harness as H
from tests.support.fast_memory import check_in_fast_memory, least_budget

MODELS = {
    "s2b_block2": lambda p: resize_model(p, "s2b_block2", between=True),
    "b2s_block23": lambda p: resize_model(p, "b2s_block23", between=True),
    "logical": logical_model,
    "cast_bool": cast_model,
    "grouped_conv": lambda p: grouped_model(p, "groups4_same"),
    "dilated_pad": lambda p: dilated_model(p / "d.tflite", 4, [[2, 2], [1, 1]], [[1, 0], [0, 0]]),
}


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_in_fast_memory_and_bit_exact(name, budget, mli_builds, tmp_path):
    path = MODELS[name](tmp_path)
    if budget == "least":
        budget = least_budget(H.convert(path, "sa8", tmp_path / "plain").model)
    check_in_fast_memory(path, "sa8", budget, mli_builds, tmp_path / "out")
