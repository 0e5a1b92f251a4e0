"""REVIEW only for findings that change what the deployed C computes, each naming its tensor as
TFLite and the generated C call it; informational notes apart (issue 25)."""

from __future__ import annotations

import json

import numpy as np

from tests.support.cli import run_main
from tests.support.paths import shared_path

VWW = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
MICRO = shared_path("models", "tflm", "micro_speech_int8.tflite")


def _tables(doc: dict) -> dict[str, list[dict]]:
    return {t["id"]: t["rows"] for s in doc["sections"] for t in s["tables"]}


def test_trained_to_zero_channels_are_notes_with_their_names(tmp_path, capsys):
    """vww's weight channels at zero are zero in the .tflite too: the C computes what the model
    does. It was REVIEW on them (and on saturation seen on random inputs); now PASS."""
    from ai_edge_litert.interpreter import Interpreter

    code, out, err = run_main(["report", VWW, "--no-accuracy", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    tables = _tables(doc)
    assert doc["meta"]["verdict"] == "PASS" and tables["findings"] == []
    assert "no finding that changes the deployed results" in doc["meta"]["checks"]
    notes = {r["tensor"]: r for r in tables["notes"]}
    interp = Interpreter(model_path=str(VWW))
    zero = {}
    for d in interp.get_tensor_details():
        if d["name"] in notes and "trained to zero" in notes[d["name"]]["what"]:
            w = interp.get_tensor(d["index"])  # [out channels, ...]; per-axis zero points 0
            zero[d["name"]] = int(np.sum(~w.reshape(len(w), -1).any(1)))
    assert zero["model/conv2d_5/Conv2D"] == 4 and len(zero) == 9
    for name, count in zero.items():
        assert (
            notes[name]["what"] == f"{count} channel(s) all zero in the model too (trained to zero)"
        )
    # the C names are those convert gives the tensors (its manifest)
    code, _, err = run_main(["convert", VWW, "-o", tmp_path, "-q"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "vww_96_int8.json").read_text())
    c_name = {t["name"]: t["c_name"] for t in manifest["tensors"]}
    assert [r["c_symbol"] for r in tables["notes"]] == [
        c_name[r["tensor"]] for r in tables["notes"]
    ]
    assert notes["model/conv2d_5/Conv2D"]["c_symbol"] == "vww_96_int8_L10_conv_weights"


def test_the_same_saturation_is_a_note_on_random_inputs_and_a_finding_on_yours(tmp_path, capsys):
    """micro_speech's FC output saturates on random spectrograms: informational without
    --input; given as --input, the C clips them: REVIEW, naming the tensor."""
    x = np.random.default_rng(1).integers(-128, 128, (4, 1960)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_main(["report", MICRO, "-n", "4", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    (note,) = _tables(doc)["notes"]
    assert doc["meta"]["verdict"] == "PASS" and _tables(doc)["findings"] == []
    assert note["tensor"] == "add_1" and "on random inputs only" in note["what"]
    code, out, err = run_main(["report", MICRO, "-i", tmp_path / "x.npy", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    (finding,) = _tables(doc)["findings"]
    assert doc["meta"]["verdict"] == "REVIEW" and _tables(doc)["notes"] == []
    assert finding["tensor"] == "add_1" and finding["what"].endswith("the C clips them")
    assert finding["c_symbol"] == "micro_speech_int8_L2_fc_out"
    assert (
        "1 finding(s) that change the deployed results: micro_speech_int8_L2_fc_out "
        in (doc["meta"]["checks"])
    )
    md = (tmp_path / "r.md").as_posix()
    code, _, err = run_main(["report", MICRO, "-i", tmp_path / "x.npy", "--md", md], capsys)
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    assert "### Findings" in text and "They change what the deployed C computes" in text
    assert "### Notes" in text and "micro\\_speech\\_int8\\_L2\\_fc\\_out" in text


def test_real_images_flag_what_the_c_changes_not_views_or_the_softmax_range(tmp_path, capsys):
    """resnet8 on 8 real CIFAR-10 images: the average pool's quantization SNR is below 30 dB
    (a finding, named once: the flatten view of its buffer is not listed again); softmax's
    probabilities of 1.0 beyond its fixed [0, 255/256] range are a note (TFLite's int8 kernel
    has the same range)."""
    from tests.support.real_inputs import cifar10_test20_int8

    np.save(tmp_path / "x.npy", cifar10_test20_int8()[:8])
    model = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    code, out, err = run_main(["report", model, "-i", tmp_path / "x.npy", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    tables = _tables(doc)
    assert doc["meta"]["verdict"] == "REVIEW"
    assert [(r["layer"], r["c_symbol"]) for r in tables["findings"]] == [
        ("12: avepool", "resnet8_int8_L12_avgpool_out")
    ]
    assert tables["findings"][0]["what"].startswith("quantization SNR 29.")
    (note,) = tables["notes"]
    assert note["layer"] == "15: softmax" and "(the range softmax fixes" in note["what"]
