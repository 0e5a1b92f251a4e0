"""verify on the models people have: top-1 for a classifier that ends in scores (no SOFTMAX), LSB
figures for float outputs (in the units of the int8 tensor before the final DEQUANTIZE), and
messages that name the command and options it has."""

from __future__ import annotations

import json

import numpy as np

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from mlitool.verify.command import classifier_outputs
from tests.support.cli import run_main
from tests.support.paths import SAMPLES
from tests.support.tflite_build import T, build, fc_spec, graph_model, options


def _float_io_fc(tmp_path):
    """float input -> QUANTIZE -> int8 FULLY_CONNECTED (scores [1, 3]) -> DEQUANTIZE -> float."""
    w = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    tensors = [
        T([1, 4], dtype="float32", name="in"),
        T([1, 4], name="q_in", scale=[0.02], zero_point=[-3]),
        T([3, 4], data=w, name="w", scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0]),
        T(
            [3],
            dtype="int32",
            data=np.int32([10, -20, 30]),
            name="b",
            scale=[0.002, 0.004, 0.006],
            zero_point=[0, 0, 0],
        ),
        T([1, 3], name="q_out", scale=[0.05], zero_point=[2]),
        T([1, 3], dtype="float32", name="out"),
    ]
    path = tmp_path / "float_io.tflite"
    path.write_bytes(
        graph_model(
            tensors,
            [
                ("QUANTIZE", [0], [1], None),
                ("FULLY_CONNECTED", [1, 2, 3], [4], options("FullyConnectedOptions")),
                ("DEQUANTIZE", [4], [5], None),
            ],
            [0],
            [5],
        )
    )
    return path


def test_float_output_gets_lsb_and_top1_in_int8_units(tmp_path, capsys):
    path = _float_io_fc(tmp_path)
    g = read(path).main
    assert classifier_outputs(g) == {5}
    code, out, err = run_main(["verify", path, "-i", _inputs(tmp_path), "--json"], capsys)
    assert code == 0, err
    (o,) = json.loads(out)["outputs"]
    assert o["vs_tflite"]["units"] == "q_out" and "max_lsb" in o["vs_tflite"]
    assert set(o["top1"]) == {"vs_float", "vs_tflite"}
    # The LSB figure is what it says: mli mode against tflite mode on tensor q_out.
    code, _, err = run_main(
        ["run", path, "-i", _inputs(tmp_path), "--npz", tmp_path / "m.npz", "--dump-layers"], capsys
    )
    assert code == 0, err
    x = np.load(_inputs(tmp_path))
    ref = run_graph(g, {0: x}, "tflite", keep=True)[4]
    mli = np.load(tmp_path / "m.npz")["q_out"]
    assert int(np.abs(mli.astype(int) - ref.astype(int)).max()) == o["vs_tflite"]["max_lsb"]


def _inputs(tmp_path):
    path = tmp_path / "x.npy"
    if not path.exists():
        np.save(path, np.random.default_rng(0).uniform(-2, 2, (16, 1, 4)).astype(np.float32))
    return path


def test_scores_without_softmax_are_a_classifier_but_a_reconstruction_is_not(tmp_path):
    fc = tmp_path / "fc.tflite"
    fc.write_bytes(build(fc_spec()))  # [1, 4] -> [1, 3] scores
    assert classifier_outputs(read(fc).main) == {3}
    assert classifier_outputs(read(SAMPLES / "cnn_int8.tflite").main) != set()  # SOFTMAX
    square = fc_spec(np.ones((4, 4), np.int8))  # [1, 4] -> [1, 4]: same size
    square.tensors[2].shape = [4]
    square.tensors[2].scale = [0.05] * 4
    square.tensors[2].zero_point = [0] * 4
    square.tensors[1].shape = [4, 4]
    square.tensors[1].scale = [0.1] * 4
    square.tensors[1].zero_point = [0] * 4
    square.tensors[3].shape = [1, 4]
    square.buffers[2].data = np.int32([1, 2, 3, 4]).tobytes()
    sq = tmp_path / "square.tflite"
    sq.write_bytes(build(square))
    assert classifier_outputs(read(sq).main) == set()


def test_messages_name_the_command_and_its_options(tmp_path, capsys):
    code, _, err = run_main(
        [
            "run",
            SAMPLES / "cnn_float.tflite",
            "-i",
            SAMPLES / "cnn_calib.npy",
            "--npz",
            tmp_path / "o.npz",
        ],
        capsys,
    )
    assert code == 2 and "give run --mode mli real inputs to calibrate on (--calibration" in err
    assert "--weights-only" not in err
    code, _, err = run_main(["verify", SAMPLES / "cnn_float.tflite", "-n", 2], capsys)
    assert code == 2 and "give verify real inputs" in err and "--weights-only" not in err
    code, _, err = run_main(["convert", SAMPLES / "cnn_float.tflite", "-o", tmp_path], capsys)
    assert code == 2 and "--weights-only" in err  # convert has it
