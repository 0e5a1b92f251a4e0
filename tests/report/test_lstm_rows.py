"""An LSTM's accuracy row is the LSTM layer (its lstm_cell, not the state reset's copy), and
sensitivity includes it (issue 25)."""

from __future__ import annotations

import json

import numpy as np

from tests.support.cli import run_main
from tests.support.paths import shared_path

MODEL = shared_path("models", "tflm", "mnist_lstm_int8.tflite")
LSTM_OUT = "tfl.unidirectional_sequence_lstm"


def test_lstm_row_and_sensitivity_with_the_snr_of_run_outputs(tmp_path, capsys):
    from ai_edge_litert.interpreter import Interpreter

    x = np.random.default_rng(3).integers(-128, 128, (4, 28, 28)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    dumps = {}
    for mode in ("float", "mli"):
        npz = tmp_path / f"{mode}.npz"
        args = ["run", MODEL, "-i", tmp_path / "x.npy", "-m", mode, "--dump-layers"]
        code, _, err = run_main([*args, "--npz", npz, "-q"], capsys)
        assert code == 0, err
        dumps[mode] = np.load(npz)[LSTM_OUT]
    # mli mode's int8 LSTM output, decoded with the .tflite file's own parameters
    (d,) = [
        d for d in Interpreter(model_path=str(MODEL)).get_tensor_details() if d["name"] == LSTM_OUT
    ]
    scale, zp = d["quantization"]
    ref = dumps["float"].astype(np.float64)
    got = (dumps["mli"].astype(np.float64) - zp) * scale
    snr = 10 * np.log10(np.sum(ref**2) / np.sum((ref - got) ** 2))

    code, out, err = run_main(["report", MODEL, "-i", tmp_path / "x.npy", "--json"], capsys)
    assert code in (0, 3), err
    tables = {t["id"]: t["rows"] for s in json.loads(out)["sections"] for t in s["tables"]}
    (row,) = [
        r for r in tables["accuracy-layers"] if r["op_type"] == "UNIDIRECTIONAL_SEQUENCE_LSTM"
    ]
    kinds = {r["position"]: r["kind"] for r in tables["rom-layers"]}
    assert row["kind"] == "lstm_cell" and kinds[row["layer"]] == "lstm_cell"
    assert abs(row["snr_chained_db"] - snr) <= 0.005 and 20 < snr < 40
    (sens,) = [r for r in tables["sensitivity"] if r["op_type"] == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
    assert sens["kind"] == "lstm_cell" and sens["layer"] == row["layer"]
    assert sens["layer_snr_db"] == row["snr_isolated_db"]
