"""What the second Keras corpus (tools/make_corpus2.py) found: SQUARE as an int8 model's float
island (GroupNormalization's variance), REVERSE_V2 (a Bidirectional RNN's backward sequence),
PACK of unrolled time steps along axis 0 (return_sequences), and a BATCH_TO_SPACE_ND whose
stored batch is no multiple of its block (a dilated Conv1D of a dynamic-batch export). Each:
tflite mode equals LiteRT's reference kernels, mli mode equals tflite mode, and the emitted C on
the real MLI 2.0.2 library equals the executor in the four builds (sa8 and fx16, between MLI
kernels)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import MlitoolError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import activation, graph_model, int32_const, options

TANH_Q = (1 / 128, 0)  # TANH's int8 output parameters


def _between(tensors, ops, x, y, xshape, yshape, q, versions):
    """`ops` from tensor x to y put between a TANH and a RELU (int8): MLI kernels on both
    sides, negative values into the op; returns (tensors, ops, graph input, graph output)."""
    tensors = tensors + [activation(xshape), activation(yshape, q=q)]
    ops = [("TANH", [len(tensors) - 2], [x], None), *ops, ("RELU", [y], [len(tensors) - 1], None)]
    versions.update(TANH=1, RELU=1)
    return tensors, ops, len(tensors) - 2, len(tensors) - 1


def _inputs(g, n=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for i in g.inputs:
        t = g.tensors[i]
        if t.dtype == "float32":
            out[i] = rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)
        else:
            info = np.iinfo(t.dtype)
            out[i] = rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)
    return out


def _check_modes(path, lowered=True):
    """tflite mode equals LiteRT; mli mode (sa8) equals tflite mode."""
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)
    mode = "float" if g.tensors[g.inputs[0]].dtype == "float32" else "tflite"
    ours = run_graph(g, xs, mode)
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
    if lowered:
        model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
        got, _ = run_mli(g, model, xs, arith_for("vpx"))
        for o in g.outputs:
            np.testing.assert_array_equal(got[o], ours[o])


# --- REVERSE_V2 ------------------------------------------------------------------------------

REVERSE = {  # name -> (input shape, axes)
    "h": ((1, 5, 7, 3), [1]),
    "c": ((1, 5, 7, 3), [3]),
    "time": ((1, 12, 8), [1]),
}


def _reverse_model(tmp_path, name, dtype="int8", between=False):
    shape, axes = REVERSE[name]
    q = TANH_Q if between else (0.05, 3)
    tensors = [activation(shape, dtype, q), int32_const(axes), activation(shape, dtype, q)]
    versions = {"REVERSE_V2": 3 if dtype == "int16" else 2}
    ops = [("REVERSE_V2", [0, 1], [2], options("ReverseV2Options"))]
    x, y = 0, 2
    if between:
        tensors, ops, x, y = _between(tensors, ops, 0, 2, shape, shape, q, versions)
    path = tmp_path / f"reverse_{name}_{dtype}{'_b' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, [x], [y], versions))
    return path


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(REVERSE))
def test_reverse_v2_modes(name, dtype, tmp_path):
    _check_modes(_reverse_model(tmp_path, name, dtype), lowered=dtype == "int8")


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(REVERSE))
def test_reverse_v2_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _reverse_model(tmp_path, name, between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


# --- SQUARE: DEQUANTIZE -> SQUARE -> QUANTIZE of an int8 model -------------------------------

# (input scale, zero point, output scale, zero point) of the int8 tensors around the island
SQUARE_Q = [(0.05, 3, 0.04, -128), (0.0123, 60, 0.5, -100), (0.2, -20, 0.01, 5)]


def _square_model(tmp_path, q, between=False):
    sin, zin, sout, zout = q
    shape = (1, 16, 16, 1)
    qin = TANH_Q if between else (sin, zin)
    tensors = [
        activation(shape, q=qin),
        activation(shape, "float32"),
        activation(shape, "float32"),
        activation(shape, q=(sout, zout)),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("SQUARE", [1], [2], None),
        ("QUANTIZE", [2], [3], None),
    ]
    versions = {"DEQUANTIZE": 2}
    x, y = 0, 3
    if between:
        tensors, ops, x, y = _between(tensors, ops, 0, 3, shape, shape, (sout, zout), versions)
    path = tmp_path / f"square_{sin}_{zout}{'_b' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, [x], [y], versions))
    return path


@pytest.mark.parametrize("q", SQUARE_Q)
def test_square_island_on_every_int8_input(q, tmp_path):
    path = _square_model(tmp_path, q)
    g = read(path).main
    assert [op.type for op in g.ops] == ["SQUARE"]  # the island is one int8 op
    x = np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape(1, 1, 16, 16, 1)
    xs = {g.inputs[0]: x}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    got, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(got[g.outputs[0]], ref)


def test_square_float(tmp_path):
    path = tmp_path / "square_f.tflite"
    shape = [1, 6, 5, 3]
    path.write_bytes(
        graph_model([activation(shape, "float32")] * 2, [("SQUARE", [0], [1], None)], [0], [1])
    )
    _check_modes(path, lowered=False)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_square_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _square_model(tmp_path, SQUARE_Q[0], between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


# --- PACK of time steps along axis 0 (an unrolled RNN's return_sequences) --------------------


def test_pack_of_time_steps_lowers_and_runs_bit_exact(tmp_path, mli_builds):
    """UNPACK [1, 3, 4] into 3 steps of [1, 4], TANH each, PACK them along axis 0 to [3, 1, 4]
    (rows, not a batch), TRANSPOSE to [1, 3, 4] (moves unit axes only), RELU."""
    tensors = [activation((1, 3, 4))]
    tensors += [activation((1, 4)) for _ in range(3)] + [
        activation((1, 4), q=TANH_Q) for _ in range(3)
    ]
    tensors += [
        activation((3, 1, 4), q=TANH_Q),
        int32_const([1, 0, 2]),
        activation((1, 3, 4), q=TANH_Q),
    ]
    tensors += [activation((1, 3, 4), q=TANH_Q)]
    ops = [("UNPACK", [0], [1, 2, 3], options("UnpackOptions", num=3, axis=1))]
    ops += [("TANH", [1 + k], [4 + k], None) for k in range(3)]
    ops += [
        ("PACK", [4, 5, 6], [7], options("PackOptions", valuesCount=3, axis=0)),
        ("TRANSPOSE", [7, 8], [9], None),
        ("RELU", [9], [10], None),
    ]
    path = tmp_path / "pack_steps.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [10]))
    _check_modes(path)
    for fmt in ("sa8", "fx16"):
        out = tmp_path / fmt
        H.assert_bit_exact(H.run_case(path, fmt, out, mli_builds, mli_cflags("2.0")))


# --- BATCH_TO_SPACE_ND whose batch is no multiple of the block -------------------------------


def test_batch_to_space_of_a_batch_not_a_multiple_of_the_block_is_refused_not_a_crash(tmp_path):
    """A dynamic-batch dilated Conv1D stores batch 1 where SPACE_TO_BATCH_ND makes 2: the
    kernel's shape check refuses it (as TFLite's Prepare does) instead of failing to reshape,
    which the reader reported as a corrupt file."""
    tensors = [
        activation((1, 32, 12)),
        int32_const([2]),
        int32_const([[0, 0]]),
        activation((1, 64, 12)),
    ]
    path = tmp_path / "b2s.tflite"
    path.write_bytes(graph_model(tensors, [("BATCH_TO_SPACE_ND", [0, 1, 2], [3], None)], [0], [3]))
    with pytest.raises(MlitoolError) as e:
        read(path)
    assert "corrupt" not in str(e.value) and "not a multiple of the block 2" in str(e.value)


# --- MUL whose factor is s1 * s2 / s_out, not each input's scale over the output's -----------


def test_mul_by_a_tiny_scale_state_is_not_refused(tmp_path):
    """A 16x8 GRU multiplies a gate (scale 2^-15) by its all-zero initial state, whose scale
    the quantizer makes 3.6e-43, as is the product's: TFLite's factor is s1 * s2 / s_out, 2^-15;
    s2 / s_out alone was 1 and s1 / s_out 8.5e37, which was refused as past 2^30."""
    tiny = float(np.float32(3.58732407e-43))
    tensors = [
        activation((1, 12), "int16", (2.0**-15, 0)),
        activation((1, 12), "int16", (tiny, 0)),
        activation((1, 12), "int16", (tiny, 0)),
    ]
    path = tmp_path / "mul_tiny.tflite"
    path.write_bytes(graph_model(tensors, [("MUL", [0, 1], [2], None)], [0, 1], [2], {"MUL": 4}))
    _check_modes(path, lowered=False)
