"""Element-wise unary ops MLI lacks (ELU, HARD_SWISH, ...): tflite mode equals LiteRT's reference
kernels on every int8 input under several quantizations, the fallback table layer makes the mli
executor agree with tflite mode, and the emitted C on the real MLI 2.0.2 library equals the
executor in the four builds (sa8, and fx16 with conversions around the fallback)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.graph import run_graph
from mlitool.execute.mli_bridge import run_mli
from mlitool.execute.presets import arith_for
from mlitool.mli.lower import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, single_op_model

# op -> the op code version LiteRT registers its int8 kernel under
OPS = {"ELU": 1}
# (input scale, input zero point, output scale, output zero point)
QUANT = [(0.05, 3, 0.04, 20), (0.1, -128, 0.1, -128), (0.0123, 60, 0.03, -100)]


def _model(tmp_path, op: str, q, shape=(1, 16, 16, 1)):
    path = tmp_path / f"{op.lower()}.tflite"
    sin, zin, sout, zout = q
    path.write_bytes(
        single_op_model(
            op,
            [T(list(shape), scale=[sin], zero_point=[zin])],
            [T(list(shape), scale=[sout], zero_point=[zout])],
            version=OPS[op],
        )
    )
    return path


def _every_int8(shape=(1, 16, 16, 1)) -> np.ndarray:
    return np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape((1,) + shape)


@pytest.mark.parametrize("q", QUANT, ids=lambda q: f"s{q[0]}z{q[1]}")
@pytest.mark.parametrize("op", sorted(OPS))
def test_tflite_mode_equals_litert_on_every_input(op, q, tmp_path):
    path = _model(tmp_path, op, q)
    g = read(path).main
    xs = {g.inputs[0]: _every_int8()}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("op", sorted(OPS))
def test_mli_mode_equals_tflite_mode(op, tmp_path):
    g = read(_model(tmp_path, op, QUANT[0])).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("fallback", "mlitool_lut8")
    xs = {g.inputs[0]: _every_int8()}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_fallback_c_on_the_real_library(op, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, op, QUANT[2])
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_mli1_refuses_with_the_reason(tmp_path):
    from mlitool.errors import UnsupportedError

    g = read(_model(tmp_path, "ELU", QUANT[0])).main
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")
