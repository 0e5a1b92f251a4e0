"""16x8 models (int16 activations with zero point 0, int8 weights, int64 bias): tflite mode is
TFLite's 16x8 reference arithmetic, equal to LiteRT; convert lowers them to FX16 activations
(fx16, fx8w16d), the emitted C runs on the real MLI library bit-exact against the executor, and
verify shows the cost against tflite mode in int16 LSB; sa8 is refused with the remedy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, graph_model, options


def conv_model(path):
    """int16 [1,8,8,3] -> CONV_2D (RELU) -> DEPTHWISE_CONV_2D -> ADD (general int16 scales)."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    dw = rng.integers(-127, 128, (1, 3, 3, 4)).astype(np.int8)
    ws, dws = rng.uniform(0.002, 0.01, 4), rng.uniform(0.002, 0.01, 4)
    s_in, s1, s2, s3 = 1 / 2048, 1 / 1024, 1 / 512, 1 / 700
    tensors = [
        T([1, 8, 8, 3], dtype="int16", name="x", scale=[s_in], zero_point=[0]),
        T([4, 3, 3, 3], data=w, name="w", scale=ws.tolist(), zero_point=[0] * 4),
        T(
            [4],
            dtype="int64",
            data=rng.integers(-(2**20), 2**20, 4).astype(np.int64),
            name="b",
            scale=(s_in * ws).tolist(),
            zero_point=[0] * 4,
        ),
        T([1, 8, 8, 4], dtype="int16", name="c", scale=[s1], zero_point=[0]),
        T([1, 3, 3, 4], data=dw, name="dw", scale=dws.tolist(), zero_point=[0] * 4, axis=3),
        T(
            [4],
            dtype="int64",
            data=rng.integers(-(2**20), 2**20, 4).astype(np.int64),
            name="db",
            scale=(s1 * dws).tolist(),
            zero_point=[0] * 4,
        ),
        T([1, 8, 8, 4], dtype="int16", name="d", scale=[s2], zero_point=[0]),
        T([1, 8, 8, 4], dtype="int16", name="y", scale=[s3], zero_point=[0]),
    ]
    ops = [
        (
            "CONV_2D",
            [0, 1, 2],
            [3],
            options("Conv2DOptions", padding=0, strideW=1, strideH=1, fusedActivationFunction=1),
        ),
        (
            "DEPTHWISE_CONV_2D",
            [3, 4, 5],
            [6],
            options("DepthwiseConv2DOptions", padding=0, strideW=1, strideH=1, depthMultiplier=1),
        ),
        ("ADD", [3, 6], [7], options("AddOptions", potScaleInt16=False)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [7]))
    return path


def fc_model(path):
    rng = np.random.default_rng(1)
    ws = 0.004
    tensors = [
        T([1, 16], dtype="int16", name="x", scale=[1 / 4096], zero_point=[0]),
        T(
            [5, 16],
            data=rng.integers(-127, 128, (5, 16)).astype(np.int8),
            name="w",
            scale=[ws],
            zero_point=[0],
        ),
        T(
            [5],
            dtype="int64",
            data=rng.integers(-5000, 5000, 5).astype(np.int64),
            name="b",
            scale=[ws / 4096],
            zero_point=[0],
        ),
        T([1, 5], dtype="int16", name="y", scale=[1 / 300], zero_point=[0]),
    ]
    path.write_bytes(
        graph_model(
            tensors,
            [("FULLY_CONNECTED", [0, 1, 2], [3], options("FullyConnectedOptions"))],
            [0],
            [3],
        )
    )
    return path


MODELS = {"conv": conv_model, "fc": fc_model}


def _inputs(g, n=16, seed=3):
    shape = (n,) + tuple(g.tensors[g.inputs[0]].shape)
    return np.random.default_rng(seed).integers(-20000, 20000, shape).astype(np.int16)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tflite_mode_is_litert_16x8(name, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = MODELS[name](tmp_path / f"{name}.tflite")
    g = read(path).main
    x = _inputs(g)
    values = run_graph(g, {g.inputs[0]: x}, "tflite", keep=True)
    wanted = [op.outputs[0] for op in g.ops]
    ref = run_litert(path, g, {g.inputs[0]: x}, wanted)
    for i in wanted:  # every layer, not only the output
        assert values[i].dtype == np.int16
        np.testing.assert_array_equal(values[i], ref[i])
        assert len(np.unique(values[i])) > 50  # real values, not a saturated constant


@pytest.mark.parametrize("fmt", ["fx16", "fx8w16d"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_16x8_runs_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = MODELS[name](tmp_path / f"{name}.tflite")
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_verify_shows_the_cost_in_int16_lsb(tmp_path, capsys):
    from mlitool.cli.entry import main

    path = conv_model(tmp_path / "conv.tflite")
    with pytest.raises(SystemExit):
        main(["verify", str(path), "-f", "fx16", "-n", "32", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["references"]["tflite"] is True
    out = doc["outputs"][0]["vs_tflite"]
    assert 0 < out["max_lsb"] <= 16 and 0 < out["differing_share"] < 1  # measured: 5 LSB


TAILS = {  # an op after fc_model's FULLY_CONNECTED: (op, inputs, options, output scale)
    "LOGISTIC": ("LOGISTIC", [3], None, 1 / 32768),
    # TFLite's power-of-two int16 ADD (LiteRT runs it), which tflite mode does not run
    "ADD": ("ADD", [3, 3], options("AddOptions", potScaleInt16=True), 1 / 4096),
}


def fc_tail_model(path, tail="LOGISTIC"):
    """fc_model (16 -> 5) followed by TAILS[tail], int16 throughout."""
    op, inputs, opts, out_scale = TAILS[tail]
    rng = np.random.default_rng(2)
    tensors = [
        T([1, 16], dtype="int16", name="x", scale=[1 / 4096], zero_point=[0]),
        T(
            [5, 16],
            data=rng.integers(-127, 128, (5, 16)).astype(np.int8),
            name="w",
            scale=[0.004],
            zero_point=[0],
        ),
        T(
            [5],
            dtype="int64",
            data=rng.integers(-5000, 5000, 5).astype(np.int64),
            name="b",
            scale=[0.004 / 4096],
            zero_point=[0],
        ),
        T([1, 5], dtype="int16", name="fc", scale=[1 / 4096], zero_point=[0]),
        T([1, 5], dtype="int16", name="y", scale=[out_scale], zero_point=[0]),
    ]
    path.write_bytes(
        graph_model(
            tensors,
            [
                ("FULLY_CONNECTED", [0, 1, 2], [3], options("FullyConnectedOptions")),
                (op, inputs, [4], opts),
            ],
            [0],
            [4],
        )
    )
    return path


def test_verify_compares_an_int16_logistic_with_tflite_mode(tmp_path, capsys):
    """tflite mode runs TFLite's int16 LOGISTIC, so verify gives LSB figures for it: MLI's
    own sigmoid table in fx16 is within 4 LSB of TFLite's (measured on 64 inputs)."""
    from mlitool.cli.entry import main

    path = fc_tail_model(tmp_path / "fc_logistic.tflite")
    with pytest.raises(SystemExit) as done:
        main(["verify", str(path), "-f", "fx16", "-n", "64", "--json", "--max-lsb", "4"])
    assert done.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["references"]["tflite"] is True and doc["references"]["tflite_refusal"] is None
    out = doc["outputs"][0]
    assert out["vs_tflite"]["max_lsb"] == 4 and 0.3 < out["vs_tflite"]["differing_share"] < 0.6
    assert out["vs_float"]["snr_db"] > 70


def test_verify_without_a_tflite_reference_says_why(tmp_path, capsys):
    """A 16x8 model with an op tflite mode does not run (a power-of-two int16 ADD) converts
    and verifies against the float model; the document and the terminal name the op, and
    --max-lsb says why it has no reference."""
    from mlitool.cli.entry import main

    path = fc_tail_model(tmp_path / "fc_add.tflite", "ADD")
    with pytest.raises(SystemExit) as done:
        main(["verify", str(path), "-f", "fx16", "-n", "8", "--json"])
    assert done.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    refs = doc["references"]
    assert refs["tflite"] is False and refs["tflite_refusal"].startswith("op 1 (ADD): int16")
    # the FULLY_CONNECTED saturates at +-8, the float model does not: a low but real figure
    assert doc["outputs"][0]["vs_float"]["snr_db"] > 5 and "vs_tflite" not in doc["outputs"][0]
    with pytest.raises(SystemExit):
        main(["verify", str(path), "-f", "fx16", "-n", "8"])
    assert "no tflite reference: op 1 (ADD)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["verify", str(path), "-f", "fx16", "-n", "8", "--max-lsb", "2"])
    assert done.value.code == 2
    assert "--max-lsb needs an integer reference" in capsys.readouterr().err


def zero_state_model(path):
    """The converter's zero initial state of a 16x8 Keras LSTM (tests/corpus/lstm_16x8): FILL
    of an int16 zero constant, both with scale 0 (FILL requires equal scales), read by the
    forget gate's MUL: LOGISTIC(x) * state + x."""
    tensors = [
        T([1, 16], dtype="int16", name="x", scale=[1 / 4096], zero_point=[0]),
        T([2], dtype="int32", name="dims", data=np.array([1, 16], np.int32)),
        T([], dtype="int16", name="zero", data=np.array(0, np.int16), scale=[0.0], zero_point=[0]),
        T([1, 16], dtype="int16", name="state", scale=[0.0], zero_point=[0]),
        T([1, 16], dtype="int16", name="gate", scale=[1 / 32768], zero_point=[0]),
        T([1, 16], dtype="int16", name="kept", scale=[1.5e-5], zero_point=[0]),
        T([1, 16], dtype="int16", name="y", scale=[1 / 2048], zero_point=[0]),
    ]
    ops = [
        ("FILL", [1, 2], [3], None),
        ("LOGISTIC", [0], [4], None),
        ("MUL", [4, 3], [5], options("MulOptions")),
        ("ADD", [5, 0], [6], options("AddOptions", potScaleInt16=False)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [6]))
    return path


def test_a_zero_state_with_scale_0_is_read_as_litert_reads_it(tmp_path):
    """LiteRT runs a zero scale on an all-zero tensor (it only multiplies by it): tflite mode
    equals it at every layer."""
    path = zero_state_model(tmp_path / "zero_state.tflite")
    g = read(path).main
    x = {g.inputs[0]: _inputs(g, seed=5)}
    ours = run_graph(g, x, "tflite", keep=True)
    gate, kept, y = 4, 5, 6  # tensor indices; FILL is folded into a constant
    ref = reference_outputs(path, g, x)
    for i in (gate, kept, y):
        np.testing.assert_array_equal(ours[i], ref[i])
    assert not ref[kept].any() and len(np.unique(ref[gate])) > 100


def test_a_zero_state_with_scale_0_runs_on_the_real_library(mli_builds, tmp_path):
    path = zero_state_model(tmp_path / "zero_state.tflite")
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("name", ["efficientnet_like_16x8", "lstm_16x8"])
def test_16x8_corpus_files_equal_litert_at_every_layer(name):
    """Refused before: an int16 LOGISTIC (both), the LSTM's zero state with scale 0."""
    path = ROOT / "tests" / "corpus" / f"{name}.tflite"
    g = read(path).main
    x = {g.inputs[0]: _inputs(g, n=2)}
    ours = run_graph(g, x, "tflite", keep=True)
    ref = reference_outputs(path, g, x)
    compared = [i for i in ref if i in ours]
    assert len(compared) > 50
    for i in compared:
        np.testing.assert_array_equal(ours[i], ref[i], err_msg=g.tensors[i].name)


def test_sa8_is_refused_with_the_remedy(tmp_path):
    g = read(conv_model(tmp_path / "conv.tflite")).main
    with pytest.raises(
        UnsupportedError, match="would lose 8 bits in sa8: convert with --format fx16 or fx8w16d"
    ):
        lower(g, format="sa8")
    m = lower(g, format="fx16")
    assert [layer.kernel for layer in m.layers] == [
        "mli_krn_conv2d_hwcn_fx16",
        "mli_krn_depthwise_conv2d_hwcn_fx16",
        "mli_krn_eltwise_add_fx16",
    ]
