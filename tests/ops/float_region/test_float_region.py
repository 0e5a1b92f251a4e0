"""Float regions of int8 models (PT2E's GRU: a float FULLY_CONNECTED over the time steps, the
recurrent FULLY_CONNECTED of a float hidden state, the gates) become one op on the int8 tensors
(`mlitool.passes.float_regions`), lowered onto a program of float32 operations in fallback C
(`mlitool/ops/float_region`). Checked on a two-step GRU cell built here: tflite mode and the
program (mli mode) equal LiteRT's reference kernels on every output, the gates reach LOGISTIC's
both cut-offs (below -9, above 16.6), and the emitted C equals mli mode on the real MLI library
in the four builds (the program's float32 work area included)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.ir import REGION_GRAPH, REGION_OP
from mlitool.ops.float_region import program as P
from mlitool.pipeline import ModelOptions, load, read, settle
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, int32_const, options

STEPS, FEAT, UNITS = 2, 8, 4
ACT = {"NONE": 0, "RELU": 1}


def _binary(kind: str, act: str = "NONE"):
    name = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[kind]
    return options(name, fusedActivationFunction=ACT[act])


def _gru(tmp_path, weight: float = 3.0):
    """x int8 [STEPS, 1, FEAT] -> DEQUANTIZE -> FULLY_CONNECTED (keep_num_dims) -> per step:
    SLICE of its row, RESHAPE, SLICEs of three gates, z = LOGISTIC(gz + bz) (a [1, 4] plus a
    [1, 1, 4] constant), n = TANH(gn + z * (h Wh)), h = (1 - z) * n + z * h (h0 = 0: the first
    step has no recurrent FC), QUANTIZE of each step's h (two scales), and a RELU-fused ADD. Large
    weights push the gates past LOGISTIC's cut-offs."""
    rng = np.random.default_rng(7)
    t: list[T] = []

    def add(tensor: T) -> int:
        t.append(tensor)
        return len(t) - 1

    def f32(shape, data=None) -> int:
        return add(T(list(shape), "float32", data=data))

    x = add(T([STEPS, 1, FEAT], scale=[0.05], zero_point=[3]))
    w = f32([3 * UNITS, FEAT], (rng.standard_normal((3 * UNITS, FEAT)) * weight).astype(np.float32))
    b = f32([3 * UNITS], rng.standard_normal(3 * UNITS).astype(np.float32))
    wh = f32([3 * UNITS, UNITS], rng.standard_normal((3 * UNITS, UNITS)).astype(np.float32))
    bz = f32([1, 1, UNITS], rng.standard_normal((1, 1, UNITS)).astype(np.float32))
    one = f32([], np.float32(1.0))
    xf, g = f32([STEPS, 1, FEAT]), f32([STEPS, 1, 3 * UNITS])
    row_size, gate_size = add(int32_const([1, 1, 3 * UNITS])), add(int32_const([1, UNITS]))
    to2 = add(int32_const([1, 3 * UNITS]))
    ops = [
        ("DEQUANTIZE", [x], [xf], None),
        ("FULLY_CONNECTED", [xf, w, b], [g], options("FullyConnectedOptions", keepNumDims=True)),
    ]
    h = None
    outs = []
    for s in range(STEPS):
        row, row2 = f32([1, 1, 3 * UNITS]), f32([1, 3 * UNITS])
        ops += [
            ("SLICE", [g, add(int32_const([s, 0, 0])), row_size], [row], None),
            ("RESHAPE", [row, to2], [row2], None),
        ]
        gz, gr, gn = (f32([1, UNITS]) for _ in range(3))
        for k, gate in enumerate((gz, gr, gn)):
            ops.append(("SLICE", [row2, add(int32_const([0, k * UNITS])), gate_size], [gate], None))
        zs, z = f32([1, 1, UNITS]), f32([1, 1, UNITS])
        ops += [("ADD", [gz, bz], [zs], _binary("ADD")), ("LOGISTIC", [zs], [z], None)]
        pre = gn
        if h is not None:
            rec, rz = f32([1, 1, 3 * UNITS]), f32([1, 1, UNITS])
            opts = options("FullyConnectedOptions", keepNumDims=True)
            ops += [
                ("FULLY_CONNECTED", [h, wh, -1], [rec], opts),
                (
                    "SLICE",
                    [rec, add(int32_const([0, 0, 2 * UNITS])), add(int32_const([1, 1, UNITS]))],
                    [rz],
                    None,
                ),  # noqa: E501
            ]
            zr, pre = f32([1, 1, UNITS]), f32([1, 1, UNITS])
            ops += [
                ("MUL", [z, rz], [zr], _binary("MUL")),
                ("ADD", [gn, zr], [pre], _binary("ADD")),
            ]
        n, keep, hn = f32([1, 1, UNITS]), f32([1, 1, UNITS]), f32([1, 1, UNITS])
        ops += [
            ("TANH", [pre], [n], None),
            ("SUB", [one, z], [keep], _binary("SUB")),
            ("MUL", [keep, n], [hn], _binary("MUL")),
        ]
        if h is not None:
            zh, h2 = f32([1, 1, UNITS]), f32([1, 1, UNITS])
            ops += [("MUL", [z, h], [zh], _binary("MUL")), ("ADD", [hn, zh], [h2], _binary("ADD"))]
            hn = h2
        h = hn
        q = add(T([1, 1, UNITS], scale=[0.0078 * (s + 1)], zero_point=[-3 + s]))
        ops.append(("QUANTIZE", [h], [q], None))
        outs.append(q)
    r, rq = f32([1, 1, UNITS]), add(T([1, 1, UNITS], scale=[0.004], zero_point=[-128]))
    ops += [("ADD", [h, bz], [r], _binary("ADD", "RELU")), ("QUANTIZE", [r], [rq], None)]
    outs.append(rq)
    # every step's first gate columns (a strided MOVE) plus bz broadcast over the steps (BIN)
    cols, cb = f32([STEPS, 1, UNITS]), f32([STEPS, 1, UNITS])
    cq = add(T([STEPS, 1, UNITS], scale=[0.1], zero_point=[5]))
    size = add(int32_const([STEPS, 1, UNITS]))
    ops += [
        ("SLICE", [g, add(int32_const([0, 0, 0])), size], [cols], None),
        ("ADD", [cols, bz], [cb], _binary("ADD", "RELU")),
        ("QUANTIZE", [cb], [cq], None),
    ]
    outs.append(cq)
    path = tmp_path / "gru_region.tflite"
    path.write_bytes(graph_model(t, ops, [x], outs))
    return path


def _inputs(g, n: int = 256) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(1)
    i = g.inputs[0]
    x = rng.integers(-128, 128, (n, *g.tensors[i].shape))
    x.reshape(n, -1)[:, 0] = np.arange(n) - 128  # every value of one element
    return {i: x.astype(np.int8)}


def test_the_region_is_one_op_and_equals_litert(tmp_path):
    path = _gru(tmp_path)
    g = read(path).main
    assert [op.type for op in g.ops] == [REGION_OP]
    region = g.ops[0]
    assert region.label == "op 0 (DEQUANTIZE)" and len(region.outputs) == STEPS + 2
    xs = _inputs(g)
    ref = reference_outputs(path, read_model(path).main, xs)
    ours = run_graph(g, xs, "tflite", keep=True)
    sub = region.options[REGION_GRAPH]
    # the gates reach both of LOGISTIC's cut-offs
    first_gate = next(op.outputs[0] for op in sub.ops if op.type == "ADD")
    zs = run_graph(sub, xs, "tflite", keep=True)[first_gate]
    assert zs.min() < -9 and zs.max() > 16.62
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_the_program_equals_litert(fmt, tmp_path):
    """mli mode (the program's numpy twin: TFLite's reference order, expf / tanhf) equals
    LiteRT on every output: the region adds no error of its own."""
    path = _gru(tmp_path)
    graph, model = load(path, settle(ModelOptions(format=fmt)))
    xs = _inputs(graph)
    ref = reference_outputs(path, read_model(path).main, xs)
    ours, _ = run_mli(graph, model, xs, arith_for())
    for o in graph.outputs:
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_the_c_equals_mli_mode(fmt, mli_builds, tmp_path):
    results = H.run_case(_gru(tmp_path), fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"))
    H.assert_bit_exact(results)


def test_lowering_is_one_program_layer_and_one_quantize_per_output(tmp_path):
    _, model = load(_gru(tmp_path), settle(ModelOptions(format="sa8")))
    kernels = [la.kernel for la in model.layers]
    assert kernels == ["mlitool_float_region1"] + ["mlitool_float_region_out"] * (STEPS + 2)
    prog = P.compile_region(read(_gru(tmp_path)).main, read(_gru(tmp_path)).main.ops[0])
    ops, pc = [], 0
    while pc < len(prog.code):
        ops.append(int(prog.code[pc]))
        pc += P.LENGTH[ops[-1]]
    assert len(ops) == prog.count and {P.MOVE, P.BIN, P.COPY, P.FLAT, P.FC, P.UN} <= set(ops)
    assert model.layers[0].notes[0].startswith("float region: fallback C, float32 region of")


def test_a_float_tensor_read_outside_stays_refused(tmp_path):
    """A float tensor the region makes that a graph output reads is no region: no op is fused
    (and lowering asks for value ranges, as before)."""
    tensors = [T([2, 4], scale=[0.05], zero_point=[0]), T([2, 4], "float32")]
    tensors += [T([3, 4], "float32", data=np.ones((3, 4), np.float32)), T([2, 3], "float32")]
    tensors += [T([2, 3], scale=[0.1], zero_point=[0])]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("FULLY_CONNECTED", [1, 2, -1], [3], options("FullyConnectedOptions")),
        ("QUANTIZE", [3], [4], None),
    ]
    path = tmp_path / "leak.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4, 3]))
    assert [op.type for op in read(path).main.ops] == ["DEQUANTIZE", "FULLY_CONNECTED", "QUANTIZE"]


def _float_model(tmp_path, name, tensors, ops):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [len(tensors) - 1]))
    return path, read_model(path).main


@pytest.mark.parametrize("kind", ["LOGISTIC", "TANH"])
def test_the_programs_logistic_and_tanh_are_litert_bit_for_bit(kind, tmp_path):
    """Over 200001 float32 values in [-30, 30] (both of LOGISTIC's cut-offs; a plain
    1 / (1 + expf(-x)) differs from LiteRT in 37896 of them)."""
    x = np.linspace(-30, 30, 200001).astype(np.float32)
    tensors = [T([x.size], "float32"), T([x.size], "float32")]
    path, g = _float_model(tmp_path, kind, tensors, [(kind, [0], [1], None)])
    ref = reference_outputs(path, g, {0: x[None]})[1].reshape(-1)
    ours = P.logistic(x) if kind == "LOGISTIC" else P.libm("tanhf", x)
    np.testing.assert_array_equal(ours.view(np.int32), ref.view(np.int32))


def test_the_programs_fully_connected_sums_in_litert_order(tmp_path):
    """A float32 FULLY_CONNECTED of depth 256 whose terms cancel (sums far below their terms:
    any other order of additions changes last bits): the program's FC is LiteRT's to the bit."""
    rng = np.random.default_rng(3)
    rows, depth, outs = 16, 256, 8
    x = (rng.standard_normal((rows, depth)) * np.exp(rng.uniform(-6, 6, depth))).astype(np.float32)
    w = rng.standard_normal((outs, depth)).astype(np.float32)
    b = rng.standard_normal(outs).astype(np.float32)
    tensors = [T([rows, depth], "float32"), T([outs, depth], "float32", data=w)]
    tensors += [T([outs], "float32", data=b), T([rows, outs], "float32")]
    fc = ("FULLY_CONNECTED", [0, 1, 2], [3], options("FullyConnectedOptions"))
    path, g = _float_model(tmp_path, "fc", tensors, [fc])
    ref = reference_outputs(path, g, {0: x[None]})[3].reshape(rows, outs)
    # consts: x, then w, then b; the arena holds the result
    consts = np.concatenate([x.reshape(-1), w.reshape(-1), b]).astype(np.float32)
    w_at, b_at = x.size, x.size + w.size
    code = [P.FC, 0, -1, -w_at - 1, -b_at - 1, rows, depth, outs, P.bits(-np.inf), P.bits(np.inf)]
    prog = P.Program(np.array(code, np.int32), consts, rows * outs, ())
    ours = P.run_program(prog, [np.zeros((1, 1), np.int8)])[0].reshape(rows, outs)
    np.testing.assert_array_equal(ours.view(np.int32), ref.view(np.int32))
    pairwise = (x.astype(np.float32) @ w.T.astype(np.float32)) + b  # another order: differs
    assert np.count_nonzero(pairwise.astype(np.float32) != ref) > 0


def _pair(shape, q, name):
    """(float before, int8, float after) tensors of a QUANTIZE -> DEQUANTIZE pair."""
    return [
        T(shape, "float32", name=f"{name}"),
        T(shape, scale=[q[0]], zero_point=[q[1]], name=f"{name}_q"),
        T(shape, "float32", name=f"{name}_dq"),
    ]


def _qdq_fc(tmp_path, gate: bool):
    """A QDQ file: x -> pair -> FULLY_CONNECTED -> pair, the pair's DEQUANTIZE output
    concatenated with (unpaired) TANH(x_dq) -> pair -> out; or (`gate`) x -> pair ->
    FULLY_CONNECTED -> LOGISTIC (the FC's output unpaired) -> pair -> out."""
    w = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    t = _pair([1, 6], (0.02, 1), "x")  # 0..2
    t += [T([4, 6], "float32", data=w, name="w"), T([1, 4], "float32", name="fc")]  # 3, 4
    t += _pair([1, 4], (0.03, -2), "h")  # 5..7
    t += [T([1, 6], "float32", name="th"), T([1, 10], "float32", name="cat")]  # 8, 9
    t += [T([1, 10], scale=[0.01], zero_point=[0], name="cat_q")]  # 10
    t += [T([1, 10], "float32", name="cat_dq")]  # 11
    ops = [
        ("QUANTIZE", [0], [1], None),
        ("DEQUANTIZE", [1], [2], None),
        ("FULLY_CONNECTED", [2, 3, -1], [4], options("FullyConnectedOptions")),
        ("LOGISTIC", [4], [5], None),
        ("QUANTIZE", [5], [6], None),
        ("DEQUANTIZE", [6], [7], None),
        ("TANH", [2], [8], None),
        ("CONCATENATION", [7, 8], [9], options("ConcatenationOptions", axis=1)),
        ("QUANTIZE", [9], [10], None),
        ("DEQUANTIZE", [10], [11], None),
    ]
    if not gate:  # the FC straight into its pair
        ops[2:4] = [("FULLY_CONNECTED", [2, 3, -1], [5], options("FullyConnectedOptions"))]
    else:  # no concatenation (its TANH of x_dq would join the region through a pair)
        ops = ops[:6]
    path = tmp_path / f"qdq_{gate}.tflite"
    path.write_bytes(graph_model(t, ops, [0], [7 if gate else 11]))
    return path


def test_a_qdq_files_paired_ops_stay_int8_ops(tmp_path):
    """Between pairs, an op whose float tensors all have pairs is the int8 op the exporter
    meant: no region. The CONCATENATION's unpaired input
    (TANH's) takes the output's pair, so the file converts without calibration."""
    g = read(_qdq_fc(tmp_path, gate=False)).main
    assert REGION_OP not in [op.type for op in g.ops]
    th = g.tensors[8]
    assert th.qdq is not None and (th.qdq.scale[0], th.qdq.zero_point[0]) == (np.float32(0.01), 0)
    load(_qdq_fc(tmp_path, gate=False), settle(ModelOptions(format="sa8")))


def test_a_qdq_files_unpaired_gate_is_a_float_region(mli_builds, tmp_path):
    """FULLY_CONNECTED -> LOGISTIC with no pair between: the float FC output is no int8 tensor
    the exporter meant, so DEQUANTIZE -> FC -> LOGISTIC -> QUANTIZE runs as a float region, and
    the file converts without calibration; its C equals mli mode."""
    path = _qdq_fc(tmp_path, gate=True)
    g = read(path).main
    regions = [op for op in g.ops if op.type == REGION_OP]
    assert len(regions) == 1 and [o.type for o in regions[0].options[REGION_GRAPH].ops] == [
        "DEQUANTIZE",
        "FULLY_CONNECTED",
        "LOGISTIC",
        "QUANTIZE",
    ]
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_region_c_compiles_as_cxx20(mli_builds, tmp_path):
    """`float_region<N>` and `float_region_out` (unions, volatile, math.h) are valid C++20 too,
    warnings as errors."""
    H.run_case(_gru(tmp_path), "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=1)
    src = (tmp_path / "out" / "net.c").read_text()
    assert "float_region1" in src and "float_region_out" in src
    cmd = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd += [*mli_cflags("2.0"), "-I", str(tmp_path / "out"), "-c", "net.c", "-o", "net.o"]
    subprocess.run(cmd, cwd=tmp_path / "out", check=True, capture_output=True)


@pytest.mark.skipif(
    "fma" not in Path("/proc/cpuinfo").read_text(errors="ignore").split(),
    reason="needs a host with fused multiply-add",
)
def test_region_c_stays_bit_exact_where_the_compiler_may_fuse_multiply_add(mli_builds, tmp_path):
    """Built with -ffp-contract=fast and FMA instructions the program still equals mli mode:
    each FULLY_CONNECTED product and sum, and each gate operation, rounds on its own."""
    flags = [*mli_cflags("2.0"), "-O2", "-mfma", "-ffp-contract=fast"]
    H.assert_bit_exact(H.run_case(_gru(tmp_path), "sa8", tmp_path / "out", mli_builds, flags))
