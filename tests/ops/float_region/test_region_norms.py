"""The float region's normalisation, attention and reduction ops (PT2E exports of LayerNorm,
GroupNorm, attention with SOFTMAX, a MEAN head; issue 34), on int8 models built here: tflite mode
and the program (mli mode) equal LiteRT's reference kernels on every int8 output, and the emitted
C equals mli mode on the real MLI library in the four builds. Each new instruction is also
checked alone against LiteRT on float32 values chosen to expose the order of its sums."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.ir import REGION_OP
from mlitool.ops.float_region import program as P
from mlitool.pipeline import ModelOptions, load, read, settle
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, int32_const, options

ACT = {"NONE": 0, "RELU": 1}
VERSIONS = {"BROADCAST_TO": 2}  # LiteRT registers BROADCAST_TO from version 2


class _Graph:
    """Tensors and ops of a model under construction."""

    def __init__(self):
        self.t: list[T] = []
        self.ops: list[tuple] = []

    def add(self, tensor: T) -> int:
        self.t.append(tensor)
        return len(self.t) - 1

    def f32(self, shape, data=None) -> int:
        if data is not None:
            data = np.asarray(data, np.float32).reshape(shape)
        return self.add(T(list(shape), "float32", data=data))

    def q(self, shape, scale, zp) -> int:
        return self.add(T(list(shape), scale=[scale], zero_point=[zp]))

    def op(self, kind, ins, shape, opts=None) -> int:
        out = self.f32(shape)
        self.ops.append((kind, list(ins), [out], opts))
        return out

    def binary(self, kind, a, b, shape, act="NONE") -> int:
        name = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}.get(kind)
        opts = options(name, fusedActivationFunction=ACT[act]) if name else None
        if kind == "DIV":
            opts = options("DivOptions", fusedActivationFunction=ACT[act])
        return self.op(kind, [a, b], shape, opts)

    def dequantize(self, x, shape) -> int:
        return self.op("DEQUANTIZE", [x], shape)

    def quantize(self, x, shape, scale, zp) -> int:
        y = self.q(shape, scale, zp)
        self.ops.append(("QUANTIZE", [x], [y], None))
        return y

    def save(self, path, inputs, outputs):
        path.write_bytes(graph_model(self.t, self.ops, inputs, outputs, VERSIONS))
        return path


def _mean(g, x, axes, shape, keep):
    return g.op(
        "MEAN", [x, g.add(int32_const(axes))], shape, options("ReducerOptions", keepDims=keep)
    )


def _layer_norm(tmp_path):
    """x int8 [1, 6, 16] -> DEQUANTIZE -> LayerNorm as PT2E exports it (MEAN over the last axis
    without keep_dims, RESHAPE, SQUARED_DIFFERENCE, MEAN, ADD eps, RSQRT, MUL, SUB) -> QUANTIZE."""
    rng = np.random.default_rng(11)
    g = _Graph()
    n, c = 6, 16
    x = g.q([1, n, c], 0.07, -5)
    xf = g.dequantize(x, [1, n, c])
    pos = g.f32([1, n, c], rng.standard_normal((1, n, c)))
    h = g.binary("ADD", xf, pos, [1, n, c])
    mu = _mean(g, h, [0, 2], [n], False)
    mu3 = g.op("RESHAPE", [mu, g.add(int32_const([1, n, 1]))], [1, n, 1])
    sq = g.op("SQUARED_DIFFERENCE", [h, mu3], [1, n, c])
    var = _mean(g, sq, [0, 2], [n], False)
    ve = g.binary("ADD", var, g.f32([], 1e-5), [n])
    inv = g.op("RSQRT", [ve], [n])
    neg = g.binary("MUL", inv, mu, [n])
    shift = g.binary("SUB", g.f32([], 0.25), neg, [n])
    inv3 = g.op("RESHAPE", [inv, g.add(int32_const([1, n, 1]))], [1, n, 1])
    scaled = g.binary("MUL", h, inv3, [1, n, c])
    shift3 = g.op("RESHAPE", [shift, g.add(int32_const([1, n, 1]))], [1, n, 1])
    y = g.binary("ADD", scaled, shift3, [1, n, c])
    out = g.quantize(y, [1, n, c], 0.03, 2)
    return g.save(tmp_path / "layer_norm.tflite", [x], [out])


def _group_norm(tmp_path):
    """x int8 [1, 4, 4, 8] (NHWC) -> DEQUANTIZE -> GroupNorm of 2 groups: TRANSPOSE to channels
    first, RESHAPE [1, 2, 4, 16], MEAN (keep_dims), SUB, MUL, MEAN, ADD eps, SQRT, DIV by its
    BROADCAST_TO, RESHAPE, TRANSPOSE back, MUL gamma, ADD beta (RELU), RELU6 -> QUANTIZE; and
    a second output: EXP of the normalised values plus x through an int8 RESHAPE made after the
    first DEQUANTIZE (as PT2E's GroupNorm reads it)."""
    rng = np.random.default_rng(12)
    g = _Graph()
    x = g.q([1, 4, 4, 8], 0.05, 3)
    xf = g.dequantize(x, [1, 4, 4, 8])
    # an int8 RESHAPE after the first DEQUANTIZE, DEQUANTIZEd too: the region stands after it
    xr = g.q([1, 16, 8], 0.05, 3)
    g.ops.append(("RESHAPE", [x, g.add(int32_const([1, 16, 8]))], [xr], None))
    xrf = g.dequantize(xr, [1, 16, 8])
    chw = g.op("TRANSPOSE", [xf, g.add(int32_const([0, 3, 1, 2]))], [1, 8, 4, 4])
    grp = g.op("RESHAPE", [chw, g.add(int32_const([1, 2, 4, 16]))], [1, 2, 4, 16])
    mu = _mean(g, grp, [2, 3], [1, 2, 1, 1], True)
    d = g.binary("SUB", grp, mu, [1, 2, 4, 16])
    d2 = g.binary("MUL", d, d, [1, 2, 4, 16])
    var = _mean(g, d2, [2, 3], [1, 2, 1, 1], True)
    sd = g.op("SQRT", [g.binary("ADD", var, g.f32([], 1e-5), [1, 2, 1, 1])], [1, 2, 1, 1])
    sdb = g.op("BROADCAST_TO", [sd, g.add(int32_const([1, 2, 4, 1]))], [1, 2, 4, 1])
    norm = g.binary("DIV", d, sdb, [1, 2, 4, 16])
    back = g.op("RESHAPE", [norm, g.add(int32_const([1, 8, 4, 4]))], [1, 8, 4, 4])
    hwc = g.op("TRANSPOSE", [back, g.add(int32_const([0, 2, 3, 1]))], [1, 4, 4, 8])
    gamma = g.f32([8], rng.uniform(0.5, 2, 8))
    beta = g.f32([8], rng.standard_normal(8))
    y = g.binary("ADD", g.binary("MUL", hwc, gamma, [1, 4, 4, 8]), beta, [1, 4, 4, 8], "RELU")
    y6 = g.op("RELU6", [y], [1, 4, 4, 8])
    out = g.quantize(y6, [1, 4, 4, 8], 6 / 255, -128)
    e = g.op("EXP", [hwc], [1, 4, 4, 8])
    back_x = g.op("RESHAPE", [xrf, g.add(int32_const([1, 4, 4, 8]))], [1, 4, 4, 8])
    e2 = g.binary("ADD", e, back_x, [1, 4, 4, 8])
    out2 = g.quantize(e2, [1, 4, 4, 8], 0.1, -80)
    return g.save(tmp_path / "group_norm.tflite", [x], [out, out2])


def _attention(tmp_path):
    """q, k, v int8 [2, 5, 4] -> DEQUANTIZE -> MUL scale, BATCH_MATMUL(q, k, adj_y), SOFTMAX
    (beta 0.8), BATCH_MATMUL(p, v) -> QUANTIZE; and k TRANSPOSEd [2, 4, 5] times one constant
    [5, 3] matrix (a batch broadcast), adj_x of its transpose."""
    rng = np.random.default_rng(13)
    g = _Graph()
    b, s, d = 2, 5, 4
    q, k, v = (g.q([b, s, d], sc, zp) for sc, zp in ((0.08, 1), (0.06, -2), (0.05, 0)))
    qf, kf, vf = (g.dequantize(t, [b, s, d]) for t in (q, k, v))
    qs = g.binary("MUL", qf, g.f32([], 0.5), [b, s, d])
    mm = options("BatchMatMulOptions", adjX=False, adjY=True)
    scores = g.op("BATCH_MATMUL", [qs, kf], [b, s, s], mm)
    p = g.op("SOFTMAX", [scores], [b, s, s], options("SoftmaxOptions", beta=0.8))
    plain = options("BatchMatMulOptions", adjX=False, adjY=False)
    ctx = g.op("BATCH_MATMUL", [p, vf], [b, s, d], plain)
    out = g.quantize(ctx, [b, s, d], 0.02, 0)
    kt = g.op("TRANSPOSE", [kf, g.add(int32_const([0, 2, 1]))], [b, d, s])
    w = g.f32([s, 3], rng.standard_normal((s, 3)))
    proj = g.op("BATCH_MATMUL", [kt, w], [b, d, 3], plain)
    back = g.op("BATCH_MATMUL", [kt, proj], [b, s, 3], options("BatchMatMulOptions", adjX=True))
    out2 = g.quantize(back, [b, s, 3], 0.3, -4)
    return g.save(tmp_path / "attention.tflite", [q, k, v], [out, out2])


def _mean_head(tmp_path, fc: bool = True):
    """x int8 [1, 9, 8] -> DEQUANTIZE -> FULLY_CONNECTED (`fc`; else an ADD (RELU), an island of
    its own) -> r, QUANTIZE r -> int8 LOGISTIC -> DEQUANTIZE -> ADD r (the float r runs past the
    int8 op: two regions, r carried from the first to the second) -> MEAN over the rows ->
    QUANTIZE."""
    rng = np.random.default_rng(14)
    g = _Graph()
    x = g.q([1, 9, 8], 0.04, -7)
    xf = g.dequantize(x, [1, 9, 8])
    if fc:
        w = g.f32([8, 8], rng.standard_normal((8, 8)))
        keep = options("FullyConnectedOptions", keepNumDims=True)
        r = g.op("FULLY_CONNECTED", [xf, w, -1], [1, 9, 8], keep)
    else:
        r = g.binary("ADD", xf, g.f32([8], rng.standard_normal(8)), [1, 9, 8], "RELU")
    rq = g.quantize(r, [1, 9, 8], 0.03, -20)
    sig = g.q([1, 9, 8], 1 / 256, -128)
    g.ops.append(("LOGISTIC", [rq], [sig], None))
    sf = g.dequantize(sig, [1, 9, 8])
    h = g.binary("ADD", r, sf, [1, 9, 8])
    m = _mean(g, h, [1], [1, 8], False)
    out = g.quantize(m, [1, 8], 0.02, -10)
    return g.save(tmp_path / f"mean_head_{fc}.tflite", [x], [out])


MODELS = {
    "layer_norm": _layer_norm,
    "group_norm": _group_norm,
    "attention": _attention,
    "mean_head": _mean_head,
}


def _inputs(g, n: int = 64) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(2)
    xs = {}
    for i in g.inputs:
        x = rng.integers(-128, 128, (n, *g.tensors[i].shape))
        x.reshape(n, -1)[:, 0] = np.arange(n) * 4 - 128  # a spread of one element's values
        xs[i] = x.astype(np.int8)
    return xs


@pytest.mark.parametrize("name", MODELS)
def test_the_float_ops_become_regions(name, tmp_path):
    g = read(MODELS[name](tmp_path)).main
    regions = [op for op in g.ops if op.type == REGION_OP]
    expected = 2 if name == "mean_head" else 1
    assert len(regions) == expected
    if name == "group_norm":  # it stands after the int8 RESHAPE, which stays an int8 op
        assert [op.type for op in g.ops] == ["RESHAPE", REGION_OP]
    assert all(
        t.dtype != "float32" or t.data is not None
        for op in g.ops
        if op.type != REGION_OP
        for t in (g.tensors[i] for i in (*op.inputs, *op.outputs) if i >= 0)
    )
    if name == "mean_head":  # the float residual r: the first region's output, the second's input
        r = regions[0].outputs[-1]
        assert g.tensors[r].dtype == "float32" and r in regions[1].inputs


@pytest.mark.parametrize("name", MODELS)
def test_tflite_mode_equals_litert(name, tmp_path):
    path = MODELS[name](tmp_path)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, read_model(path).main, xs)
    ours = run_graph(g, xs, "tflite", keep=True)
    for o in g.outputs:
        assert np.unique(ref[o]).size > 8  # no output stuck at a few values
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", MODELS)
def test_the_program_equals_litert(name, fmt, tmp_path):
    path = MODELS[name](tmp_path)
    graph, model = load(path, settle(ModelOptions(format=fmt)))
    xs = _inputs(graph)
    ref = reference_outputs(path, read_model(path).main, xs)
    ours, _ = run_mli(graph, model, xs, arith_for())
    for o in graph.outputs:
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", MODELS)
def test_the_c_equals_mli_mode(name, fmt, mli_builds, tmp_path):
    path = MODELS[name](tmp_path)
    out = tmp_path / "out"
    H.assert_bit_exact(H.run_case(path, fmt, out, mli_builds, mli_cflags("2.0")))


def test_a_residual_island_read_past_its_quantize_keeps_its_dequantize(tmp_path):
    """DEQUANTIZE -> ADD -> QUANTIZE is an island, but the float ADD is also read by a later
    float ADD: the ADD stays and so does the DEQUANTIZE it reads (the graph stays whole); the
    float ops left are one region, equal to LiteRT."""
    path = _mean_head(tmp_path, fc=False)
    g = read(path).main
    assert [op.type for op in g.ops].count(REGION_OP) == 1
    xs = _inputs(g)
    ref = reference_outputs(path, read_model(path).main, xs)
    ours = run_graph(g, xs, "tflite", keep=True)
    o = g.outputs[0]
    np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))


def test_the_carried_residual_is_one_carry_layer(tmp_path):
    _, model = load(_mean_head(tmp_path), settle(ModelOptions(format="sa8")))
    kernels = [la.kernel for la in model.layers]
    assert kernels.count("mlitool_float_region_carry") == 1
    assert kernels.index("mlitool_float_region_carry") < kernels.index("mlitool_float_region2")


# -- each instruction alone against LiteRT's float32 kernel --------------------------------------
def _float_model(tmp_path, kind, shapes, out_shape, opts=None, consts=()):
    """A float model of one op `kind` on inputs of `shapes` (then constant int32 `consts`)."""
    tensors = [T(list(s), "float32") for s in shapes]
    tensors += [int32_const(c) for c in consts]
    tensors.append(T(list(out_shape), "float32"))
    ins = list(range(len(tensors) - 1))
    path = tmp_path / f"{kind.lower()}.tflite"
    n = len(shapes)
    ops = [(kind, ins, [len(ins)], opts)]
    path.write_bytes(graph_model(tensors, ops, list(range(n)), [len(ins)], VERSIONS))
    return path, read_model(path).main


def _bits(a) -> np.ndarray:
    return np.asarray(a, np.float32).view(np.int32)


@pytest.mark.parametrize("kind", ["RSQRT", "SQRT", "EXP"])
def test_the_unary_ops_are_litert_bit_for_bit(kind, tmp_path):
    """Over 200001 float32 values (RSQRT and SQRT on (0, 1e6], EXP on [-100, 90])."""
    lo, hi = (-100.0, 90.0) if kind == "EXP" else (1e-30, 1e6)
    x = np.geomspace(lo, hi, 200001) if kind != "EXP" else np.linspace(lo, hi, 200001)
    x = x.astype(np.float32)
    path, g = _float_model(tmp_path, kind, [[x.size]], [x.size])
    ref = reference_outputs(path, g, {0: x[None]})[g.outputs[0]].reshape(-1)
    ours = P.unary(P.UN_KINDS[kind], x)
    np.testing.assert_array_equal(_bits(ours), _bits(ref))
    if kind == "RSQRT":  # 1 / sqrtf is not sqrtf(1 / x) in the last bit
        assert np.count_nonzero(_bits(np.sqrt(np.float32(1) / x)) != _bits(ref)) > 0


def _run(code: list, consts: np.ndarray, arena: int) -> np.ndarray:
    prog = P.Program(np.array(code, np.int32), consts.astype(np.float32), arena, ())
    return P.run_program(prog, [np.zeros((1, 1), np.int8)])[0]


def test_the_mean_sums_in_litert_order(tmp_path):
    """MEAN over axes 1 and 3 of [2, 16, 3, 32] values of magnitudes 1e-6..1e6 (sums far below
    their terms): the program's MEAN (sum in the input's order, then / count) is LiteRT's to
    the bit, and a pairwise sum is not."""
    rng = np.random.default_rng(4)
    shape = (2, 16, 3, 32)
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-14, 14, shape))).astype(np.float32)
    path, g = _float_model(
        tmp_path, "MEAN", [shape], [2, 3], options("ReducerOptions", keepDims=False), [[1, 3]]
    )
    ref = reference_outputs(path, g, {0: x[None]})[g.outputs[0]].reshape(-1)
    strides = (16 * 3 * 32, 3 * 32, 32, 1)
    code = [P.MEAN, 0, -1, 2, 1, 3, 1, *strides, 1, 16, 1, 32, *strides]
    ours = _run(code, x.reshape(-1), 6)
    np.testing.assert_array_equal(_bits(ours), _bits(ref))
    assert np.count_nonzero(_bits(x.mean(axis=(1, 3), dtype=np.float32).reshape(-1)) != _bits(ref))


def test_the_batch_matmul_sums_in_litert_order(tmp_path):
    """[3, 4, 64] x [3, 64, 5] with terms that cancel: the program's MM is LiteRT's to the bit."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 4, 64)) * np.exp(rng.uniform(-8, 8, 64))).astype(np.float32)
    b = rng.standard_normal((3, 64, 5)).astype(np.float32)
    path, g = _float_model(
        tmp_path, "BATCH_MATMUL", [a.shape, b.shape], [3, 4, 5], options("BatchMatMulOptions")
    )
    ref = reference_outputs(path, g, {0: a[None], 1: b[None]})[g.outputs[0]].reshape(-1)
    code = [P.MM, 0, -1, -a.size - 1, 3, 4, 64, 5, 4 * 64, 64, 1, 64 * 5, 5, 1]
    ours = _run(code, np.concatenate([a.reshape(-1), b.reshape(-1)]), 60)
    np.testing.assert_array_equal(_bits(ours), _bits(ref))
    assert np.count_nonzero(_bits((a @ b).reshape(-1)) != _bits(ref)) > 0


def test_the_softmax_is_litert_bit_for_bit(tmp_path):
    """SOFTMAX (beta 0.37) of 64 rows of 100 values over [-60, 60]."""
    rng = np.random.default_rng(6)
    x = rng.uniform(-60, 60, (64, 100)).astype(np.float32)
    opts = options("SoftmaxOptions", beta=0.37)
    path, g = _float_model(tmp_path, "SOFTMAX", [x.shape], x.shape, opts)
    ref = reference_outputs(path, g, {0: x[None]})[g.outputs[0]].reshape(x.shape)
    ours = P.softmax(x, P.bits(0.37))
    np.testing.assert_array_equal(_bits(ours), _bits(ref))


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_the_carry_and_new_instructions_compile_as_cxx20(mli_builds, tmp_path):
    """`float_region_carry` and the MEAN / MM / SOFTMAX code are valid C++20 too, warnings as
    errors."""
    out = tmp_path / "out"
    H.run_case(_mean_head(tmp_path), "sa8", out, mli_builds, mli_cflags("2.0"), samples=1)
    src = (out / "net.c").read_text()
    assert "float_region_carry" in src and "float_region2" in src
    cmd = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd += [*mli_cflags("2.0"), "-I", str(out), "-c", "net.c", "-o", "net.o"]
    subprocess.run(cmd, cwd=out, check=True, capture_output=True)


@pytest.mark.skipif(
    "fma" not in Path("/proc/cpuinfo").read_text(errors="ignore").split(),
    reason="needs a host with fused multiply-add",
)
@pytest.mark.parametrize("name", ["layer_norm", "attention"])
def test_the_c_stays_bit_exact_where_the_compiler_may_fuse_multiply_add(name, mli_builds, tmp_path):
    """Built with -ffp-contract=fast and FMA instructions, MEAN, SQUARED_DIFFERENCE, the
    BATCH_MATMUL sums and SOFTMAX still equal mli mode: each operation rounds on its own."""
    flags = [*mli_cflags("2.0"), "-O2", "-mfma", "-ffp-contract=fast"]
    H.assert_bit_exact(
        H.run_case(MODELS[name](tmp_path), "sa8", tmp_path / "out", mli_builds, flags)
    )
