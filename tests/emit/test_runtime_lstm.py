"""UNIDIRECTIONAL_SEQUENCE_LSTM on MLI's lstm_cell: float mode equal to LiteRT, the converted
model close to the float model, and the emitted runtime on the real MLI 2.0.2 library bit-exact
against the executor in the four builds (sa8, fx16, fx16_fx8_fx8)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.lstm_models import int8_lstm_model
from tests.support.paths import mli_cflags, shared_path
from tests.support.tflite_build import T, graph_model, options

MNIST_LSTM = "models/tflm/mnist_lstm_int8.tflite"
STEPS, FEATURES, CELLS = 5, 6, 4
RELU, TANH = 1, 4  # TFLite ActivationFunctionType


def lstm_model(
    *,
    cell_clip: float = 0.0,
    act: int = TANH,
    time_major: bool = False,
    peephole: bool = False,
    cifg: bool = False,
    seed: int = 0,
) -> bytes:
    """A float [1, 5, 6] -> [1, 5, 4] LSTM, then FULLY_CONNECTED to 3 scores."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        data = rng.uniform(-0.8, 0.8, shape).astype(np.float32)
        return T(list(shape), dtype="float32", scale=None, data=data)

    x_shape = [STEPS, 1, FEATURES] if time_major else [1, STEPS, FEATURES]
    tensors = [T(x_shape, dtype="float32", scale=None, name="x")]
    slots = []
    for k in range(24):
        if k in (1, 2, 3, 4):
            t = None if cifg and k == 1 else w(CELLS, FEATURES)
        elif k in (5, 6, 7, 8):
            t = None if cifg and k == 5 else w(CELLS, CELLS)
        elif k in (9, 10, 11):
            t = w(CELLS) if peephole else None
        elif k in (12, 13, 14, 15):
            t = None if cifg and k == 12 else w(CELLS)
        elif k in (18, 19):
            t = T(
                [1, CELLS],
                dtype="float32",
                scale=None,
                is_variable=True,
                name="h_state" if k == 18 else "c_state",
            )
        else:
            t = None
        if k == 0:
            slots.append(0)
        elif t is None:
            slots.append(-1)
        else:
            tensors.append(t)
            slots.append(len(tensors) - 1)
    out_shape = [STEPS, 1, CELLS] if time_major else [1, STEPS, CELLS]
    tensors.append(T(out_shape, dtype="float32", scale=None, name="seq"))
    seq = len(tensors) - 1
    tensors += [
        T([1, STEPS * CELLS], dtype="float32", scale=None, name="flat"),
        T([2], dtype="int32", scale=None, data=np.array([1, STEPS * CELLS], np.int32)),
        w(3, STEPS * CELLS),
        w(3),
        T([1, 3], dtype="float32", scale=None, name="y"),
    ]
    flat, shape, fw, fb, y = range(seq + 1, seq + 6)
    ops = [
        (
            "UNIDIRECTIONAL_SEQUENCE_LSTM",
            slots,
            [seq],
            options(
                "UnidirectionalSequenceLSTMOptions",
                fusedActivationFunction=act,
                cellClip=cell_clip,
                timeMajor=time_major,
            ),
        ),
        ("RESHAPE", [seq, shape], [flat], None),
        ("FULLY_CONNECTED", [flat, fw, fb], [y], options("FullyConnectedOptions")),
    ]
    return graph_model(tensors, ops, [0], [y])


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def _inputs(n: int = 8, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, 1, STEPS, FEATURES)).astype(np.float32)


@pytest.mark.parametrize("cell_clip", [0.0, 0.5])
def test_float_mode_equals_litert(cell_clip, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = _write(tmp_path, "lstm", lstm_model(cell_clip=cell_clip))
    g = read(path).main
    x = _inputs()
    seq = g.ops[0].outputs[0]
    ours = run_graph(g, {g.inputs[0]: x}, "float", keep=True)
    ref = run_litert(path, g, {g.inputs[0]: x}, [seq, g.outputs[0]])
    for t in (seq, g.outputs[0]):
        np.testing.assert_allclose(ours[t], ref[t], rtol=1e-5, atol=1e-5)


def test_int8_model_float_mode_follows_litert():
    """TFLite's integer LSTM against mlitool's float mode on the dequantized model: within two
    output steps (LiteRT computes gates in int16 fixed point)."""
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = shared_path(MNIST_LSTM)
    g = read(path).main
    x = np.random.default_rng(0).integers(-128, 128, (4, 1, 28, 28), dtype=np.int8)
    seq = g.ops[0].outputs[0]
    q = g.tensors[seq].quant
    ref = run_litert(path, g, {g.inputs[0]: x}, [seq])[seq]
    ours = run_graph(g, {g.inputs[0]: x}, "float", keep=True)[seq]
    assert (
        np.abs(ours - (ref.astype(np.float64) - int(q.zero_point[0])) * q.scale[0]).max()
        <= 2 * q.scale[0]
    )


@pytest.mark.parametrize("fmt", ["sa8", "fx16", "fx8w16d"])
def test_int8_lstm_on_the_real_library(fmt, mli_builds, tmp_path):
    H.assert_bit_exact(
        H.run_case(
            shared_path(MNIST_LSTM), fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=4
        )
    )


@pytest.mark.parametrize("fmt", ["sa8", "fx16", "fx8w16d"])
@pytest.mark.parametrize(
    "case",
    [
        {"x_zp": 17, "h_zp": -5, "hidden_zp": 9},
        {"cell_power": -11, "cell_clip": 0.90007},
        {"cell_power": -15, "gate_gain": 3.0},
    ],
    ids=["zero_points", "clip", "saturating"],
)
def test_generated_int8_lstm_on_the_real_library(case, fmt, mli_builds, tmp_path):
    """int8 LSTMs with zero points on input, state and hidden intermediate, a cell clip, a
    Q0.15 cell with saturating gates."""
    path = _write(tmp_path, "lstm", int8_lstm_model(**case))
    H.assert_bit_exact(
        H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=4)
    )


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_calibrated_float_lstm_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _write(tmp_path, "lstm", lstm_model(cell_clip=2.0))
    cal = tmp_path / "cal.npy"
    np.save(cal, _inputs(32, seed=5))
    H.assert_bit_exact(
        H.run_case(
            path,
            fmt,
            tmp_path / "out",
            mli_builds,
            mli_cflags("2.0"),
            calibration=cal,
            real=_inputs(4, seed=6),
            samples=4,
        )
    )


@pytest.mark.parametrize("fmt, min_snr", [("sa8", 20.0), ("fx16", 50.0)])
def test_converted_lstm_follows_the_float_model(fmt, min_snr, tmp_path):
    from mlitool.pipeline import ModelOptions
    from mlitool.verify.command import VerifyOptions, verify

    path = _write(tmp_path, "lstm", lstm_model(cell_clip=2.0))
    cal = tmp_path / "cal.npy"
    np.save(cal, _inputs(64, seed=5))
    doc = verify(
        path, ModelOptions(format=fmt, calibration=cal), VerifyOptions(input=cal, samples=64)
    )
    lstm = doc["layers"][0]
    assert lstm["type"] == "UNIDIRECTIONAL_SEQUENCE_LSTM"
    assert lstm["chained"]["snr_db"] > min_snr, lstm


def test_lowered_lstm_layout():
    g = read(shared_path(MNIST_LSTM)).main
    model = lower(g, format="sa8")
    copy, cell = model.layers[:2]
    assert (copy.kind, cell.kind, cell.kernel) == (
        "copy",
        "lstm_cell",
        "mli_krn_lstm_cell_sa8_sa8_sa32",
    )
    w_in, w_out = (model.tensor(cell.params[k]) for k in ("weights_in", "weights_out"))
    assert w_in.shape == (4, 28, 20) and w_out.shape == (4, 20, 20) and w_in.dim == 0
    assert model.tensor(cell.bias).shape == (4, 20)
    # MLI's gate g (cell input) is TFLite's cell gate, input 3: its int8 values, transposed.
    np.testing.assert_array_equal(w_in.data[1], np.asarray(g.tensors[g.ops[0].inputs[3]].data).T)
    assert copy.outputs == [cell.inputs[2]]  # the cell state reset before the kernel
    assert cell.cfg["results"] == 1 and cell.cfg["scratch_bytes"] == 80


@pytest.mark.parametrize(
    "kind, words",
    [
        ("peephole", "LSTM with peephole"),
        ("cifg", "coupled input and forget gates"),
        ("relu", "LSTM activation RELU"),
        ("time_major", "has batch 5"),
    ],
)
def test_refusals_say_why(kind, words, tmp_path):
    model = {
        "peephole": lstm_model(peephole=True),
        "cifg": lstm_model(cifg=True),
        "relu": lstm_model(act=RELU),
        "time_major": lstm_model(time_major=True),
    }[kind]
    g = read(_write(tmp_path, kind, model)).main
    problem = unsupported_ops(g)[0]  # a time-major batch also refuses its readers
    assert problem.startswith("op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)") and words in problem


def test_mli1_has_no_lstm():
    g = read(shared_path(MNIST_LSTM)).main
    with pytest.raises(UnsupportedError, match="MLI 1.1 has no LSTM kernel"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")


def test_calibration_takes_the_cell_range_from_the_float_recurrence(tmp_path):
    """Without a clip, the cell's SA8 range is the largest |cell state| the calibration data
    reaches: recomputed here from the model's weights with a plain recurrence (float64)."""
    from mlitool.calibrate import collect_ranges

    path = _write(tmp_path, "lstm", lstm_model(cell_clip=0.0, seed=3))
    g = read(path).main
    op = g.ops[0]
    x = _inputs(16, seed=7)
    w = [np.asarray(g.tensors[op.inputs[k]].data, np.float64) for k in range(1, 9)]
    bias = [np.asarray(g.tensors[op.inputs[k]].data, np.float64) for k in range(12, 16)]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h = c = np.zeros((len(x), CELLS))
    biggest = 0.0
    for t in range(STEPS):
        xt = x[:, 0, t].astype(np.float64)
        pre = [xt @ w[k].T + h @ w[4 + k].T + bias[k] for k in range(4)]  # i, f, c, o
        c = sig(pre[1]) * c + sig(pre[0]) * np.tanh(pre[2])
        h = sig(pre[3]) * np.tanh(c)
        biggest = max(biggest, float(np.abs(c).max()))
    ranges = collect_ranges(g, {g.inputs[0]: x})
    model = lower(g, format="sa8", ranges=ranges)
    cell = model.tensor(next(la for la in model.layers if la.kind == "lstm_cell").inputs[2])
    assert float(cell.real_scale()[0]) * 127 == pytest.approx(biggest, rel=1e-3)
    assert any("calibrated" in n for n in cell.notes)
