"""A float region never hides a malformed op: an op that fails its own shape check stays outside
the region, so validation names it (found by the seed-47 campaign on an unseen PyTorch ViT: a
RESHAPE of another number of elements inside a LayerNorm region ran in float mode and failed
with an internal error)."""

from __future__ import annotations

import pytest

from mlitool.errors import ModelFormatError
from mlitool.pipeline import read
from tests.support.tflite_build import T, graph_model, int32_const, options


def _model(tmp_path, reshape_to):
    """x int8 [1, 4, 6] -> DEQUANTIZE -> RESHAPE `reshape_to` -> MEAN over the last axis
    -> QUANTIZE: a float region (MEAN is no element-wise island)."""
    tensors = [
        T([1, 4, 6], scale=[0.05], zero_point=[2]),
        T([1, 4, 6], "float32"),
        int32_const(reshape_to),
        T(reshape_to, "float32"),
        int32_const([-1]),
        T(reshape_to[:-1], "float32"),
        T(reshape_to[:-1], scale=[0.02], zero_point=[0]),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("RESHAPE", [1, 2], [3], options("ReshapeOptions")),
        ("MEAN", [3, 4], [5], options("ReducerOptions", keepDims=False)),
        ("QUANTIZE", [5], [6], None),
    ]
    path = tmp_path / f"region_{'x'.join(map(str, reshape_to))}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [6]))
    return path


def test_a_well_formed_region_is_one_op(tmp_path):
    g = read(_model(tmp_path, [1, 2, 12])).main
    assert [op.type for op in g.ops] == ["FLOAT_REGION"]


def test_a_malformed_reshape_is_named_not_hidden(tmp_path):
    path = _model(tmp_path, [1, 2, 5])  # 10 elements from 24
    with pytest.raises(ModelFormatError, match=r"op 1 \(RESHAPE\).*has 10 elements, the input 24"):
        read(path)
