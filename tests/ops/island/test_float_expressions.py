"""Float islands of several ops in int8 models (PT2E's residual ADDs, SiLU, hard-sigmoid) become
one op on the int8 tensors at import (`mlitool.passes.float_expressions`): tflite mode equals
LiteRT's reference kernels running the island, the model converts without calibration, and the
emitted C (`lut8` for one input, `float_island<N>` in float32 for several) equals mli mode on
the real MLI library in the four builds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_OP, ISLAND_STEPS, ISLAND_TABLE, ISLAND_TERMS
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

SHAPE = [1, 8, 8, 4]
ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}


def _add(kind: str, act: str = "NONE"):
    name = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[kind]
    return options(name, fusedActivationFunction=ACT[act])


def _residual_chain(tmp_path):
    """Three int8 inputs; y1 = x0 + x1 quantized, and (unquantized) y2 = x2 + y1 quantized, as
    PT2E writes consecutive residual blocks."""
    q = [(0.05, 3), (0.031, -7), (0.07, 11)]
    tensors = [T(SHAPE, scale=[s], zero_point=[z]) for s, z in q]  # 0..2
    tensors += [T(SHAPE, "float32") for _ in range(5)]  # 3..5 DEQUANTIZE, 6 y1, 7 y2
    tensors += [T(SHAPE, scale=[0.09], zero_point=[2]), T(SHAPE, scale=[0.12], zero_point=[-5])]
    ops = [("DEQUANTIZE", [i], [3 + i], None) for i in range(3)]
    ops += [
        ("ADD", [3, 4], [6], _add("ADD")),
        ("QUANTIZE", [6], [8], None),
        ("ADD", [5, 6], [7], _add("ADD")),
        ("QUANTIZE", [7], [9], None),
    ]
    path = tmp_path / "residual_chain.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1, 2], [8, 9]))
    return path


def _mixed(tmp_path):
    """relu6((x0 + 3) * 1/6) (hard-sigmoid, one input) and relu(x2 - x0 * silu(x1)): MUL and a
    SUB whose several-input side is its right operand."""
    tensors = [T(SHAPE, scale=[0.05], zero_point=[-4]), T(SHAPE, scale=[0.04], zero_point=[9])]
    tensors += [T(SHAPE, scale=[0.06], zero_point=[1])]  # 2
    tensors += [T(SHAPE, "float32") for _ in range(3)]  # 3..5 DEQUANTIZE
    tensors += [T([], "float32", data=np.float32(3.0)), T([], "float32", data=np.float32(1 / 6))]
    tensors += [T(SHAPE, "float32") for _ in range(6)]  # 8..13
    tensors += [
        T(SHAPE, scale=[1 / 255], zero_point=[-128]),
        T(SHAPE, scale=[0.1], zero_point=[-100]),
    ]
    ops = [("DEQUANTIZE", [i], [3 + i], None) for i in range(3)]
    ops += [
        ("ADD", [3, 6], [8], _add("ADD")),
        ("MUL", [8, 7], [9], _add("MUL", "RELU6")),
        ("QUANTIZE", [9], [14], None),
        ("LOGISTIC", [4], [10], None),
        ("MUL", [4, 10], [11], _add("MUL")),
        ("MUL", [3, 11], [12], _add("MUL")),
        ("SUB", [5, 12], [13], _add("SUB", "RELU")),
        ("QUANTIZE", [13], [15], None),
    ]
    path = tmp_path / "mixed.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1, 2], [14, 15]))
    return path


def _inputs(g, seed: int) -> dict[int, np.ndarray]:
    """Every int8 value in each input (and a random rest), three samples."""
    rng = np.random.default_rng(seed)
    xs = {}
    for k, i in enumerate(g.inputs):
        x = rng.integers(-128, 128, (3, *g.tensors[i].shape))
        x.reshape(3, -1)[0, :256] = np.roll(np.arange(-128, 128), 37 * k)
        xs[i] = x.astype(np.int8)
    return xs


def _check_equals_litert(path, seed=0):
    model = read_model(path)
    g = read(path).main
    xs = _inputs(g, seed)
    ref = reference_outputs(path, model.main, xs)
    ours = run_graph(g, xs, "tflite")
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))
    return g


def test_residual_chain_is_two_float_ops_equal_to_litert(tmp_path):
    g = _check_equals_litert(_residual_chain(tmp_path))
    assert [op.type for op in g.ops] == [ISLAND_OP, ISLAND_OP]
    first, second = g.ops
    assert (first.label, second.label) == ("op 3 (ADD)", "op 5 (ADD)")
    assert first.inputs == (0, 1) and second.inputs == (0, 1, 2)  # y1 recomputed from x0, x1
    assert second.options[ISLAND_STEPS] == (("ADD", "NONE"), ("ADD", "NONE"))
    deq = np.asarray(second.options[ISLAND_TERMS][2], np.float32)
    np.testing.assert_array_equal(
        deq, np.float32(0.07) * (np.arange(-128, 128) - 11).astype(np.float32)
    )


def test_mixed_islands_equal_litert(tmp_path):
    g = _check_equals_litert(_mixed(tmp_path))
    sigmoid, sub = g.ops
    assert len(sigmoid.options[ISLAND_TABLE]) == 256 and sigmoid.inputs == (0,)
    assert sub.inputs == (0, 1, 2)  # x0 times silu(x1), subtracted from x2
    assert sub.options[ISLAND_STEPS] == (("MUL", "NONE"), ("RSUB", "RELU"))


@pytest.mark.parametrize("seed", range(4))
def test_float_sums_on_rounding_edges_equal_litert(seed, tmp_path):
    """Scales whose sums land on QUANTIZE's half-way points often: every pair of int8 values."""
    q = [(0.5, 0), (0.25, 0)]
    tensors = [T([1, 256, 256, 1], scale=[s], zero_point=[z]) for s, z in q]
    tensors += [T([1, 256, 256, 1], "float32") for _ in range(3)]
    tensors += [T([1, 256, 256, 1], scale=[1.0 + seed * 0.25], zero_point=[seed])]
    ops = [("DEQUANTIZE", [0], [2], None), ("DEQUANTIZE", [1], [3], None)]
    ops += [("ADD", [2, 3], [4], _add("ADD")), ("QUANTIZE", [4], [5], None)]
    path = tmp_path / "edges.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1], [5]))
    model = read_model(path)
    g = read(path).main
    a, b = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    xs = {0: a.reshape(1, 1, 256, 256, 1).astype(np.int8)}
    xs[1] = b.reshape(1, 1, 256, 256, 1).astype(np.int8)
    ref = reference_outputs(path, model.main, xs)
    ours = run_graph(g, xs, "tflite")
    assert [op.type for op in g.ops] == [ISLAND_OP]
    np.testing.assert_array_equal(ours[5], ref[5].reshape(ours[5].shape))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("make", [_residual_chain, _mixed])
def test_islands_convert_and_their_c_equals_the_executor(make, fmt, mli_builds, tmp_path):
    path = make(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_island_c_compiles_as_cxx20(mli_builds, tmp_path):
    """`float_island<N>` (its union and volatile) is valid C++20 too, warnings as errors."""
    path = _mixed(tmp_path)
    H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=1)
    src = (tmp_path / "out" / "net.c").read_text()
    assert "float_island3" in src and "volatile float r;" in src
    cmd = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd += [*mli_cflags("2.0"), "-I", str(tmp_path / "out"), "-c", "net.c", "-o", "net.o"]
    subprocess.run(cmd, cwd=tmp_path / "out", check=True, capture_output=True)


def test_inspect_names_each_island_and_how_it_runs(tmp_path):
    from mlitool.inspect.command import inspect_file

    doc = inspect_file(_mixed(tmp_path))
    assert list(doc["float_islands"]) == ["op 4 (MUL)", "op 9 (SUB)"]
    assert doc["float_islands"]["op 4 (MUL)"].startswith("int8 table of 256 (ADD, MUL of one")
    assert doc["float_islands"]["op 9 (SUB)"].startswith("float32 LOGISTIC, MUL, SUB of 3 int8")
    rows = {r["index"]: r["rewritten"] for r in doc["ops"]}
    assert rows[9]["as"] == "FLOAT_ISLAND" and rows[9]["runs"] == doc["float_islands"]["op 9 (SUB)"]
    assert rows[5] == {"into": "op 4 (MUL)"} and rows[10] == {"into": "op 9 (SUB)"}


@pytest.mark.skipif(
    "fma" not in Path("/proc/cpuinfo").read_text(errors="ignore").split(),
    reason="needs a host with fused multiply-add",
)
def test_island_c_stays_bit_exact_where_the_compiler_may_fuse_multiply_add(mli_builds, tmp_path):
    """Built with -ffp-contract=fast and FMA instructions the C still equals the executor: each
    product rounds on its own. Contracting DEQUANTIZE's product into the add changes 1472 of
    the 65536 pairs' results here (float64 model of an FMA), about 360 of the elements run."""
    shape = [1, 64, 64, 1]
    # x0 * 0.1 + x1 * 0.3 is an odd multiple of half the output scale 0.2 for half the pairs:
    # the float32 sum's last bit decides the rounding, and a fused multiply-add changes it
    tensors = [T(shape, scale=[0.1], zero_point=[0]), T(shape, scale=[0.3], zero_point=[0])]
    tensors += [T(shape, "float32") for _ in range(3)] + [T(shape, scale=[0.2], zero_point=[0])]
    ops = [("DEQUANTIZE", [0], [2], None), ("DEQUANTIZE", [1], [3], None)]
    ops += [("ADD", [2, 3], [4], _add("ADD")), ("QUANTIZE", [4], [5], None)]
    path = tmp_path / "ties.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1], [5]))
    flags = [*mli_cflags("2.0"), "-O2", "-mfma", "-ffp-contract=fast"]
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, flags, samples=4))


def test_lowering_notes_name_how_each_island_runs(tmp_path):
    """report's "Lowering decisions" shows each island's layer with how it runs."""
    from mlitool.pipeline import ModelOptions, load, settle

    _, model = load(_mixed(tmp_path), settle(ModelOptions(format="sa8")))
    notes = {(la.index, la.op_type, la.kernel): la.notes for la in model.layers}
    assert set(notes) == {(4, "MUL", "mlitool_lut8"), (9, "SUB", "mlitool_float_island3")}
    assert notes[(4, "MUL", "mlitool_lut8")] == [
        "float island: fallback C, int8 table of 256 (ADD, MUL of one int8 input: identical to "
        "the float island on every input)"
    ]
    assert notes[(9, "SUB", "mlitool_float_island3")][0].startswith(
        "float island: fallback C, float32 LOGISTIC, MUL, SUB of 3 int8 inputs as TFLite"
    )


def _batchnorm(tmp_path):
    """PT2E's BatchNorm after a concatenation, left in float: relu(((x - mean) * a) * b + c) with
    one constant per channel (shape [1, 1, 1, 4]); and a - x * 0.5 (the per-channel constant the
    left operand of a SUB: the first term)."""
    rng = np.random.default_rng(7)
    consts = [rng.uniform(lo, hi, (1, 1, 1, 4)).astype(np.float32) for lo, hi in
              ((-0.3, 0.3), (0.5, 1.5), (0.8, 1.2), (-0.2, 0.2))]  # fmt: skip
    tensors = [T(SHAPE, scale=[0.05], zero_point=[-3]), T(SHAPE, "float32")]  # 0, 1
    tensors += [T([1, 1, 1, 4], "float32", data=c) for c in consts]  # 2..5
    tensors += [T(SHAPE, "float32") for _ in range(4)]  # 6..9
    tensors += [T(SHAPE, scale=[0.03], zero_point=[-128])]  # 10
    tensors += [T([], "float32", data=np.float32(0.5)), T(SHAPE, "float32"), T(SHAPE, "float32")]
    tensors += [T(SHAPE, scale=[0.04], zero_point=[5])]  # 14
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("SUB", [1, 2], [6], _add("SUB")),
        ("MUL", [6, 3], [7], _add("MUL")),
        ("MUL", [7, 4], [8], _add("MUL")),
        ("ADD", [8, 5], [9], _add("ADD", "RELU")),
        ("QUANTIZE", [9], [10], None),
        ("MUL", [1, 11], [12], _add("MUL")),
        ("SUB", [3, 12], [13], _add("SUB")),
        ("QUANTIZE", [13], [14], None),
    ]
    path = tmp_path / "batchnorm.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [10, 14]))
    return path


def test_per_channel_constants_are_terms_equal_to_litert(tmp_path):
    g = _check_equals_litert(_batchnorm(tmp_path))
    assert [op.type for op in g.ops] == [ISLAND_OP, ISLAND_OP]
    bn, rsub = g.ops
    assert bn.inputs == (0, 2, 3, 4, 5)  # the int8 input, then the constants as they combine
    assert bn.options[ISLAND_STEPS] == (
        ("SUB", "NONE"), ("MUL", "NONE"), ("MUL", "NONE"), ("ADD", "RELU")
    )  # fmt: skip
    assert [len(t) for t in bn.options[ISLAND_TERMS]] == [256, 0, 0, 0, 0]
    assert rsub.inputs == (3, 0) and rsub.options[ISLAND_STEPS] == (("SUB", "NONE"),)
    assert [len(t) for t in rsub.options[ISLAND_TERMS]] == [0, 256]  # a; x * 0.5 tabulated


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_per_channel_island_c_equals_the_executor(fmt, mli_builds, tmp_path):
    path = _batchnorm(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
