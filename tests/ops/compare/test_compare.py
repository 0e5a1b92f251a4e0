"""Comparisons (GREATER ... NOT_EQUAL, bool output) and SELECT / SELECT_V2: tflite mode equals
LiteRT's reference kernels (every pair of int8 values, operands of different scales; broadcast
shapes; SELECT copying values whose parameters differ from the output's), the fallback layers
make the mli executor agree with tflite mode, and the emitted C on the real MLI 2.0.2 library
equals the executor in the four builds (sa8, and fx16 with conversions around the fallbacks)."""

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
from tests.support.tflite_build import T, graph_model, single_op_model

OPS = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]
# (scale 1, zero point 1, scale 2, zero point 2): near-equal scales, the converter's tiny scale
# of a constant 0 (act_zoo's GREATER(x, 0)), scales of 0.5 and more, a power-of-2 ratio
QUANT = [
    (0.05, 3, 0.04, 20),
    (0.1, -128, 0.0999, 5),
    (0.0123, 60, 3.921568403342235e-09, 0),
    (0.9, 0, 0.5, -3),
    (0.02, 0, 0.04, 0),  # a ratio of 2: rescaled values meet rounding ties (negative too)
]
_EVERY = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
# every pair of int8 values: a[i, j] = i - 128, b[i, j] = j - 128
PAIRS = (np.repeat(_EVERY, 256).reshape(1, 256, 256), np.tile(_EVERY, 256).reshape(1, 256, 256))


def _compare_model(tmp_path, op: str, q, shape=(256, 256)):
    path = tmp_path / f"{op.lower()}.tflite"
    s1, z1, s2, z2 = q
    path.write_bytes(
        single_op_model(
            op,
            [
                T(list(shape), scale=[s1], zero_point=[z1]),
                T(list(shape), scale=[s2], zero_point=[z2]),
            ],
            [T(list(shape), dtype="bool")],
        )
    )
    return path


def _tflite_and_litert(path, xs_of):
    g = read(path).main
    xs = xs_of(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    return run_graph(g, xs, "tflite")[g.outputs[0]], ref


@pytest.mark.parametrize("q", QUANT, ids=lambda q: f"s{q[0]}z{q[1]}-s{q[2]}z{q[3]}")
@pytest.mark.parametrize("op", OPS)
def test_comparison_tflite_mode_equals_litert_on_every_pair(op, q, tmp_path):
    ours, ref = _tflite_and_litert(
        _compare_model(tmp_path, op, q), lambda g: dict(zip(g.inputs, PAIRS))
    )
    assert ours.dtype == ref.dtype == np.bool_
    np.testing.assert_array_equal(ours, ref)


def test_comparison_is_not_a_comparison_of_real_values(tmp_path):
    """The rescaled integers round: some pairs compare otherwise than their real values (the
    footing TFLite uses is 256 x the real value), so the test above can tell."""
    s1, z1, s2, z2 = QUANT[0]
    ours, ref = _tflite_and_litert(
        _compare_model(tmp_path, "EQUAL", QUANT[0]), lambda g: dict(zip(g.inputs, PAIRS))
    )
    real = np.float32(s1) * (PAIRS[0].astype(np.float32) - z1) == np.float32(s2) * (
        PAIRS[1].astype(np.float32) - z2
    )
    assert int(ref.sum()) == 51 and int(real.sum()) != 51
    np.testing.assert_array_equal(ours[0], ref[0])


SELECT_CASES = {
    # op, condition shape, x shape, y shape
    "v2-broadcast": ("SELECT_V2", [1, 4, 1, 3], [1, 1, 5, 3], [3]),
    "v2-same": ("SELECT_V2", [1, 4, 5, 3], [1, 4, 5, 3], [1, 4, 5, 3]),
    "v1-same": ("SELECT", [1, 4, 5, 3], [1, 4, 5, 3], [1, 4, 5, 3]),
    "v1-rank1": ("SELECT", [2], [2, 4, 3], [2, 4, 3]),
    "v1-scalar": ("SELECT", [], [2, 4, 3], [2, 4, 3]),
}


@pytest.mark.parametrize("case", sorted(SELECT_CASES))
def test_select_tflite_mode_equals_litert(case, tmp_path):
    """x, y and the output with three different parameters: TFLite copies the int8 values."""
    op, cs, xs, ys = SELECT_CASES[case]
    out = xs if op == "SELECT" else list(np.broadcast_shapes(tuple(cs), tuple(xs), tuple(ys)))
    path = tmp_path / "select.tflite"
    path.write_bytes(
        single_op_model(
            op,
            [
                T(cs, dtype="bool"),
                T(xs, scale=[0.1], zero_point=[3]),
                T(ys, scale=[0.2], zero_point=[-5]),
            ],
            [T(out, scale=[0.3], zero_point=[1])],
        )
    )
    rng = np.random.default_rng(3)
    ours, ref = _tflite_and_litert(
        path,
        lambda g: {
            g.inputs[0]: rng.integers(0, 2, (1, *cs)).astype(bool),
            g.inputs[1]: rng.integers(-128, 128, (1, *xs)).astype(np.int8),
            g.inputs[2]: rng.integers(-128, 128, (1, *ys)).astype(np.int8),
        },
    )
    np.testing.assert_array_equal(ours, ref)


def _chain_model(tmp_path, float32: bool = False):
    """RELU -> six comparisons of two activations with different parameters, and GREATER
    against a broadcast constant -> SELECT_V2 chain (the last one's y a constant broadcast along
    a middle axis) -> RELU: every fallback between MLI ops."""
    s = [4, 4, 8]

    def act(scale, zp, dtype="int8"):
        if float32:
            return T([1, *s], dtype="float32" if dtype == "int8" else dtype)
        return T([1, *s], dtype=dtype, scale=None if dtype == "bool" else [scale], zero_point=zp)

    tensors = [act(0.05, 3), act(0.04, -20), act(0.05, 3), act(0.04, -20)]  # x, y, rx, ry
    ops = [("RELU", [0], [2], None), ("RELU", [1], [3], None)]
    kdata = np.array([-100, 5, 120, 0, 7, -7, 60, -60], np.int8)
    k = T([8], scale=[0.01], zero_point=[2], data=kdata)
    if float32:
        k = T([8], dtype="float32", data=(kdata.astype(np.float32) - 2) * 0.01)
    tensors.append(k)  # 4
    conds = []
    for op, a, b in [(o, 2, 3) for o in OPS] + [("GREATER", 2, 4)]:
        tensors.append(act(0, 0, "bool"))
        ops.append((op, [a, b], [len(tensors) - 1], None))
        conds.append(len(tensors) - 1)
    # y of the last SELECT_V2: a constant [4, 1, 8] broadcast along the middle axis
    wdata = np.arange(-64, 64, 4, dtype=np.int8).reshape(4, 1, 8)
    w = T([4, 1, 8], scale=[0.05], zero_point=[3], data=wdata)
    if float32:
        w = T([4, 1, 8], dtype="float32", data=(wdata.astype(np.float32) - 3) * 0.05)
    tensors.append(w)
    ys = [2] * (len(conds) - 1) + [len(tensors) - 1]
    prev = 2
    for c, y in zip(conds, ys):
        tensors.append(act(0.05, 3))
        ops.append(("SELECT_V2", [c, prev, y], [len(tensors) - 1], None))
        prev = len(tensors) - 1
    tensors.append(act(0.05, 3))
    ops.append(("RELU", [prev], [len(tensors) - 1], None))
    path = tmp_path / ("chain_float.tflite" if float32 else "chain.tflite")
    path.write_bytes(graph_model(tensors, ops, [0, 1], [len(tensors) - 1]))
    return path


def test_mli_mode_equals_tflite_mode(tmp_path):
    g = read(_chain_model(tmp_path)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    kernels = [la.kernel for la in model.layers if la.kind == "fallback"]
    assert kernels == ["mlitool_compare8"] * 7 + ["mlitool_select8"] * 7
    bools = [model.tensor(la.outputs[0]) for la in model.layers if la.kernel.endswith("compare8")]
    for t in bools:  # scale 1 (16384 * 2^-14), zero point 0
        assert int(t.scale[0]) / 2.0 ** int(t.scale_frac_bits[0]) == 1.0
        assert int(t.zero_point[0]) == 0
    rng = np.random.default_rng(5)
    xs = {i: rng.integers(-128, 128, (64, 1, 4, 4, 8)).astype(np.int8) for i in g.inputs}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"), keep=True)
    want = run_graph(g, xs, "tflite", keep=True)
    for i in [op.outputs[0] for op in g.ops if op.type in OPS or op.type == "SELECT_V2"]:
        np.testing.assert_array_equal(ours[i].astype(want[i].dtype), want[i], err_msg=str(i))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_fallback_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _chain_model(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_fallback_c_compares_every_pair_on_the_real_library(mli_builds, tmp_path):
    """x [256, 1] (17 seeded samples of every int8 value, about) against a constant holding
    every int8 value: the rounding ties of QUANT[-1] reach the output."""
    s1, z1, s2, z2 = QUANT[-1]
    k = T([1, 256], scale=[s2], zero_point=[z2], data=_EVERY.reshape(1, 256))
    tensors = [T([1, 256, 1], scale=[s1], zero_point=[z1]), k]
    tensors += [T([1, 256, 256], dtype="bool") for _ in range(2)]
    ops = [("EQUAL", [0, 1], [2], None), ("GREATER", [0, 1], [3], None)]
    path = tmp_path / "pairs.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [2, 3]))
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_float_mode_equals_litert_on_a_float_model(tmp_path):
    path = _chain_model(tmp_path, float32=True)
    rng = np.random.default_rng(2)
    ours, ref = _tflite_and_litert(
        path,
        lambda g: {i: rng.uniform(-3, 3, (1, 1, 4, 4, 8)).astype(np.float32) for i in g.inputs},
    )
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_calibrated_float_model_c_on_the_real_library(fmt, mli_builds, tmp_path):
    """Calibration gives x, y and the output of SELECT their own ranges: converts to the
    output's parameters come before the copy."""
    path = _chain_model(tmp_path, float32=True)
    cal = tmp_path / "cal.npz"
    rng = np.random.default_rng(4)
    np.savez(
        cal, **{n: rng.uniform(-3, 3, (16, 1, 4, 4, 8)).astype(np.float32) for n in ("t0", "t1")}
    )
    results = H.run_case(
        path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)


def test_calibrated_select_follows_the_float_model(tmp_path):
    """Where every condition agrees with the float model's, the output is that of the float
    model within 2.5 LSB (RELU, SELECT and RELU each requantize once); copying x and y with
    their own calibrated parameters is off by 32 LSB on this data."""
    from mlitool.pipeline import ModelOptions, load, settle

    path = _chain_model(tmp_path, float32=True)
    rng = np.random.default_rng(4)
    cal = tmp_path / "cal.npz"
    np.savez(
        cal, **{n: rng.uniform(-3, 3, (16, 1, 4, 4, 8)).astype(np.float32) for n in ("t0", "t1")}
    )
    g, model = load(path, settle(ModelOptions(format="sa8", calibration=cal)))
    xs = {i: rng.uniform(-3, 3, (64, 1, 4, 4, 8)).astype(np.float32) for i in g.inputs}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"), keep=True)
    ref = run_graph(g, xs, "float", keep=True)
    conds = [op.outputs[0] for op in g.ops if op.type in OPS]
    agree = np.all([ours[c].astype(bool) == ref[c] for c in conds], axis=0)
    assert agree.mean() > 0.99
    out = model.tensor(model.outputs[0])
    lsb = float(out.scale[0]) / 2.0 ** int(out.scale_frac_bits[0])
    err = np.abs(ours[g.outputs[0]] - ref[g.outputs[0]])[agree] / lsb
    assert err.max() <= 2.5


def test_refusals_name_the_reason(tmp_path):
    path = _compare_model(tmp_path, "LESS", (1.5, 0, 0.5, 0), shape=(1, 4))
    g = read(path).main
    with pytest.raises(UnsupportedError, match="scale 1.5: TFLite compares int8 operands only"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")
    with pytest.raises(UnsupportedError, match="needs a scale below 1"):
        run_graph(g, {i: np.zeros((1, 1, 4), np.int8) for i in g.inputs}, "tflite")
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(read(_chain_model(tmp_path)).main, format="fx16", mli_version="1.1", layout="hwc")


def test_float_model_weights_only_converts(tmp_path):
    """A float model converted --weights-only: the operands' placeholder scale 1 is taken below 1
    together (both halved), no longer refused as "int8 comparison of an operand with scale 1"."""
    g = read(_chain_model(tmp_path, float32=True)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    compares = [la for la in model.layers if la.kernel.endswith("compare8")]
    assert len(compares) == len(OPS) + 1
    # two placeholder activations (scale 1): one footing, 0.5 as a Q31 multiplier
    cfg = compares[0].cfg
    assert (cfg["mult1"], cfg["shift1"]) == (cfg["mult2"], cfg["shift2"]) == (1 << 30, 0)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_wide_float_operands_compare_on_a_common_footing(fmt, mli_builds, tmp_path):
    """Calibrated ranges of +-400 give the float operands SA8 scales above 1 (TFLite's int8
    footing needs them below 1): both are divided by one power of two, the comparisons agree
    with the float model wherever quantization leaves the operands apart, and the C equals the
    executor in the four builds."""
    from mlitool.pipeline import ModelOptions, load, settle

    path = _chain_model(tmp_path, float32=True)
    cal = tmp_path / "cal.npz"
    rng = np.random.default_rng(5)
    np.savez(
        cal,
        **{n: rng.uniform(-400, 400, (16, 1, 4, 4, 8)).astype(np.float32) for n in ("t0", "t1")},
    )
    g, model = load(path, settle(ModelOptions(format="sa8", calibration=cal)))
    xs = {i: rng.uniform(-400, 400, (32, 1, 4, 4, 8)).astype(np.float32) for i in g.inputs}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"), keep=True)
    ref = run_graph(g, xs, "float", keep=True)
    conds = [op.outputs[0] for op in g.ops if op.type in OPS][: len(OPS)]
    x, y = (np.maximum(xs[i], 0) for i in g.inputs)  # the RELUs before the comparisons
    apart = np.abs(x - y) > 8  # more than a step of either operand (about 3.2)
    for c in conds:
        np.testing.assert_array_equal(ours[c].astype(bool)[apart], ref[c][apart])
    results = H.run_case(
        path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)
