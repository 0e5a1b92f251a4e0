"""`tflite` mode's integer LSTM (8x8_16) against LiteRT's reference kernels, and gemmlowp's 16-bit
sigmoid / tanh tables against LiteRT's own 16-bit kernels on every int16 input. (TFLite Micro's
MNIST LSTM is checked layer by layer with the other shared models in test_exec_tflite.)"""

from __future__ import annotations

import re

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.gemmlowp16 import logistic_table, tanh_table
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.litert import reference_outputs
from tests.support.lstm_models import float_lstm_model, int8_lstm_model
from tests.support.tflite_build import T, single_op_model


def _compare(
    tmp_path, model: bytes, samples: int = 12, seed: int = 1, held: bool = False
) -> np.ndarray:
    """Our outputs equal LiteRT's on random int8 inputs (`held`: each sample's first step repeated
    over the sequence, batch-major models only)."""
    path = tmp_path / "lstm.tflite"
    path.write_bytes(model)
    g = read(path).main
    shape = tuple(g.tensors[g.inputs[0]].shape)
    x = np.random.default_rng(seed).integers(-128, 128, (samples,) + shape, dtype=np.int8)
    if held:
        x = np.repeat(x[:, :, :1], shape[1], axis=2)
    ref = reference_outputs(path, g, {g.inputs[0]: x})[g.outputs[0]]
    ours = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
    assert ours.dtype == np.int8
    np.testing.assert_array_equal(ours, ref)
    return ref


@pytest.mark.parametrize(
    "case",
    [
        {},
        {"x_zp": 17, "h_zp": -5},  # zero points folded into both biases
        {"hidden_zp": 9},  # the hidden intermediate's own zero point
        {"cell_power": -11},  # tanh of a Q4.11 cell state
        {"cell_power": -15, "gate_gain": 3.0},  # saturating gates, a small cell range
        {"cell_power": -9},
        {"cell_clip": 0.90007},  # clip 3686.7 LSB: truncated, as TFLite
        {"cifg": True},  # input gate = 1 - forget gate
        {"time_major": True},
        {"batch": 3},  # a model batch of 3 sequences
        {"steps": 1, "features": 1, "cells": 1},
    ],
    ids=lambda case: ",".join(f"{k}={v}" for k, v in case.items()) or "plain",
)
def test_integer_lstm_equals_litert(case, tmp_path):
    out = _compare(tmp_path, int8_lstm_model(**case))
    assert len(np.unique(out)) > min(out.size // 4, 8)  # not a constant output


# An input held over the sequence drives gates and cells into saturation, where a wrong bound or
# constant shows: outputs on int8's -128; a CIFG input gate of 1 - forget on saturated gates; cells
# of a Q5.10 state beyond 16, whose tanh takes exp below -32 (gemmlowp clamps it to 0); the hidden
# multiplier's float32 product rounding the saturated sigmoid(8) * tanh(8) = 32756 * 32767 to 88
# at this hidden scale (87 in float64).
@pytest.mark.parametrize(
    "case",
    [
        {"hidden_zp": -100},
        {"cifg": True, "gate_gain": 3.0, "cell_power": -15},
        {"cell_power": -10, "gate_gain": 3.0, "steps": 40},
        {"gate_gain": 5.0, "steps": 12, "hidden_scale": 0.011424037627875805},
    ],
    ids=lambda case: ",".join(f"{k}={v}" for k, v in case.items()),
)
def test_integer_lstm_saturated_equals_litert(case, tmp_path):
    out = _compare(tmp_path, int8_lstm_model(**case), samples=16, held=True)
    assert (out == -128).any() or "hidden_zp" not in case
    assert len(np.unique(out)) > 8


@pytest.mark.parametrize("power", [-8, -16])
def test_cell_scale_outside_tanh_range_is_refused(power, tmp_path):
    """TFLite's cell tanh takes Q0.15 .. Q6.9 (its dispatch silently skips other formats)."""
    path = tmp_path / "lstm.tflite"
    path.write_bytes(int8_lstm_model(cell_power=power))
    g = read(path).main
    x = np.zeros((1,) + tuple(g.tensors[g.inputs[0]].shape), np.int8)
    with pytest.raises(UnsupportedError, match=re.escape("between 2^-15 and 2^-9")):
        run_graph(g, {g.inputs[0]: x}, "tflite")


@pytest.mark.parametrize(
    "slots_from, what",
    [
        ({9: 13}, "peephole"),
        ({11: 13}, "peephole"),
        ({16: 6}, "projection"),
        ({17: 13}, "projection"),
        ({20: 13}, "layer normalization"),
        ({23: 13}, "layer normalization"),
    ],
)
def test_optional_parts_are_refused(slots_from, what, tmp_path):
    """A part the integer kernel does not compute is refused, never silently left out (the
    optional slots filled with tensors of valid shapes)."""
    path = tmp_path / "lstm.tflite"
    path.write_bytes(int8_lstm_model(slots_from=slots_from))
    g = read(path).main
    x = np.zeros((1,) + tuple(g.tensors[g.inputs[0]].shape), np.int8)
    with pytest.raises(UnsupportedError, match=f"an integer LSTM with {what}"):
        run_graph(g, {g.inputs[0]: x}, "tflite")


def test_missing_hidden_intermediate_is_refused(tmp_path):
    model = int8_lstm_model()
    path = tmp_path / "lstm.tflite"
    path.write_bytes(model)
    g = read(path).main
    g.ops[0].intermediates = g.ops[0].intermediates[:4]
    x = np.zeros((1,) + tuple(g.tensors[g.inputs[0]].shape), np.int8)
    with pytest.raises(UnsupportedError, match="hidden-state intermediate"):
        run_graph(g, {g.inputs[0]: x}, "tflite")


@pytest.mark.parametrize("op, table", [("TANH", tanh_table), ("LOGISTIC", logistic_table)])
def test_16bit_tables_equal_litert_on_every_input(op, table, tmp_path):
    """LiteRT's default (optimized) int16 TANH / LOGISTIC with a Q3.12 input and a Q0.15 output
    is gemmlowp's FixedPoint<int16_t, 3> function: all 65,536 inputs compared."""
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    path = tmp_path / "act.tflite"
    path.write_bytes(
        single_op_model(
            op,
            [T([1, 65536], dtype="int16", scale=2.0**-12)],
            [T([1, 65536], dtype="int16", scale=2.0**-15)],
        )
    )
    it = litert.Interpreter(model_path=str(path), num_threads=1)
    it.allocate_tensors()
    it.set_tensor(
        it.get_input_details()[0]["index"], np.arange(-32768, 32768, dtype=np.int16).reshape(1, -1)
    )
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"])[0], table(3))


@pytest.mark.parametrize(
    "slots_from, words",
    [
        ({4: 8}, "input 4 has shape [7, 7], expected [7, 5]"),
        ({13: -1}, "omits required input(s) [13]"),
        ({1: -1}, "only some of the input gate's tensors"),
        ({19: 13}, "state input 19 has 7 elements, expected 14"),
        ({18: 13}, "state input 18 has 7 elements, expected 14"),
        ({4: 13}, "input 4 has shape [7], expected rank 2"),
        ({5: -1}, "only some of the input gate's tensors"),
        ({12: -1}, "only some of the input gate's tensors"),  # LiteRT: SIGSEGV
    ],
)
def test_malformed_lstm_is_refused_in_one_line(slots_from, words, tmp_path, capsys):
    from tests.cli.test_bad_input import run_main

    path = tmp_path / "bad.tflite"
    path.write_bytes(int8_lstm_model(batch=2, slots_from=slots_from))
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((1, 2, 6, 5), np.int8))
    code, _, err = run_main(
        [
            "run",
            str(path),
            "--mode",
            "tflite",
            "--input",
            str(npy),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
        capsys,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "malformed graph: op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)" in err and words in err, err


def test_projection_lstm_is_well_formed(tmp_path):
    """With a projection [P, M] the output state holds B·P elements, the cell state B·M: a
    float LSTM of 5 cells projected to 3 outputs, batch 2, which LiteRT runs."""
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.tflite.reader import read_model
    from mlitool.tflite.validate import problems

    path = tmp_path / "projection.tflite"
    path.write_bytes(float_lstm_model(batch=2, projection=3))
    it = litert.Interpreter(model_path=str(path), num_threads=1)
    it.allocate_tensors()
    it.set_tensor(0, np.random.default_rng(2).uniform(-1, 1, (2, 3, 4)).astype(np.float32))
    it.invoke()
    assert it.get_tensor(it.get_output_details()[0]["index"]).shape == (2, 3, 3)
    assert problems(read_model(path).main) == []


@pytest.mark.parametrize(
    "case",
    [
        {"batch": 2, "projection": 3},
        {"batch": 3, "projection": 3, "projection_bias": True, "proj_clip": 0.15},
        {"batch": 2, "projection": 6, "projection_bias": True, "time_major": True},
        {"batch": 2, "peephole": True},
        {"peephole": True, "projection": 2, "projection_bias": True},
    ],
    ids=lambda case: ",".join(f"{k}={v}" for k, v in case.items()),
)
def test_float_lstm_equals_litert(case, tmp_path):
    """float mode's LSTM (float models, and the accuracy reference of int8 ones) against
    LiteRT's float kernel: projection with bias and clip, peephole, model batches > 1."""
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = tmp_path / "lstm.tflite"
    path.write_bytes(float_lstm_model(**case))
    g = read(path).main
    shape = tuple(g.tensors[g.inputs[0]].shape)
    x = np.random.default_rng(3).uniform(-2, 2, (4,) + shape).astype(np.float32)
    y = g.outputs[0]
    ref = run_litert(path, g, {g.inputs[0]: x}, [y])[y]
    ours = run_graph(g, {g.inputs[0]: x}, "float")[y]
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    if case.get("proj_clip"):
        assert np.abs(ref).max() == np.float32(case["proj_clip"])  # the clip is reached


def test_float_lstm_run_cli(tmp_path, capsys):
    """The issue's repro: `run --mode float` on the projected batch-2 LSTM exits 0 with
    LiteRT's outputs; layer normalization is refused (exit 4) naming the op."""
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert
    from tests.cli.test_bad_input import run_main

    x = np.random.default_rng(4).uniform(-1, 1, (2, 2, 3, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    for name, model in (
        ("proj", float_lstm_model(batch=2, projection=3)),
        ("norm", float_lstm_model(layer_norm=True, batch=2)),
    ):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(model)
        code, _, err = run_main(
            [
                "run",
                str(path),
                "--mode",
                "float",
                "--input",
                str(tmp_path / "x.npy"),
                "--npz",
                str(tmp_path / "o.npz"),
            ],
            capsys,
        )
        if name == "proj":
            assert code == 0, err
            g = read(path).main
            ref = run_litert(path, g, {0: x}, [g.outputs[0]])[g.outputs[0]]
            np.testing.assert_allclose(np.load(tmp_path / "o.npz")["y"], ref, rtol=1e-5, atol=1e-6)
        else:
            assert code == 4 and len(err.strip().splitlines()) == 1, err
            assert "op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)" in err and "layer normalization" in err


# LiteRT's Prepare fails its CheckedLog2 of a cell scale that is no power of two and ignores the
# failure: the integer parameters stay 0 and every output is 0 (tflite mode reproduces it). A
# scale within CheckedLog2's 1e-3 (in log2) of a power runs as that power, the clip in the file's
# own scale.
@pytest.mark.parametrize(
    "case",
    [
        {"cell_scale": 2.0**-12 * 1.3},
        {"cell_scale": 1 / 3000, "x_zp": 17, "h_zp": -5, "hidden_zp": 9},
        {"cell_scale": 2.0**-16 * 1.5, "cifg": True},
        {"cell_scale": 2.0**-8 * 1.1, "cell_clip": 0.9, "batch": 3},
        {"cell_scale": 2.0**-12 * (1 + 3e-3), "time_major": True},
    ],
    ids=lambda case: ",".join(f"{k}={v:.6g}" for k, v in case.items()),
)
def test_cell_scale_not_a_power_of_two_equals_litert(case, tmp_path):
    out = _compare(tmp_path, int8_lstm_model(**case))
    assert (out == 0).all()  # LiteRT's zero parameters, not the zero point


@pytest.mark.parametrize(
    "case",
    [
        {"cell_scale": 2.0**-12 * (1 + 1e-4)},
        {"cell_scale": 2.0**-11 * (1 - 5e-4), "cell_clip": 0.90007, "gate_gain": 3.0},
    ],
    ids=lambda case: ",".join(f"{k}={v:.6g}" for k, v in case.items()),
)
def test_cell_scale_near_a_power_of_two_equals_litert(case, tmp_path):
    out = _compare(tmp_path, int8_lstm_model(**case), samples=16)
    assert len(np.unique(out)) > 8
