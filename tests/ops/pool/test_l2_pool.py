"""L2_POOL_2D (float32 only in TFLite and TFLite Micro): float and tflite mode equal LiteRT's
float32 kernel bit for bit (VALID and SAME windows, strides, a fused activation); an int8
L2_POOL_2D is refused by tflite mode (no TFLite kernel) and by lowering (no kernel yet)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, options, single_op_model

SHAPE = [1, 7, 9, 3]
# (filter, stride, padding, activation, output shape)
CASES = [
    ((2, 2), (2, 2), "VALID", "NONE", [1, 3, 4, 3]),
    ((3, 3), (1, 1), "SAME", "NONE", [1, 7, 9, 3]),
    ((3, 2), (2, 3), "SAME", "RELU6", [1, 4, 3, 3]),
]


def _model(tmp_path, case, dtype="float32"):
    (fh, fw), (sh, sw), pad, act, out = case
    opts = options(
        "Pool2DOptions",
        padding={"SAME": 0, "VALID": 1}[pad],
        strideW=sw,
        strideH=sh,
        filterWidth=fw,
        filterHeight=fh,
        fusedActivationFunction={"NONE": 0, "RELU6": 3}[act],
    )
    q = {} if dtype == "float32" else dict(scale=[0.05], zero_point=[0])
    path = tmp_path / f"l2_{fh}{fw}_{sh}{sw}_{pad}_{act}_{dtype}.tflite"
    path.write_bytes(
        single_op_model("L2_POOL_2D", [T(SHAPE, dtype, **q)], [T(out, dtype, **q)], opts)
    )
    return path


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_float_and_tflite_mode_equal_litert_bit_exactly(case, tmp_path):
    path = _model(tmp_path, case)
    g = read(path).main
    x = np.random.default_rng(2).uniform(-4, 4, (3, *SHAPE)).astype(np.float32)
    x[1] *= np.float32(1e5)
    ref = reference_outputs(path, g, {0: x})[1]
    assert ref.shape[1:] == tuple(case[-1])
    for mode in ("float", "tflite"):
        got = run_graph(g, {0: x}, mode)[1]
        np.testing.assert_array_equal(got.view(np.int32), ref.view(np.int32), err_msg=mode)


def test_int8_l2_pool_is_refused(tmp_path):
    g = read(_model(tmp_path, CASES[0], "int8")).main
    with pytest.raises(UnsupportedError, match="float32 only"):
        run_graph(g, {0: np.zeros((1, *SHAPE), np.int8)}, "tflite")
    with pytest.raises(UnsupportedError, match="L2_POOL_2D"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")
