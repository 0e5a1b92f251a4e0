"""Element-wise unary ops MLI lacks (ELU, HARD_SWISH, GELU, EXP, LOG, RSQRT, SQRT, ABS, NEG):
tflite mode equals LiteRT's reference kernels on every int8 input under several quantizations
(extreme ones included), the fallback table layer makes the mli executor agree with tflite mode,
the emitted C on the real MLI 2.0.2 library equals the executor in the four builds (sa8, and fx16
with conversions around the fallback, between two MLI layers), and float mode follows LiteRT's
float kernels."""

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

# op -> the op code version the converter writes for int8 (LiteRT runs each)
OPS = {
    "ELU": 1,
    "HARD_SWISH": 1,
    "GELU": 2,
    "EXP": 2,
    "LOG": 2,
    "RSQRT": 2,
    "SQRT": 1,
    "ABS": 2,
    "NEG": 1,
}
# GELU twice: exact (erfc) and approximate (tanh)
VARIANTS = [(op, None) for op in sorted(OPS) if op != "GELU"] + [
    ("GELU", False),
    ("GELU", True),
]
# (input scale, input zero point, output scale, output zero point): ordinary ones, extremes
# (HARD_SWISH's right shifts past 15 bits with 0.0002 -> 2.5; EXP's and SQRT's overflow with
# 4.0 -> 0.07 and 0.5 -> 1e-9: SQRT converts 2^31 and more to INT32_MIN, so -128, or with a
# negative zero point wrapping to 127), and three
# random ones.
_rng = np.random.default_rng(23)
QUANT = [
    (0.05, 3, 0.04, 20),
    (0.1, -128, 0.1, -128),
    (0.0123, 60, 0.03, -100),
    (0.0002, -5, 2.5, 120),
    (4.0, 100, 0.07, -3),
    (0.5, -100, 1e-9, 0),
    (0.5, -100, 1e-9, -128),
] + [
    (float(np.float32(10 ** _rng.uniform(-3, 0.5))), int(_rng.integers(-128, 128)))
    + (float(np.float32(10 ** _rng.uniform(-3, 0.5))), int(_rng.integers(-128, 128)))
    for _ in range(3)
]
SHAPE = (1, 16, 16, 1)


def _opts(approximate):
    return None if approximate is None else options("GeluOptions", approximate=approximate)


def _model(tmp_path, op, q, approximate=None):
    path = tmp_path / f"{op.lower()}.tflite"
    sin, zin, sout, zout = q
    path.write_bytes(
        single_op_model(
            op,
            [T(list(SHAPE), scale=[sin], zero_point=[zin])],
            [T(list(SHAPE), scale=[sout], zero_point=[zout])],
            _opts(approximate),
            version=OPS[op],
        )
    )
    return path


def _chain(tmp_path, op, q, approximate=None):
    """LEAKY_RELU -> op -> RELU: the fallback between two MLI layers (negative values pass)."""
    path = tmp_path / f"chain_{op.lower()}.tflite"
    sin, zin, sout, zout = q
    tin = dict(scale=[sin], zero_point=[zin])
    tout = dict(scale=[sout], zero_point=[zout])
    shape = list(SHAPE)
    tensors = [T(shape, **tin), T(shape, **tin), T(shape, **tout), T(shape, **tout)]
    ops = [
        ("LEAKY_RELU", [0], [1], options("LeakyReluOptions", alpha=0.5)),
        (op, [1], [2], _opts(approximate)),
        ("RELU", [2], [3], None),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [3], {op: OPS[op]}))
    return path


def _every_int8(shape=SHAPE) -> np.ndarray:
    return np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape((1,) + shape)


def _id(v):
    op, approximate = v
    return op if approximate is None else f"{op}-{'tanh' if approximate else 'erf'}"


def _runs_in_tflite(variant, q) -> bool:
    """TFLite refuses HARD_SWISH with an input scale 128 times the output's or more (tested by
    test_hard_swish_refuses_what_tflite_refuses)."""
    return not (variant[0] == "HARD_SWISH" and q[0] >= 128 * q[2])


@pytest.mark.parametrize(
    "variant,q",
    [(v, q) for v in VARIANTS for q in QUANT if _runs_in_tflite(v, q)],
    ids=lambda x: (
        _id(x) if isinstance(x, tuple) and len(x) == 2 else f"s{x[0]:.3g}z{x[1]}-s{x[2]:.3g}z{x[3]}"
    ),
)
def test_tflite_mode_equals_litert_on_every_input(variant, q, tmp_path):
    op, approximate = variant
    g = read(_model(tmp_path, op, q, approximate)).main
    x = _every_int8()
    if op in ("RSQRT", "SQRT"):  # LiteRT stops on an input below the zero point
        x = np.maximum(x, np.int8(q[1]))
    xs = {g.inputs[0]: x}
    ref = reference_outputs(_model(tmp_path, op, q, approximate), g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)


def test_hard_swish_refuses_what_tflite_refuses(tmp_path):
    """An input scale 128 times the output scale or more: LiteRT's Prepare fails, tflite mode
    and lowering refuse with the reason."""
    from mlitool import oracle

    path = _model(tmp_path, "HARD_SWISH", (1.0, 0, 1.0 / 128, 0))
    assert "HARD_SWISH" in (oracle.cannot_load(path) or "")
    g = read(path).main
    with pytest.raises(UnsupportedError, match="128 or more times the output scale"):
        run_graph(g, {g.inputs[0]: _every_int8()}, "tflite")
    with pytest.raises(UnsupportedError, match="128 or more times the output scale"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_mli_mode_equals_tflite_mode(variant, tmp_path):
    op, approximate = variant
    g = read(_model(tmp_path, op, QUANT[0], approximate)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("fallback", "mlitool_lut8")
    xs = {g.inputs[0]: _every_int8()}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_fallback_c_on_the_real_library(variant, fmt, mli_builds, tmp_path):
    op, approximate = variant
    path = _chain(tmp_path, op, QUANT[2], approximate)
    conv = H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=4)
    H.assert_bit_exact(conv)


def test_mli1_refuses_with_the_reason(tmp_path):
    g = read(_model(tmp_path, "ELU", QUANT[0])).main
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")


# --- float models ----------------------------------------------------------------------------


def _float_model(tmp_path, op, approximate=None):
    path = tmp_path / f"{op.lower()}_float.tflite"
    t = T([1, 64], dtype="float32")
    path.write_bytes(single_op_model(op, [t], [t], _opts(approximate), version=1))
    return path


def _float_inputs(op) -> np.ndarray:
    x = np.linspace(-7.0, 7.0, 64, dtype=np.float32)
    return np.abs(x) + np.float32(0.01) if op in ("LOG", "RSQRT", "SQRT") else x


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_float_mode_follows_litert(variant, tmp_path):
    op, approximate = variant
    path = _float_model(tmp_path, op, approximate)
    g = read(path).main
    xs = {g.inputs[0]: _float_inputs(op).reshape(1, 1, 64)}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "float")[g.outputs[0]]
    np.testing.assert_allclose(ours, ref, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("variant", [("NEG", None), ("HARD_SWISH", None), ("GELU", True)], ids=_id)
def test_float_model_table_is_the_real_function(variant, tmp_path):
    """A float model quantized by mlitool tabulates the real function (not TFLite's int8
    arithmetic, which for NEG ignores the zero points): the mli result is within half an output
    step of float mode, plus half an input step times the function's largest slope (1.5)."""
    op, approximate = variant
    g = read(_float_model(tmp_path, op, approximate)).main
    (i,), (o,) = g.inputs, g.outputs
    model = lower(g, format="sa8", ranges={i: (-7.0, 7.0), o: (-7.0, 3.0)})
    x = _float_inputs(op).reshape(1, 1, 64)
    ours, _ = run_mli(g, model, {i: x}, arith_for("vpx"))
    bound = 10.0 / 255 / 2 + 1.5 * 14.0 / 255 / 2
    want = np.clip(run_graph(g, {i: x}, "float")[o], -7.0, 3.0)
    assert np.abs(ours[o] - want).max() <= bound


def test_int16_is_refused_with_the_reason(tmp_path):
    """16x8 models: the int16 form of these ops would need a 65536-entry table."""
    path = tmp_path / "gelu16.tflite"
    t = T(list(SHAPE), dtype="int16", scale=[0.001], zero_point=[0])
    path.write_bytes(single_op_model("GELU", [t], [t], _opts(False), version=2))
    g = read(path).main
    with pytest.raises(UnsupportedError, match=r"GELU on int8 tensors only.*65536 entries"):
        lower(g, format="fx16", mli_version="2.0", layout="hwc")


def test_erfc64_matches_libm():
    """GELU's erfc (numpy, vectorised) against C's erfc: both sides of the 1.5 switch."""
    import math

    from mlitool.ops.unary.functions import erfc64

    z = np.concatenate([np.linspace(-6.0, 26.0, 4001), [1.5, np.nextafter(1.5, 0), -1.5, 0.0]])
    want = np.array([math.erfc(v) for v in z])
    np.testing.assert_allclose(erfc64(z), want, rtol=1e-13, atol=0)
