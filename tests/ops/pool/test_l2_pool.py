"""L2_POOL_2D (float32 only in TFLite and TFLite Micro): float and tflite mode equal LiteRT's
float32 kernel bit for bit (VALID and SAME windows, strides, a fused activation); an int8
L2_POOL_2D is refused by tflite mode (no TFLite kernel); a float model quantized by mlitool runs the
`l2pool8` fallback C (integers only), within one step of the real L2 pool, its emitted C equal to
the mli executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
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


def test_int8_l2_pool_is_refused_by_tflite_mode(tmp_path):
    g = read(_model(tmp_path, CASES[0], "int8")).main
    with pytest.raises(UnsupportedError, match="float32 only"):
        run_graph(g, {0: np.zeros((1, *SHAPE), np.int8)}, "tflite")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_calibrated_model_c_equals_the_executor(case, mli_builds, tmp_path):
    path = _model(tmp_path, case)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(1).uniform(-4, 4, (8, *SHAPE)).astype(np.float32))
    conv = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calib
    )
    H.assert_bit_exact(conv)
    layers = json.loads((tmp_path / "out" / "net.json").read_text())["layers"]
    assert [la["kernel"] for la in layers] == ["mlitool_l2pool8"]


@pytest.mark.parametrize("seed", range(4))
def test_l2pool8_within_one_step_of_the_real_pool(seed, tmp_path):
    """The numpy twin (which the C equals, above) against L2 pooling of the real values."""
    from mlitool.ops.pool.l2_pool_c import l2pool_twin, scale_factor

    rng = np.random.default_rng(seed)
    s_in, s_out = float(10 ** rng.uniform(-3, -1)), float(10 ** rng.uniform(-3, -1))
    z_in, z_out = int(rng.integers(-128, 128)), int(rng.integers(-128, 0))
    x = rng.integers(-128, 128, (2, 7, 9, 3)).astype(np.int8)
    k2, g = scale_factor(s_in / s_out)
    cfg = dict(kh=3, kw=2, sh=2, sw=3, pt=1, pl=0, zp_in=z_in, k2=k2, g=g)
    cfg |= dict(out_zp=z_out, lo=-128, hi=127)
    got = l2pool_twin(x, cfg, 4, 3).astype(np.int64)
    real = (x.astype(np.float64) - z_in) * s_in
    want = np.zeros_like(got, dtype=np.float64)
    for oy in range(4):
        for ox in range(3):
            rows = slice(max(oy * 2 - 1, 0), min(oy * 2 - 1 + 3, 7))
            cols = slice(ox * 3, min(ox * 3 + 2, 9))
            want[:, oy, ox] = np.sqrt((real[:, rows, cols] ** 2).mean(axis=(1, 2)))
    want = np.clip(np.round(want / s_out) + z_out, -128, 127)
    assert np.abs(got - want).max() <= 1
