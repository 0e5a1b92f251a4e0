"""A 16x8 GRU's all-zero initial state: the TFLite converter gives the constant of zeros and its
product with a gate a scale of 3.6e-43, which asks for 141 FX16 frac bits (C's int8_t holds at
most 127). Any frac bits represent zeros: they take those of the other operand of their reader.
Converted in fx16, mli mode equals tflite mode, and the emitted C on the real MLI 2.0.2 library
equals the executor in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

TINY = 3.58732407e-43  # the scale the converter gave rnn_seq_16x8's zero state


def zero_state_model(path):
    """out = x + x * zeros: x int16 [1, 12] of scale 4/32768 (13 frac bits), the zero state and
    the product of scale 3.6e-43, out of x's scale (MLI's fx ADD rounds a halving half up where
    TFLite rounds half away from zero: equal scales keep mli mode equal to tflite mode)."""
    q = dict(dtype="int16", zero_point=[0])
    tensors = [
        T([1, 12], scale=[4 / 32768], name="x", **q),
        T([1, 12], scale=[TINY], data=np.zeros((1, 12), np.int16), name="zero_state", **q),
        T([1, 12], scale=[TINY], name="gated_state", **q),
        T([1, 12], scale=[4 / 32768], name="out", **q),
    ]
    ops = [
        ("MUL", [0, 1], [2], None),
        ("ADD", [0, 2], [3], options("AddOptions", potScaleInt16=False)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [3]))
    return path


def add_zeros_model(path):
    """out = x + zeros, x int16 of scale 4 (-2 frac bits): zeros with the 15 frac bits of a
    zero range would make the ADD align x 17 bits left, past its 32-bit accumulator."""
    q = dict(dtype="int16", zero_point=[0])
    tensors = [
        T([1, 12], scale=[4.0], name="x", **q),
        T([1, 12], scale=[1.0], data=np.zeros((1, 12), np.int16), name="zeros", **q),
        T([1, 12], scale=[4.0], name="out", **q),
    ]
    ops = [("ADD", [0, 1], [2], options("AddOptions", potScaleInt16=False))]
    path.write_bytes(graph_model(tensors, ops, [0], [2]))
    return path


MODELS = {"zero_state": zero_state_model, "add_zeros": add_zeros_model}
FRAC = {
    "zero_state": {"x": 13, "zero_state": 13, "gated_state": 13, "out": 13},
    "add_zeros": {"x": -2, "zeros": -2, "out": -2},
}


def _inputs(g):
    x = np.random.default_rng(23).integers(-32768, 32768, (64, 1, 12)).astype(np.int16)
    x[0], x[1] = -32768, 32767  # the extremes
    return {g.inputs[0]: x}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_zero_tensors_take_their_readers_frac_bits(name, tmp_path):
    model = lower(read(MODELS[name](tmp_path / "zero.tflite")).main, format="fx16")
    frac = {t.source: t.frac_bits for t in model.tensors.values()}
    assert frac == FRAC[name]
    for t in model.tensors.values():
        if t.source not in ("x", "out"):
            assert any(n.startswith("all values are zero") for n in t.notes), t.notes


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tflite_mode_equals_litert(name, tmp_path):
    path = MODELS[name](tmp_path / "zero.tflite")
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mli_mode_equals_tflite_mode(name, tmp_path):
    g = read(MODELS[name](tmp_path / "zero.tflite")).main
    model = lower(g, format="fx16")
    xs = _inputs(g)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_on_the_real_library(name, mli_builds, tmp_path):
    path = MODELS[name](tmp_path / "zero.tflite")
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))
