"""PAD of a rank-3 [1, T, C] tensor (a causal Conv1D's left padding, Keras TCNs): lowered onto
MLI 2.x's mli_mov padding of the MLI tensor [T, C], tflite mode equal to LiteRT, the executor
pads exactly those elements, and the emitted C on the real MLI 2.0.2 library is bit-exact
against the executor in the four builds (sa8, fx16 with converts around). MLI 1.x refuses it."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, single_op_model

PADS = {"causal": [[0, 0], [4, 0], [0, 0]], "both": [[0, 0], [2, 1], [1, 2]]}


def _model(tmp_path, name: str, zero_point: int):
    pads = np.int32(PADS[name])
    shape = [1, 7, 3]
    out = [shape[i] + int(pads[i].sum()) for i in range(3)]
    path = tmp_path / f"pad3_{name}_{zero_point}.tflite"
    q = dict(scale=[0.05], zero_point=[zero_point])
    path.write_bytes(
        single_op_model("PAD", [T(shape, **q), T([3, 2], dtype="int32", data=pads)], [T(out, **q)])
    )
    return path


@pytest.mark.parametrize("zero_point", [0, -128])
@pytest.mark.parametrize("name", sorted(PADS))
def test_tflite_and_mli_modes_equal_litert(name, zero_point, tmp_path):
    from mlitool.oracle import available, run_litert

    ok, why = available()
    if not ok:
        pytest.skip(why)
    path = _model(tmp_path, name, zero_point)
    g = read(path).main
    x = np.random.default_rng(1).integers(-128, 128, (4, 1, 7, 3), dtype=np.int8)
    y = g.outputs[0]
    ref = run_litert(path, g, {g.inputs[0]: x}, [y])[y]
    np.testing.assert_array_equal(run_graph(g, {g.inputs[0]: x}, "tflite")[y], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert "padding" in [la.kind for la in model.layers]
    got, _ = run_mli(g, model, {g.inputs[0]: x}, arith_for())
    np.testing.assert_array_equal(got[y].reshape(ref.shape), ref)
    # the border holds the zero point: real zero
    before = PADS[name][1][0]
    assert (ref[:, :, :before] == zero_point).all() and before > 0


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("zero_point", [0, -128])
def test_rank3_padding_on_the_real_library(zero_point, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, "both", zero_point)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_mli1_refuses_rank3_padding(tmp_path):
    g = read(_model(tmp_path, "causal", 0)).main
    with pytest.raises(UnsupportedError, match="PAD is lowered only for padding of H, W"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")
