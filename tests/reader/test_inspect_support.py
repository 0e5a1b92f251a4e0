"""`inspect`'s support column is `convert`'s own check: the same ops refused, for the same
reason, on the graph convert lowers (float16 weights folded)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.support.tflite_build import T, graph_model, options, single_op_model


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "mlitool", *map(str, args)], capture_output=True, text=True
    )


def _models(tmp_path):
    pad = np.int32([[0, 0], [300, 0], [0, 0], [0, 0]])  # more than mli_mov's 255
    int16 = T([1, 8], dtype="int16", scale=[0.01], zero_point=[0])
    w16 = np.ones((3, 4), np.float16)
    models = {
        "wide_pad": single_op_model(
            "PAD",
            [T([1, 4, 4, 2], scale=[0.1]), T([4, 2], dtype="int32", data=pad)],
            [T([1, 304, 4, 2], scale=[0.1])],
        ),
        "int16_relu": single_op_model("RELU", [int16], [int16]),
        "cos": single_op_model("SIGN", [T([1, 8], scale=[0.1])], [T([1, 8], scale=[0.1])]),
        "float16_fc": graph_model(
            [
                T([1, 4], dtype="float32"),
                T([3, 4], dtype="float16", data=w16),
                T([3, 4], dtype="float32"),
                T([1, 3], dtype="float32"),
            ],
            [
                ("DEQUANTIZE", [1], [2], None),
                ("FULLY_CONNECTED", [0, 2, -1], [3], options("FullyConnectedOptions")),
            ],
            [0],
            [3],
        ),
    }
    paths = {}
    for name, data in models.items():
        paths[name] = tmp_path / f"{name}.tflite"
        paths[name].write_bytes(data)
    return paths


@pytest.mark.parametrize(
    "name, refused",
    [
        ("wide_pad", "PAD is lowered only for padding of H, W (and C on MLI 2.x)"),
        ("cos", "no MLI kernel for this op"),
        ("float16_fc", None),
    ],
)
def test_inspect_says_what_convert_does(name, refused, tmp_path):
    path = _models(tmp_path)[name]
    doc = json.loads(_cli("inspect", path, "--json").stdout)
    conv = _cli("convert", path, "-o", tmp_path / "out", "--weights-only")
    if refused is None:
        assert all(r["supported"] for r in doc["ops"]) and doc["unsupported_op_types"] == []
        assert conv.returncode == 0, conv.stderr
    else:
        (row,) = doc["ops"]
        assert not row["supported"] and refused in row["unsupported_reason"]
        assert conv.returncode == 4 and row["unsupported_reason"] in conv.stderr
        text = _cli("inspect", path).stdout
        assert "Unsupported by the MLI converter" in text and refused in " ".join(text.split())


def test_a_16x8_model_is_supported_in_fx16_and_sa8_says_so(tmp_path):
    path = _models(tmp_path)["int16_relu"]
    doc = json.loads(_cli("inspect", path, "--json").stdout)
    assert all(r["supported"] for r in doc["ops"])
    sa8 = _cli("convert", path, "-o", tmp_path / "a")
    assert (
        sa8.returncode == 4 and "would lose 8 bits in sa8: convert with --format fx16" in sa8.stderr
    )
    assert _cli("convert", path, "-o", tmp_path / "b", "--format", "fx16").returncode == 0
