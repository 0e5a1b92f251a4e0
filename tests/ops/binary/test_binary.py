"""Binary ops on fallback C (`binary8`): DIV and SQUARED_DIFFERENCE, which MLI lacks, and ADD,
SUB, MUL, MAXIMUM, MINIMUM where an activation broadcasts against a constant. tflite mode equals
LiteRT's reference kernels (every int8 pair, several quantizations), the mli executor equals
tflite mode, the emitted C on the real MLI 2.0.2 library equals the executor in the four builds
(sa8, and fx16 with conversions around the fallback), and what converted through MLI before
still does."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.mli.target import target_of
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options, single_op_model

ELTWISE = ["ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "DIV", "SQUARED_DIFFERENCE"]
OPTIONS = {
    "ADD": "AddOptions",
    "SUB": "SubOptions",
    "MUL": "MulOptions",
    "DIV": "DivOptions",
}
# ((scale, zero point) of input 1, input 2, output)
QUANT = [
    ((0.05, 3), (0.04, -2), (0.1, 1)),
    ((0.1, -128), (0.02, 100), (0.3, -20)),
    ((0.5, 10), (0.01, -5), (0.02, 7)),
    ((0.05, 0), (0.05, 0), (0.05, 0)),
]
ACTS = {"NONE": 0, "RELU": 1, "RELU6": 3}


def _t(shape, q, data=None) -> T:
    return T(list(shape), scale=[q[0]], zero_point=[q[1]], data=data)


def _opts(op: str, act: str = "NONE"):
    name = OPTIONS.get(op)
    return options(name, fusedActivationFunction=ACTS[act]) if name else None


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def _every_pair() -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) of int8 values, as two [1, 1, 256, 256] batches."""
    v = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(1, 1, 256, 256), b.reshape(1, 1, 256, 256)


def _no_zero_divisor(b: np.ndarray, zp: int) -> np.ndarray:
    """LiteRT refuses a divisor at the zero point: the next level instead."""
    return np.where(b == zp, np.int8(zp + 1 if zp < 127 else zp - 1), b).astype(np.int8)


@pytest.mark.parametrize("q", QUANT, ids=lambda q: f"z{q[0][1]}_{q[1][1]}_{q[2][1]}")
@pytest.mark.parametrize("op", ["DIV", "SQUARED_DIFFERENCE"])
def test_tflite_mode_equals_litert_on_every_pair(op, q, tmp_path):
    """All 65536 operand pairs, once elementwise and once with the second operand broadcast
    along a row (TFLite's broadcasting kernel); DIV with a fused RELU6 as well."""
    a, b = _every_pair()
    if op == "DIV":
        b = _no_zero_divisor(b, q[1][1])
    for shape2, act in (((1, 256, 256), "NONE"), ((1, 1, 256), "RELU6")):
        if op != "DIV" and act != "NONE":
            continue
        model = single_op_model(
            op,
            [_t((1, 256, 256), q[0]), _t(shape2, q[1])],
            [_t((1, 256, 256), q[2])],
            _opts(op, act),
        )
        path = _write(tmp_path, f"{op.lower()}_{act}", model)
        g = read(path).main
        xs = {g.inputs[0]: a, g.inputs[1]: b[:, :, : shape2[1], :]}
        ref = reference_outputs(path, g, xs)[g.outputs[0]]
        np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


def _const_model(tmp_path, op: str, q, act: str = "NONE", const_first: bool = False):
    """An activation [1, 16, 1] against a constant [16, 16] (the issue's MUL), output [1,16,16]."""
    rng = np.random.default_rng(len(op))
    c = _t((16, 16), q[0] if const_first else q[1], rng.integers(-128, 128, (16, 16), np.int8))
    x = _t((1, 16, 1), q[1] if const_first else q[0])
    ins = [c, x] if const_first else [x, c]
    model = single_op_model(op, ins, [_t((1, 16, 16), q[2])], _opts(op, act))
    return _write(tmp_path, f"{op.lower()}_const", model)


def _random(g, n=64, seed=1) -> dict:
    rng = np.random.default_rng(seed)
    return {i: rng.integers(-128, 128, (n,) + tuple(g.tensors[i].shape), np.int8) for i in g.inputs}


@pytest.mark.parametrize("op", ELTWISE)
def test_tflite_mode_broadcasts_against_a_constant_as_litert(op, tmp_path):
    act = "RELU" if op in OPTIONS else "NONE"
    path = _const_model(tmp_path, op, QUANT[1], act, const_first=op in ("SUB", "DIV"))
    g = read(path).main
    xs = _random(g)
    if op == "DIV":  # the activation is the divisor here
        xs = {k: _no_zero_divisor(v, QUANT[1][1][1]) for k, v in xs.items()}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("op", ELTWISE)
def test_mli_mode_equals_tflite_mode(op, tmp_path):
    act = "RELU6" if op in OPTIONS else "NONE"
    g = read(_const_model(tmp_path, op, QUANT[2], act, const_first=op in ("SUB", "DIV"))).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("fallback", "mlitool_binary8")
    # the constant keeps its 256 bytes (MLI's route would materialize it at the output's shape)
    assert [model.tensor(n).shape for n in layer.inputs][1 if op in ("SUB", "DIV") else 0] == (
        16,
        1,
    )
    xs = _random(g, n=32)  # DIV: zero divisors too (both sides saturate alike)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize(
    "shapes,const,kernel",
    [
        (((1, 4, 4, 8), (1, 1, 1, 8)), None, "mli_krn_eltwise_add_sa8"),  # slices of activations
        (((1, 4, 4, 8), (1, 1, 1, 8)), 1, "mli_krn_eltwise_add_sa8"),  # materialized constant
        (((1, 4, 4, 8), (1,)), 1, "mli_krn_eltwise_add_sa8"),  # scalar
    ],
)
def test_what_mli_takes_stays_on_mli(shapes, const, kernel, tmp_path):
    q = QUANT[0]
    data = np.arange(8, dtype=np.int8)[: shapes[1][-1]].reshape(shapes[1]) if const else None
    model = single_op_model(
        "ADD",
        [_t(shapes[0], q[0]), _t(shapes[1], q[1], data)],
        [_t(shapes[0], q[2])],
        _opts("ADD"),
    )
    g = read(_write(tmp_path, "add", model)).main
    m = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in m.layers] == [kernel]


def test_16x8_broadcast_against_a_constant_is_still_refused(tmp_path):
    model = single_op_model(
        "MUL",
        [
            T([1, 16, 1], "int16", [0.001], 0),
            T([16, 16], "int16", [0.001], 0, data=np.ones((16, 16), np.int16)),
        ],
        [T([1, 16, 16], "int16", [0.001], 0)],
        _opts("MUL"),
    )
    g = read(_write(tmp_path, "mul16", model)).main
    (reason,) = unsupported_ops(g, target_of("2.0"))
    assert "the runtime moves views of activations only" in reason
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(
            read(_const_model(tmp_path, "DIV", QUANT[0])).main,
            format="sa8",
            mli_version="1.1",
            layout="hwc",
        )


def _branches_model(tmp_path) -> bytes:
    """x [1,16,1] -> RELU -> each element-wise op against its own constant [16,16] (SUB and
    DIV with the constant first), DIV followed by a RELU: the fallback between MLI layers."""
    q = QUANT[1]
    rng = np.random.default_rng(7)
    tensors = [_t((1, 16, 1), q[0]), _t((1, 16, 1), q[0])]
    ops = [("RELU", [0], [1], None)]
    outputs = []
    for op in ELTWISE:
        c = len(tensors)
        tensors.append(_t((16, 16), q[1], rng.integers(-128, 128, (16, 16), np.int8)))
        tensors.append(_t((1, 16, 16), q[2]))
        ins = [c, 1] if op in ("SUB", "DIV") else [1, c]
        ops.append((op, ins, [c + 1], _opts(op)))
        outputs.append(c + 1)
    tensors.append(_t((1, 16, 16), q[2]))
    ops.append(("RELU", [outputs[-2]], [len(tensors) - 1], None))
    outputs[-2] = len(tensors) - 1
    return graph_model(tensors, ops, [0], outputs)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_fallback_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _write(tmp_path, "branches", _branches_model(tmp_path))
    out = tmp_path / "out"
    results = H.run_case(path, fmt, out, mli_builds, mli_cflags("2.0"), samples=32)
    H.assert_bit_exact(results)


def test_div_c_on_every_pair(mli_builds, tmp_path):
    """DIV of two activations on every int8 pair (zero divisors included) in the emitted C;
    these scales take small quotients through shifts of 32 bits and more."""
    q = QUANT[0]
    model = single_op_model(
        "DIV", [_t((1, 256, 256), q[0]), _t((1, 256, 256), q[1])], [_t((1, 256, 256), q[2])]
    )
    conv = H.convert(_write(tmp_path, "div", model), "sa8", tmp_path / "out")
    a, b = _every_pair()
    inputs = dict(zip(conv.model.inputs, (a.reshape(1, 256, 256), b.reshape(1, 256, 256))))
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))


@pytest.mark.parametrize("op", ["DIV", "SQUARED_DIFFERENCE"])
def test_float_mode_equals_litert_float(op, tmp_path):
    """float32 division and squared difference, broadcast, bit for bit (x / 0 included)."""
    model = single_op_model(
        op,
        [T([1, 16, 1], "float32", None, None), T([1, 1, 16], "float32", None, None)],
        [T([1, 16, 16], "float32", None, None)],
        _opts(op),
    )
    path = _write(tmp_path, f"{op.lower()}_f32", model)
    g = read(path).main
    rng = np.random.default_rng(2)
    xs = {
        i: rng.uniform(-3, 3, (8,) + tuple(g.tensors[i].shape)).astype(np.float32) for i in g.inputs
    }
    xs[g.inputs[1]][0, 0, 0, :4] = 0.0
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "float")[g.outputs[0]], ref)
