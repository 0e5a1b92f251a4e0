"""Files of the op corpus (tests/corpus_ops, made by the real TFLite converter of TF 2.21) whose
float or bool islands inside int8 models issue 35 unlocked: ADD_N of dequantized tensors,
comparisons of dequantized values, SELECT between float values of the input, UNPACK of a
dequantized tensor, ROUND. tflite mode equals LiteRT, the file converts in sa8 with no float
tensor left, and the emitted C equals the executor on the real MLI 2.0.2 library in the four
builds.

round_int8 is checked in two steps: LiteRT's reference resolver has no ROUND, so the oracle runs
its builtin kernels, whose int8 QUANTIZE of float32 differs from the reference one (TFLite
Micro's: float32 division, ties away from zero) on ties by design (x86: 8 elements at a time
multiplied by the reciprocal scale, ties to even; the rest divided in double). The file's ROUND
output (float32) must equal mlitool's ROUND of the DEQUANTIZE values bit for bit, and mlitool's
int8 output must equal LiteRT's reference QUANTIZE of that float32 tensor.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.fast_memory import api_header, least_budget, macro, operands_outside
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, single_op_model

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = [
    "add_n_int8",
    "equal_int8",
    "not_equal_int8",
    "logical_and_int8",
    "logical_or_int8",
    "reduce_all_int8",
    "unpack_int8",
    "round_int8",
]


def _inputs(g) -> dict:
    """Every int8 value at least once, then random ones: 4 samples."""
    t = g.tensors[g.inputs[0]]
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (4, *t.shape)).astype(np.int8)
    x.reshape(4, -1)[0, :256] = np.arange(-128, 128)[: x[0].size]
    return {g.inputs[0]: x}


def _reference_quantize(values: np.ndarray, out, tmp_path) -> np.ndarray:
    """LiteRT's reference QUANTIZE (BUILTIN_REF) of float32 `values` [n, ...] to int8 `out`."""
    path = tmp_path / "quantize.tflite"
    shape = list(values.shape[1:])
    q = dict(scale=[float(out.quant.scale[0])], zero_point=[int(out.quant.zero_point[0])])
    path.write_bytes(single_op_model("QUANTIZE", [T(shape, "float32")], [T(shape, "int8", **q)]))
    g = read_model(path).main
    return reference_outputs(path, g, {g.inputs[0]: values})[g.outputs[0]]


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_and_converts(name, tmp_path):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = _inputs(g)
    ours = run_graph(g, xs, "tflite")
    if name == "round_int8":
        file = read_model(path).main
        deq, rnd = file.ops[0].outputs[0], file.ops[1].outputs[0]
        ref = reference_outputs(path, file, xs)
        np.testing.assert_array_equal(ref[rnd].view(np.int32), _round_of(ref[deq]).view(np.int32))
        want = _reference_quantize(ref[rnd], file.tensors[file.outputs[0]], tmp_path)
        np.testing.assert_array_equal(ours[g.outputs[0]], want)
    else:
        ref = reference_outputs(path, g, xs)
        for o in g.outputs:
            np.testing.assert_array_equal(ours[o], ref[o])
    assert all(g.tensors[i].dtype != "float32" for op in g.ops for i in op.outputs)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert model.layers


def _round_of(x: np.ndarray) -> np.ndarray:
    from mlitool.ops.unary.float_math import round_half_even

    return round_half_even(x)


@pytest.mark.parametrize("name", FILES)
def test_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_oracle_leaves_out_tensors_a_rewrite_added():
    """reduce_all_int8 has 9 tensors; LiteRT's interpreter adds REDUCE_ALL's temporaries as 9
    and 10, and the SELECT island's new int8 side is tensor 9 of mlitool's graph: not LiteRT's."""
    path = CORPUS / "reduce_all_int8.tflite"
    g = read(path).main
    side = next(op for op in g.ops if op.type == "SELECT_V2").inputs[2]
    assert side == 9 and g.tensors[side].name.endswith("/int8")
    xs = _inputs(g)
    lit = oracle.run_litert(path, g, xs, [side, *g.outputs])
    assert set(lit) == set(g.outputs)
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(lit[g.outputs[0]], ours)


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
@pytest.mark.parametrize("name", ["add_n_int8", "not_equal_int8", "reduce_all_int8"])
def test_fast_memory_and_bit_exact(name, budget, mli_builds, tmp_path):
    """`convert --fast-memory` (tests/ops/test_fast_memory_issue35b.py's check): the island
    ops' operands in the fast buffer (-DNAME_CHECK_OPERANDS), bit-exact in the four builds.
    Not unpack_int8: views only, no kernel call, so the emitted operand check helper is unused
    (-Werror refuses it) and no budget is too small."""
    path = CORPUS / f"{name}.tflite"
    if budget == "least":
        budget = least_budget(H.convert(path, "sa8", tmp_path / "plain").model)
    cflags = mli_cflags("2.0")
    conv = H.convert(path, "sa8", tmp_path / "out", fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    fast_bytes = macro(conv, fm["macros"]["fast_bytes"])
    assert fast_bytes == fm["fast_bytes"] <= budget
    objs = H.compile_objects(conv, [*cflags, f"-D{fm['macros']['check_operands']}"])
    called = {la.kernel for la in conv.model.layers if la.kernel.startswith("mli_krn_")}
    wrap = H.compile_wrappers(conv, cflags, api_header()) if called else None
    results = H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 4, 0), wrap=wrap)
    H.assert_bit_exact(results)
    for key, result in results.items():
        if called:
            assert operands_outside(result.operand_log, fast_bytes) == [], key
