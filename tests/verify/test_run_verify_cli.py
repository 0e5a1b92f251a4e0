"""`mlitool run` and `mlitool verify` end to end: outputs, file handling, exit codes, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.mli.presets import arith_for
from mlitool.tflite.reader import read_model
from tests.support.cli import run_main
from tests.support.litert import reference_outputs
from tests.support.paths import SAMPLES, shared_path

CNN = SAMPLES / "cnn_int8.tflite"
CNN_IN = SAMPLES / "cnn_input_int8.npy"


def test_target_presets_and_overrides():
    assert (arith_for().round_mode, arith_for().full_accu) == ("up", False)  # vpx by default
    assert (arith_for("em").round_mode, arith_for("em").full_accu) == ("convergent", True)
    assert (arith_for("vpx").round_mode, arith_for("vpx").full_accu) == ("up", False)
    assert arith_for("vpx", accu="full").full_accu is True
    assert arith_for("em", round_mode="up").round_mode == "up"


def _litert_output(graph) -> np.ndarray:
    """The TFLite interpreter's output for the four sample inputs."""
    return reference_outputs(CNN, graph, {0: np.load(CNN_IN)})[graph.outputs[0]]


@pytest.mark.parametrize("mode", ["mli", "tflite", "float"])
def test_run_writes_outputs(mode, tmp_path, capsys):
    out = tmp_path / "y.npz"
    code, stdout, err = run_main(
        ["run", CNN, "--input", CNN_IN, "--mode", mode, "--npz", out], capsys
    )
    assert code == 0, err
    graph = read_model(str(CNN)).main
    name = graph.tensors[graph.outputs[0]].name
    with np.load(out) as z:
        assert list(z.files) == [name]
        y = z[name]
    ref = _litert_output(graph)
    assert y.shape == ref.shape == (4, 1, 10)
    if mode == "float":
        # The float graph against the interpreter's int8 output (scale 1/256, zero point -128):
        # measured within 0.024, one output step is 0.0039.
        assert y.dtype == np.float32
        assert np.abs(y - (ref.astype(np.float32) + 128) / 256).max() < 0.03
    else:
        # tflite mode is LiteRT's arithmetic; MLI's (UP, FULL_ACCU OFF) rounds differently but
        # gives the same 40 values on these inputs (measured).
        assert y.dtype == np.int8
        np.testing.assert_array_equal(y, ref)
    np.testing.assert_array_equal(np.argmax(y, -1).ravel(), [4, 4, 3, 7])
    assert f"wrote {out}" in err and "wrote" not in stdout


def test_run_kws_real_input_and_dump_layers(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite")
    x = shared_path("models", "inputs", "kws_mfcc_int8.npy")
    out = tmp_path / "kws.npz"
    code, stdout, err = run_main(
        ["run", model, "-i", x, "--npz", out, "--dump-layers", "--target", "vpx", "--json"], capsys
    )
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["build"] == "ROUND_MODE=UP FULL_ACCU=OFF"
    with np.load(out) as z:
        assert z["Identity"].reshape(-1).tolist() == [-128] * 5 + [127] + [-128] * 6
        assert any(k.startswith("mli/") for k in z.files)
        assert len(z.files) > 20


def test_run_real_values_for_an_int8_model(tmp_path, capsys):
    real = (np.load(CNN_IN).astype(np.float32) + 128) / 255  # the input's (1/255, -128)
    np.save(tmp_path / "real.npy", real)
    code, _, err = run_main(
        ["run", CNN, "-i", tmp_path / "real.npy", "--npz", tmp_path / "a.npz"], capsys
    )
    assert code == 0, err
    code, _, err = run_main(["run", CNN, "-i", CNN_IN, "--npz", tmp_path / "b.npz"], capsys)
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        np.testing.assert_array_equal(a[a.files[0]], b[b.files[0]])


def test_run_npz_keyed_by_input_name(tmp_path, capsys):
    graph = read_model(str(CNN)).main
    np.savez(tmp_path / "x.npz", **{graph.tensors[graph.inputs[0]].name: np.load(CNN_IN)})
    code, _, err = run_main(
        ["run", CNN, "-i", tmp_path / "x.npz", "--npz", tmp_path / "y.npz"], capsys
    )
    assert code == 0, err
    np.savez(tmp_path / "bad.npz", nope=np.load(CNN_IN))
    code, _, err = run_main(
        ["run", CNN, "-i", tmp_path / "bad.npz", "--npz", tmp_path / "z.npz"], capsys
    )
    assert code == 2 and "bad.npz" in err and "nope" in err


@pytest.mark.parametrize(
    "array, words",
    [
        (
            np.zeros((2, 16, 16, 3), np.int8),
            "expected (N, 32, 32, 3) for N samples of the model's [1, 32, 32, 3]",
        ),
        (np.zeros((2, 32, 32, 3), np.uint8), "uint8 data for a int8 input"),
        (np.zeros((2, 32, 32, 3), np.int32), "int32 data"),
    ],
)
def test_run_rejects_mismatched_input(array, words, tmp_path, capsys):
    bad = tmp_path / "bad.npy"
    np.save(bad, array)
    out = tmp_path / "y.npz"
    out.write_bytes(b"old")
    code, _, err = run_main(["run", CNN, "-i", bad, "--npz", out], capsys)
    assert code == 2
    assert "bad.npy" in err and words in err
    assert out.read_bytes() == b"old"  # nothing replaced


def test_run_rejects_bad_options(tmp_path, capsys):
    code, _, err = run_main(["run", CNN, "-i", CNN_IN, "--npz", tmp_path / "y.txt"], capsys)
    assert code == 2 and ".npz" in err
    code, _, err = run_main(["run", CNN, "-i", CNN_IN, "--mode", "fast"], capsys)
    assert code == 2 and "--mode" in err
    code, _, err = run_main(
        ["run", CNN, "-i", CNN_IN, "--target", "hs", "--npz", tmp_path / "y.npz"], capsys
    )
    assert code == 2 and "--target" in err


def test_verify_json_document(capsys):
    code, out, err = run_main(["verify", CNN, "--samples", "12", "--seed", "4", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert out == json.dumps(doc, sort_keys=True, indent=2) + "\n"
    assert doc["inputs"]["random"] is True and "12 random samples (seed 4)" in doc["inputs"]["note"]
    assert doc["arith"]["build"] == "ROUND_MODE=UP FULL_ACCU=OFF"
    assert [row["type"] for row in doc["layers"]] == [
        "CONV_2D",
        "MAX_POOL_2D",
        "DEPTHWISE_CONV_2D",
        "CONV_2D",
        "ADD",
        "CONV_2D",
        "AVERAGE_POOL_2D",
        "FULLY_CONNECTED",
        "SOFTMAX",
    ]
    for row in doc["layers"]:
        assert row["isolated"]["max_lsb"] <= 1  # fed tflite's own input
        assert 0 <= row["chained"]["differing_share"] <= 1
    o = doc["outputs"][0]
    assert set(o) >= {"vs_float", "vs_tflite", "top1"}
    assert o["top1"]["vs_tflite"] >= 0.9
    assert doc["reduced_accumulator"]["layers_checked"] == 5
    assert "\x1b" not in out


def test_verify_same_with_an_input_file(capsys):
    code, out, err = run_main(["verify", CNN, "-i", CNN_IN, "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"] == {"random": False, "samples": 4, "source": str(CNN_IN)}


def test_verify_thresholds_exit_3(capsys):
    code, out, err = run_main(["verify", CNN, "-n", "8", "--min-snr", "200"], capsys)
    assert code == 3 and "SNR" in err and "< min 200 dB" in err and "FAILED" in out
    code, out, err = run_main(
        ["verify", CNN, "-n", "8", "--min-snr", "5", "--max-lsb", "255"], capsys
    )
    assert code == 0, err


def test_verify_names_reduced_accumulator_layers_on_vww(capsys):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, out, err = run_main(["verify", model, "-n", "4", "--json"], capsys)
    assert code == 0, err
    ra = json.loads(out)["reduced_accumulator"]
    worst = {row["op"]: row for row in ra["layers"]}
    assert worst[22]["type"] == "CONV_2D" and worst[22]["max_lsb"] >= 20
    assert "index = 22" in worst[22]["remedy"] and "FULL_ACCU=ON" in worst[22]["remedy"]
    assert all(row["max_lsb"] > 1 for row in ra["layers"])
    assert ra["worst"] <= 31


def test_verify_litert_oracle(capsys):
    pytest.importorskip("ai_edge_litert.interpreter")
    code, out, err = run_main(["verify", CNN, "-n", "6", "--oracle", "litert", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    o = doc["outputs"][0]
    assert o["vs_litert"] == o["vs_tflite"]  # tflite mode equals the reference kernels
    assert doc["references"]["oracle"]["available"] is True


def test_verify_tables(tmp_path, capsys):
    # A long path (CI clones deep) must not wrap the build name onto two lines.
    deep = tmp_path / ("d" * 70) / "cnn_int8.tflite"
    deep.parent.mkdir()
    deep.write_bytes(CNN.read_bytes())
    code, out, err = run_main(["verify", deep, "-n", "4", "--target", "vpx"], capsys)
    assert code == 0, err
    assert out.startswith("cnn_int8: UNCHECKED (") and "\nmodel: " in out and deep.name in out
    assert "ROUND_MODE=UP FULL_ACCU=OFF; config: none\n" in out and "per layer" in out
    assert "4 random samples (seed 0)" in out


def test_run_npz_arr_0_for_a_single_input(tmp_path, capsys):
    np.savez(tmp_path / "x.npz", np.load(CNN_IN))
    code, _, err = run_main(
        ["run", CNN, "-i", tmp_path / "x.npz", "--npz", tmp_path / "y.npz", "--mode", "tflite"],
        capsys,
    )
    assert code == 0, err
    with np.load(tmp_path / "y.npz") as z:
        np.testing.assert_array_equal(z[z.files[0]], _litert_output(read_model(str(CNN)).main))
