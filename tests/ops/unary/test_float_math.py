"""CEIL, FLOOR, ROUND, SIN, COS and FLOOR_DIV / FLOOR_MOD by a constant (TFLite: float32 only).

Float models: float and tflite mode equal LiteRT's float32 kernels bit for bit (halves, -0.0,
large values); a float model converts (calibrated) onto the table of the real function. In an
int8 model each is a float island (DEQUANTIZE -> op -> QUANTIZE) that import folds into the op
on the int8 tensors with the island's 256 results: tflite mode equals LiteRT on every int8
input, the mli executor equals tflite mode, and the emitted C (lut8) equals the executor on the
real MLI 2.0.2 library in the four builds.

LiteRT's reference resolver has no CEIL / ROUND, so the whole island model then runs on LiteRT's
builtin kernels, whose QUANTIZE multiplies by the inverse scale in its vector path where the
reference (and TFLite Micro) kernel divides: on an exact half (-1.0 / 0.0235294 = -42.5) the two
differ. The island's oracle is therefore LiteRT's kernels one at a time: the reference
DEQUANTIZE, the op's float32 kernel, the reference QUANTIZE."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_TABLE
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, graph_model, single_op_model

UNARY = ["CEIL", "FLOOR", "ROUND", "SIN", "COS"]
DIVISOR = {"FLOOR_DIV": [0.3, -0.7, 2.0], "FLOOR_MOD": [0.3, -0.7, 2.0]}
OPS = UNARY + list(DIVISOR)
SHAPE = [1, 16, 16, 1]
# (input scale, zero point, output scale, zero point)
QUANT = [(0.0235174, 0, 0.0235294122, -1), (0.05, -20, 0.1, 10), (0.2, 30, 0.01, -128)]


def _float_values() -> np.ndarray:
    """Halves of both parities, -0.0, values near and beyond 2^23, and a seeded spread."""
    special = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 0.0, -0.3, 0.3, 8388607.5, -8388609.0]
    special += [1e10, -1e10, 3.14159265, 100.0, -100.0, 1e-30]
    rng = np.random.default_rng(35)
    spread = rng.uniform(-20, 20, 256 - len(special))
    return np.concatenate([special, spread]).astype(np.float32).reshape(1, 1, 256)


def _float_model(tmp_path, op: str, divisor: float | None = None):
    path = tmp_path / f"{op.lower()}_float.tflite"
    t = T([1, 256], "float32")
    if divisor is None:
        path.write_bytes(single_op_model(op, [t], [t]))
    else:
        d = T([], "float32", data=np.float32(divisor))
        path.write_bytes(single_op_model(op, [t, d], [t]))
    return path


def _cases():
    for op in UNARY:
        yield op, None
    for op, ds in DIVISOR.items():
        for d in ds:
            yield op, d


@pytest.mark.parametrize("op, divisor", list(_cases()))
def test_float_and_tflite_mode_equal_litert_bit_exactly(op, divisor, tmp_path):
    path = _float_model(tmp_path, op, divisor)
    g = read(path).main
    xs = {g.inputs[0]: _float_values()}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    for mode in ("float", "tflite"):
        got = run_graph(g, xs, mode)[g.outputs[0]]
        np.testing.assert_array_equal(got.view(np.int32), ref.view(np.int32), err_msg=mode)


def _island(tmp_path, op: str, q, divisor: float | None = None, relu: bool = False):
    """int8 x [-> RELU] -> DEQUANTIZE -> op [, divisor] -> QUANTIZE [-> RELU]."""
    sin, zin, sout, zout = q
    tq_in, tq_out = dict(scale=[sin], zero_point=[zin]), dict(scale=[sout], zero_point=[zout])
    tensors = [
        T(SHAPE, **tq_in),  # 0 x
        T(SHAPE, "float32"),  # 1 dequantized
        T(SHAPE, "float32"),  # 2 op
        T(SHAPE, **tq_out),  # 3 y
        T([], "float32", data=np.float32(divisor or 1)),  # 4 divisor
        T(SHAPE, **tq_in),  # 5 relu(x)
        T(SHAPE, **tq_out),  # 6 relu(y)
    ]
    x, y = (5, 6) if relu else (0, 3)
    ops = [
        ("DEQUANTIZE", [x], [1], None),
        (op, [1] if divisor is None else [1, 4], [2], None),
        ("QUANTIZE", [2], [3], None),
    ]
    if relu:
        ops = [("RELU", [0], [5], None), *ops, ("RELU", [3], [6], None)]
    path = tmp_path / f"{op.lower()}_island.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [y]))
    return path


def _every_int8() -> np.ndarray:
    return np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape((1, *SHAPE))


def _litert_chain(tmp_path, op: str, q, divisor) -> np.ndarray:
    """LiteRT's results of the island for every int8 input, one kernel at a time."""
    sin, zin, sout, zout = q
    deq = tmp_path / "deq.tflite"
    deq.write_bytes(
        single_op_model(
            "DEQUANTIZE", [T(SHAPE, scale=[sin], zero_point=[zin])], [T(SHAPE, "float32")]
        )
    )
    quant = tmp_path / "quant.tflite"
    quant.write_bytes(
        single_op_model(
            "QUANTIZE", [T(SHAPE, "float32")], [T(SHAPE, scale=[sout], zero_point=[zout])]
        )
    )
    fop = tmp_path / "op.tflite"
    t = T(SHAPE, "float32")
    ins = [t] if divisor is None else [t, T([], "float32", data=np.float32(divisor))]
    fop.write_bytes(single_op_model(op, ins, [t]))
    value = _every_int8()
    for path in (deq, fop, quant):
        g = read_model(path).main
        value = reference_outputs(path, g, {g.inputs[0]: value})[g.outputs[0]]
    return value


@pytest.mark.parametrize("q", QUANT, ids=lambda q: f"s{q[0]:.3g}z{q[1]}-s{q[2]:.3g}z{q[3]}")
@pytest.mark.parametrize("op", OPS)
def test_island_is_the_int8_op_equal_to_litert_on_every_input(op, q, tmp_path):
    divisor = DIVISOR[op][1] if op in DIVISOR else None
    path = _island(tmp_path, op, q, divisor)
    model = read(path)
    g = model.main
    assert [o.type for o in g.ops] == [op]
    assert len(g.ops[0].options[ISLAND_TABLE]) == 256
    xs = {0: _every_int8()}
    ours = run_graph(g, xs, "tflite")[3]
    np.testing.assert_array_equal(ours, _litert_chain(tmp_path, op, q, divisor))
    if op not in ("CEIL", "ROUND"):  # the reference resolver runs the whole island
        np.testing.assert_array_equal(ours, reference_outputs(path, read_model(path).main, xs)[3])
    mli = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [(la.kind, la.kernel) for la in mli.layers] == [("fallback", "mlitool_lut8")]
    got, _ = run_mli(g, mli, xs, arith_for())
    np.testing.assert_array_equal(got[3].reshape(ours.shape), ours)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("op", ["ROUND", "SIN", "FLOOR_MOD"])
def test_island_c_equals_the_executor(op, fmt, mli_builds, tmp_path):
    path = _island(tmp_path, op, QUANT[1], DIVISOR.get(op, [None])[0], relu=True)
    assert [o.type for o in read(path).main.ops] == ["RELU", op, "RELU"]
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("op, divisor", [("COS", None), ("FLOOR_DIV", 0.3)])
def test_float_model_converts_onto_the_table_of_the_real_function(
    op, divisor, mli_builds, tmp_path
):
    path = _float_model(tmp_path, op, divisor)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(3).uniform(-3, 3, (8, 1, 256)).astype(np.float32))
    conv = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calib
    )
    H.assert_bit_exact(conv)


CORPUS = ROOT / "tests" / "corpus_ops"


@pytest.mark.parametrize("op", [o.lower() for o in OPS])
def test_op_corpus_island_file_is_one_int8_op(op):
    g = read(CORPUS / f"{op}_int8.tflite").main
    assert [o.type for o in g.ops] == [op.upper()]
    lower(g, format="sa8", mli_version="2.0", layout="hwc")
