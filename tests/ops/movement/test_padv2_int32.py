"""PADV2 of an int32 activation with a value other than 0 (MLI's padding writes 0): the `pad32`
fallback C. tflite mode equals LiteRT, the mli executor equals LiteRT, the emitted C equals the
executor on the real MLI 2.0.2 library in the four builds (int32 edge values, also as the fill)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

I32 = np.iinfo(np.int32)


def _model(tmp_path, rank: int, value: int):
    """int32 x -> PADV2 (value) -> out; returns (path, input shape, output shape)."""
    shape = [1, 3, 4] if rank == 3 else [1, 3, 4, 2]
    pads = [[0, 0], [1, 2], [2, 1]] + ([[1, 0]] if rank == 4 else [])
    out = [1, 6, 7] + ([3] if rank == 4 else [])
    tensors = [
        T(shape, "int32"),
        T([rank, 2], "int32", data=np.array(pads, np.int32)),
        T([], "int32", data=np.array(value, np.int32)),
        T(out, "int32"),
    ]
    path = tmp_path / f"padv2_{rank}_{value}.tflite"
    ops = [("PADV2", [0, 1, 2], [3], options("PadV2Options"))]
    path.write_bytes(graph_model(tensors, ops, [0], [3]))
    return path, shape, out


@pytest.mark.parametrize("value", [7, int(I32.min), int(I32.max)])
@pytest.mark.parametrize("rank", [3, 4])
def test_int32_padv2_of_a_value(rank, value, mli_builds, tmp_path):
    path, shape, out = _model(tmp_path, rank, value)
    g = read(path).main
    xs = {0: np.random.default_rng(0).integers(I32.min, I32.max, (4, *shape)).astype(np.int32)}
    ref = reference_outputs(path, g, xs)[3]
    assert np.count_nonzero(ref == value) >= np.prod(out) - np.prod(shape)
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[3], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    assert [la.kernel for la in conv.model.layers] == ["mlitool_pad32"]
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][3], ref)
    H.assert_bit_exact(
        H.check(
            conv,
            H.compile_objects(conv, mli_cflags("2.0")),
            mli_builds,
            H.model_inputs(g, conv.model, xs),
        )
    )
