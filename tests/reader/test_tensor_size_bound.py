"""A tensor of more elements than any stage can allocate (a byte flip in a shape: 12 billion
elements, found by the seed-49 campaign) is refused with one line before anything allocates it,
exit 4, instead of a MemoryError."""

from __future__ import annotations

import pytest

from mlitool.errors import UnsupportedError
from mlitool.pipeline import read
from mlitool.tflite.validate_structure import MOST_ELEMENTS
from tests.support.tflite_build import T, graph_model


@pytest.mark.parametrize("channels, refused", [(4, False), (1 << 16, True)])
def test_an_activation_beyond_the_bound_is_refused(channels, refused, tmp_path):
    shape = [1, 64, 64, channels]
    path = tmp_path / f"big_{channels}.tflite"
    tensors = [T(shape, scale=[0.05], zero_point=[0]), T(shape, scale=[0.05], zero_point=[0])]
    path.write_bytes(graph_model(tensors, [("RELU", [0], [1], None)], [0], [1]))
    if not refused:
        assert [op.type for op in read(path).main.ops] == ["RELU"]
        return
    assert 64 * 64 * channels > MOST_ELEMENTS
    with pytest.raises(UnsupportedError, match=r"holds 268435456 elements: more than mlitool"):
        read(path)
