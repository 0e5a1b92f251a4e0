"""top-1 for a classifier of any size behind a RESHAPE, or the reason it is blank (issue 25)."""

from __future__ import annotations

import json

import numpy as np

from tests.support.cli import run_main
from tests.support.paths import shared_path
from tests.support.tflite_build import T, graph_model, options

K = 1001  # MobileNet's classes: more than the 1,000 the rule used to stop at


def _logits_reshape(tmp_path):
    """int8 [1, 16] -> FULLY_CONNECTED (K logits, no SOFTMAX) -> RESHAPE [1, 1, K]."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (K, 16)).astype(np.int8)
    b = rng.integers(-500, 500, K).astype(np.int32)
    tensors = [
        T([1, 16], name="in", scale=[0.05], zero_point=[0]),
        T([K, 16], data=w, name="w", scale=[0.01], zero_point=[0]),
        T([K], dtype="int32", data=b, name="b", scale=[0.0005], zero_point=[0]),
        T([1, K], name="logits", scale=[0.3], zero_point=[-5]),
        T([3], dtype="int32", data=np.int32([1, 1, K]), name="shape"),
        T([1, 1, K], name="scores", scale=[0.3], zero_point=[-5]),
    ]
    ops = [
        ("FULLY_CONNECTED", [0, 1, 2], [3], options("FullyConnectedOptions")),
        ("RESHAPE", [3, 4], [5], options("ReshapeOptions", newShape=[1, 1, K])),
    ]
    path = tmp_path / "logits.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    return path, w, b


def test_top1_of_1001_logits_behind_reshape_in_verify_and_sensitivity(tmp_path, capsys):
    path, w, b = _logits_reshape(tmp_path)
    x = np.random.default_rng(1).integers(-128, 128, (24, 1, 16)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    # the float model's classes, in numpy; mli mode's from `run`
    real = (x[:, 0] * 0.05) @ (w * 0.01).T.astype(np.float64) + b * 0.0005
    npz = tmp_path / "mli.npz"
    code, _, err = run_main(["run", path, "-i", tmp_path / "x.npy", "--npz", npz, "-q"], capsys)
    assert code == 0, err
    mli = np.load(npz)["scores"].reshape(len(x), K)
    agree = float(np.mean(real.argmax(1) == mli.argmax(1)))
    assert 0.5 < agree < 1  # int8 logits tie or swap some near classes: a real figure
    code, out, err = run_main(["verify", path, "-i", tmp_path / "x.npy", "--json"], capsys)
    assert code == 0, err
    (o,) = json.loads(out)["outputs"]
    assert o["top1"]["vs_float"] == agree and "top1_blank" not in o
    # report, with the float model's classes as labels: mli mode's accuracy is the agreement
    np.save(tmp_path / "y.npy", real.argmax(1))
    args = ["report", path, "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy"]
    code, out, err = run_main([*args, "--min-accuracy", "96", "--json"], capsys)
    assert code == 3
    doc = json.loads(out)
    assert doc["meta"]["summary"].startswith(f"FAIL: top-1 accuracy {100 * agree:.1f}% < min 96%")
    tables = {t["id"]: t["rows"] for s in doc["sections"] for t in s["tables"]}
    assert tables["accuracy-outputs"][0]["top1_float"] == round(agree, 4)
    (sens,) = tables["sensitivity"]  # the FC alone in MLI arithmetic: the same run here
    assert sens["top1"] == round(agree, 4)


def test_a_regression_output_says_why_it_has_no_top1(capsys):
    model = shared_path("models", "tflm", "hello_world_int8.tflite")
    code, out, err = run_main(["verify", model, "-n", "4", "--json"], capsys)
    assert code == 0, err
    (o,) = json.loads(out)["outputs"]
    assert "top1" not in o and o["top1_blank"] == "regression output: 1 value"
    code, out, err = run_main(["verify", model, "-n", "4"], capsys)
    assert "no top-1 for StatefulPartitionedCall:0: regression output: 1 value" in out
