"""Every layer that cannot be lowered is listed at once, each naming op index, type and tensor,
with a remedy where one exists; layers that read a refused layer's output are not piled on."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support.tflite_build import T, graph_model, options


def _two_branches(tmp_path, tiny_outputs: tuple[bool, bool]):
    """in0 -> FC -> out0, in1 -> FC -> out1 -> RELU -> out2; `tiny_outputs` gives an output a
    scale MLI's int8 frac bits cannot hold."""
    w = np.eye(4, dtype=np.int8)

    # Consistent (in * w / out = 1), but 1e-39 needs 144 frac bits: MLI keeps them in an int8.
    def branch(tiny: bool, k: int) -> list[T]:
        return [
            T([1, 4], name=f"in{k}", scale=[1e-20 if tiny else 0.1]),
            T(
                [4, 4],
                data=w,
                name=f"w{k}",
                scale=[1e-19 if tiny else 0.01] * 4,
                zero_point=[0] * 4,
            ),
            T([1, 4], name=f"out{k}", scale=[1e-39 if tiny else 0.05]),
        ]

    tensors = (
        branch(tiny_outputs[0], 0)
        + branch(tiny_outputs[1], 1)
        + [T([1, 4], name="out2", scale=[1e-39 if tiny_outputs[1] else 0.05])]
    )
    fc = options("FullyConnectedOptions")
    path = tmp_path / "branches.tflite"
    path.write_bytes(
        graph_model(
            tensors,
            [
                ("FULLY_CONNECTED", [0, 1, -1], [2], fc),
                ("FULLY_CONNECTED", [3, 4, -1], [5], fc),
                ("RELU", [5], [6], None),
            ],
            [0, 3],
            [2, 6],
        )
    )
    return read(path).main


def test_every_refused_layer_is_listed_with_a_remedy(tmp_path):
    g = _two_branches(tmp_path, (True, True))
    with pytest.raises(UnsupportedError) as exc:
        lower(g)
    text = str(exc.value)
    assert text.startswith("2 layers cannot be lowered: ")
    assert "op 0 (FULLY_CONNECTED)" in text and "op 1 (FULLY_CONNECTED)" in text
    assert "op 2 (RELU)" not in text  # reads a refused layer: not piled on
    assert "out0" in text and "out1" in text
    assert text.count("remedy: run this layer in fx16, [[layer]] index = ") == 2
    assert "index = 0 format" in text and "index = 1 format" in text
    # One refused layer: just its message, the same as before.
    with pytest.raises(UnsupportedError) as exc:
        lower(_two_branches(tmp_path, (False, True)))
    assert str(exc.value).startswith("op 1 (FULLY_CONNECTED): ") and "op 0" not in str(exc.value)
