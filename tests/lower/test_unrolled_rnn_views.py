"""An unrolled Keras RNN (`unroll=True`) starts with TRANSPOSE [1, T, N] -> [T, 1, N] and UNPACK
along the time axis: the TRANSPOSE moves only an axis of length 1, so it is a view, and the UNPACK
slices rows of the kept leading dimension; the corpus GRU / LSTM exports then convert (their C is
checked on the real library by tests/corpus_check)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.facts import transpose_moves_units_only
from mlitool.pipeline import read
from tests.support.paths import ROOT


def _transpose(shape, perm) -> tuple[ir.Graph, ir.Op]:
    x = ir.Tensor(0, "x", tuple(shape), "int8")
    p = ir.Tensor(1, "perm", (len(perm),), "int32", np.array(perm, np.int32))
    y = ir.Tensor(2, "y", tuple(shape[a] for a in perm), "int8")
    op = ir.Op(0, "TRANSPOSE", (0, 1), (2,), {})
    return ir.Graph("g", [x, p, y], [op], [0], [2]), op


@pytest.mark.parametrize(
    "shape,perm,view",
    [
        ((1, 16, 8), (1, 0, 2), True),  # [1, T, N] -> [T, 1, N]
        ((1, 4, 1, 8), (0, 2, 1, 3), True),
        ((1, 16, 8), (0, 2, 1), False),  # a real transpose of T and N
        ((2, 3, 1), (1, 0, 2), False),
    ],
)
def test_transpose_of_unit_axes_is_a_view(shape, perm, view):
    assert transpose_moves_units_only(*_transpose(shape, perm)) is view


@pytest.mark.parametrize("name", ["gru_int8_b1", "lstm_int8"])
def test_unrolled_rnn_lowers_transpose_and_unpack_as_views(name):
    g = read(ROOT / "tests" / "corpus" / f"{name}.tflite").main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    kinds = {la.op_type: la.kind for la in model.layers if la.op_type in ("TRANSPOSE", "UNPACK")}
    assert kinds.get("UNPACK") == "view"
    assert kinds.get("TRANSPOSE", "view") == "view"  # gru_int8_b1 has none
