"""LOG_SOFTMAX (int8, TFLite's fixed-point exp and log over the last axis) on the `log_softmax8`
fallback: tflite mode equals LiteRT's reference kernel on many random and structured inputs
under several input scales (extremes included), float mode LiteRT's float kernel, the mli
executor tflite mode, and the emitted C on the real MLI 2.0.2 library the executor in the four
builds (sa8, and fx16 with conversions around the fallback, between two MLI layers). What
TFLite refuses or leaves undefined is refused with the reason."""

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
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options, single_op_model

OUT = dict(scale=[16 / 256], zero_point=[127])  # TFLite requires these
# (input scale, zero point): ordinary ones; 40.0, where most differences fall below diff_min;
# 1e-5 and 2^-25 (just above TFLite's 2^-26), where every exp is near 1; three random ones.
_rng = np.random.default_rng(23)
QUANT = [(0.05, 3), (0.1, -128), (0.3, 60), (1.0, 0), (40.0, -20), (1e-5, 7), (2.0**-25, 0)] + [
    (float(np.float32(10 ** _rng.uniform(-3, 0.7))), int(_rng.integers(-128, 128)))
    for _ in range(3)
]
# rows of 10; rows of 7 in a 3-D tensor; rows of 300; 4095, the longest TFLite cannot overflow
SHAPES = [(1, 10), (1, 3, 7), (1, 2, 300), (1, 4095)]


def _model(tmp_path, shape, q, out=None, dtype="int8"):
    path = tmp_path / "log_softmax.tflite"
    tin = T(list(shape), dtype, scale=[q[0]], zero_point=[q[1]])
    tout = T(list(shape), dtype, **(out or OUT))
    path.write_bytes(single_op_model("LOG_SOFTMAX", [tin], [tout], version=2))
    return path


def _inputs(shape, n=24, seed=0) -> np.ndarray:
    """Random rows, and rows that reach the arithmetic's corners: all equal (the largest sum),
    one maximum over -128 (the smallest), and narrow ranges near the top."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (n, *shape))
    x[1] = 127
    x[2] = -128
    x[2, ..., 0] = 127
    spans = np.array([2, 4, 8, 16, 32]).reshape((5,) + (1,) * len(shape))
    x[3:8] = 127 - rng.integers(0, 1 << 20, (5, *shape)) % spans
    return x.astype(np.int8)


def _id(v):
    return f"s{v[0]:.3g}z{v[1]}" if isinstance(v[0], float) else "x".join(map(str, v))


@pytest.mark.parametrize("shape", SHAPES, ids=_id)
@pytest.mark.parametrize("q", QUANT, ids=_id)
def test_tflite_mode_equals_litert(q, shape, tmp_path):
    path = _model(tmp_path, shape, q)
    g = read(path).main
    xs = {g.inputs[0]: _inputs(shape, n=8 if shape[-1] > 1000 else 24)}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("q", QUANT[:4], ids=_id)
def test_mli_mode_equals_tflite_mode(q, tmp_path):
    g = read(_model(tmp_path, (1, 3, 7), q)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("fallback", "mlitool_log_softmax8")
    xs = {g.inputs[0]: _inputs((1, 3, 7), n=64)}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


def _chain(tmp_path, q):
    """LEAKY_RELU -> LOG_SOFTMAX -> LEAKY_RELU: the fallback between two MLI layers."""
    path = tmp_path / "chain.tflite"
    shape = [1, 8, 64]
    tin = dict(scale=[q[0]], zero_point=[q[1]])
    ts = [T(shape, **tin), T(shape, **tin), T(shape, **OUT), T(shape, **OUT)]
    leaky = options("LeakyReluOptions", alpha=0.5)
    ops = [
        ("LEAKY_RELU", [0], [1], leaky),
        ("LOG_SOFTMAX", [1], [2], None),
        ("LEAKY_RELU", [2], [3], leaky),
    ]
    path.write_bytes(graph_model(ts, ops, [0], [3], {"LOG_SOFTMAX": 2}))
    return path


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("q", [QUANT[0], QUANT[4]], ids=_id)
def test_fallback_c_on_the_real_library(q, fmt, mli_builds, tmp_path):
    path = _chain(tmp_path, q)
    # 64 samples of 8 rows of 64: enough that an error in the exp or the log below an output
    # step moves some result across a rounding boundary
    conv = H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=64)
    H.assert_bit_exact(conv)


# --- what TFLite refuses ---------------------------------------------------------------------


def test_output_parameters_other_than_tflites_are_refused(tmp_path):
    g = read(_model(tmp_path, (1, 10), QUANT[0], out=dict(scale=[0.1], zero_point=[127]))).main
    with pytest.raises(UnsupportedError, match="not scale 16/256, zero point 127"):
        run_graph(g, {g.inputs[0]: _inputs((1, 10))}, "tflite")
    with pytest.raises(UnsupportedError, match="output scale 16/256 and zero point 127, not 0.1"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")


def test_rows_longer_than_4095_are_refused(tmp_path):
    """From 4096 equal elements on TFLite's Q12.19 sum of exps overflows (undefined behaviour
    in its C++): tflite mode and lowering refuse."""
    g = read(_model(tmp_path, (1, 4096), QUANT[0])).main
    with pytest.raises(UnsupportedError, match="rows of 4096 elements"):
        run_graph(g, {g.inputs[0]: _inputs((1, 4096), n=8)}, "tflite")
    with pytest.raises(UnsupportedError, match="rows of 4096 elements"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")


def test_int16_and_mli1_are_refused_with_the_reason(tmp_path):
    g = read(_model(tmp_path, (1, 10), (0.001, 0), dict(scale=[0.001], zero_point=[0]), "int16"))
    with pytest.raises(UnsupportedError, match="TFLite has no int16 LOG_SOFTMAX kernel"):
        lower(g.main, format="fx16", mli_version="2.0", layout="hwc")
    g = read(_model(tmp_path, (1, 10), QUANT[0])).main
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")


# --- float models ----------------------------------------------------------------------------


def _float_model(tmp_path, shape=(1, 3, 16)):
    path = tmp_path / "log_softmax_float.tflite"
    t = T(list(shape), "float32")
    path.write_bytes(single_op_model("LOG_SOFTMAX", [t], [t]))
    return path


def test_float_mode_equals_litert(tmp_path):
    """The sum of exps in float32 element after element, as TFLite's loop: a pairwise sum would
    differ in a quarter of the results. expf / logf may differ from libm's in the last bit."""
    path = _float_model(tmp_path, (1, 8, 300))
    g = read(path).main
    xs = {g.inputs[0]: np.random.default_rng(1).normal(0, 4, (16, 1, 8, 300)).astype(np.float32)}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    for mode in ("float", "tflite"):
        ours = run_graph(g, xs, mode)[g.outputs[0]]
        np.testing.assert_array_max_ulp(ours, ref, maxulp=1)
        assert (ours != ref).mean() < 1e-3


def test_float_model_with_calibration(tmp_path):
    """A float model quantized from ranges: TFLite's int8 arithmetic with the calibrated input
    scale, then a convert to the calibrated output parameters. Within half a Q4 step (1/32) and
    half an output step (6/255) of float mode, plus the input's rounding: x - logsumexp(x) moves
    by at most one input step (16/255) when each element moves by half of one."""
    g = read(_float_model(tmp_path)).main
    (i,), (o,) = g.inputs, g.outputs
    model = lower(g, format="sa8", ranges={i: (-8.0, 8.0), o: (-12.0, 0.0)})
    assert [la.kind for la in model.layers] == ["fallback", "convert"]
    x = np.random.default_rng(2).uniform(-8, 8, (32, 1, 3, 16)).astype(np.float32)
    ours, _ = run_mli(g, model, {i: x}, arith_for("vpx"))
    want = np.maximum(run_graph(g, {i: x}, "float")[o], -12.0)
    assert np.abs(ours[o] - want).max() <= 1 / 32 + 6 / 255 + 16 / 255


# --- the C's fixed-point helpers, value by value -----------------------------------------------

_DRIVER = """
#include <stdio.h>
#include "mli_api.h"
typedef struct { int32_t multiplier, shift, reverse_multiplier, reverse_shift, diff_min; } cfg_t;
@SOURCE@
int main(int argc, char **argv) {
    int32_t v, r;
    char op = argc > 1 ? argv[1][0] : 'l';
    while (fread(&v, sizeof v, 1, stdin) == 1) {
        r = op == 'e' ? lsm_exp(v) : (op == 'r' ? lsm_recip(v) : lsm_log(v));
        fwrite(&r, sizeof r, 1, stdout);
    }
    return 0;
}
"""


def test_c_exp_reciprocal_and_log_equal_the_executors(tmp_path):
    """The output's Q4 steps hide most errors in the exp, the reciprocal and the log; here the
    C's helpers meet tflite mode's on 100000 values each (random over their domains, and the
    powers of two around them), raw Q0.31 / Q5.26 for raw."""
    import subprocess

    from mlitool.execute.reference import fixedpoint as fp
    from mlitool.mli.fallback import PRELUDE
    from mlitool.mli.fallback_fixedpoint import FIXEDPOINT
    from mlitool.ops.log_softmax import reference as LX
    from mlitool.ops.log_softmax.c_kernel import LOG_SOFTMAX8

    unused = "static __attribute__((unused)) "
    prelude = (PRELUDE + FIXEDPOINT).replace("static ", "static __attribute__((unused)) ")
    source = (prelude + LOG_SOFTMAX8.c_source).replace("@P@", "lsmp").replace("@FN@", "lsm")
    source = source.replace("@STORAGE@", unused).replace("@CFG@", "cfg_t")
    source = source.replace("static int32_t", unused + "int32_t")
    (tmp_path / "d.c").write_text(_DRIVER.replace("@SOURCE@", source))
    exe = tmp_path / "d"
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"]
    cc = subprocess.run(
        ["gcc", *flags, *mli_cflags("2.0"), str(tmp_path / "d.c"), "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    assert cc.returncode == 0, cc.stderr[-3000:]

    rng = np.random.default_rng(5)
    pow2 = np.concatenate([(1 << np.arange(31)) + d for d in (-1, 0, 1)])
    domains = {  # op -> (values, tflite mode's function)
        "e": (-rng.integers(0, 1 << 31, 100000), lambda a: fp.exp_on_negative_values(a, 5)),
        "r": (rng.integers(0, 1 << 31, 100000), fp.one_over_one_plus_x_for_x_in_0_1),
        "l": (
            np.exp2(rng.uniform(0, 31, 100000)).astype(np.int64),
            lambda z: LX.log_x_ge_1(z, 12, 5),
        ),
    }
    for op, (values, fn) in domains.items():
        sign = -1 if op == "e" else 1
        v = np.concatenate([values, sign * pow2[pow2 > 0]]).clip(-(1 << 31), (1 << 31) - 1)
        run = subprocess.run([str(exe), op], input=v.astype("<i4").tobytes(), capture_output=True)
        got = np.frombuffer(run.stdout, "<i4")
        np.testing.assert_array_equal(got, fn(v), err_msg=op)
