"""`mlitool convert` end to end: files written, determinism, clean failures with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.cli import run_main
from tests.support.paths import ROOT, SAMPLES, mli_cflags
from tests.support.tflite_build import unsupported_op_model


def test_convert_sample_writes_three_files_and_json_summary(tmp_path, capsys):
    code, out, err = run_main(
        ["convert", SAMPLES / "cnn_int8.tflite", "--out", tmp_path, "--name", "cnn", "--json"],
        capsys,
    )
    assert code == 0, err
    summary = json.loads(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.c", "cnn.h", "cnn.json"]
    assert summary["target"] == "2.0" and summary["format"] == "sa8"
    kinds = [layer["kind"] for layer in summary["layers"]]
    assert kinds == [
        "conv2d",
        "maxpool",
        "depthwise_conv2d",
        "conv2d",
        "eltwise_add",
        "conv2d",
        "avepool",
        "fully_connected",
        "softmax",
    ]
    manifest = json.loads((tmp_path / "cnn.json").read_text())
    # The summary's constant bytes equal what the manifest says was emitted.
    assert summary["constant_bytes"] == sum(
        t["bytes"] for t in manifest["tensors"] if t["role"] in ("weights", "bias", "param")
    )


def test_convert_is_byte_identical_across_processes(tmp_path):
    outs = []
    for seed in ("0", "12345"):
        d = tmp_path / seed
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mlitool",
                "convert",
                str(SAMPLES / "cnn_int8.tflite"),
                "--out",
                str(d),
                "--name",
                "m",
                "--format",
                "fx16",
            ],
            check=True,
            cwd=ROOT,
            capture_output=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        )
        outs.append({p.name: p.read_bytes() for p in sorted(d.iterdir())})
    assert outs[0] == outs[1]
    assert set(outs[0]) == {"m.c", "m.h", "m.json"}


def test_failed_convert_leaves_earlier_outputs_untouched(tmp_path, capsys):
    code, _, err = run_main(
        ["convert", SAMPLES / "fc_int8.tflite", "--out", tmp_path, "--name", "m"], capsys
    )
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    # Same name, a model that cannot be converted without calibration: exit 2, files unchanged.
    code, out, err = run_main(
        ["convert", SAMPLES / "fc_float.tflite", "--out", tmp_path, "--name", "m"], capsys
    )
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "calibration" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_bad_model_file_exit_2_nothing_written(tmp_path, capsys):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    out_dir = tmp_path / "out"
    code, _, err = run_main(["convert", bad, "--out", out_dir], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in err
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_unsupported_ops_are_listed_with_indices_exit_4(tmp_path, capsys):
    model = tmp_path / "cos.tflite"
    model.write_bytes(unsupported_op_model())
    out = tmp_path / "out"
    code, _, err = run_main(["convert", model, "--out", out], capsys)
    assert code == 4
    line = err.strip()
    assert "\n" not in line and "op 0 (SIGN): no MLI kernel" in line
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--format", "int4"], "--format"),
        (["--mli", "3.7"], "--mli"),
        (["--layout", "chw"], "--layout chw"),
        (["--align", "3"], "--align"),
    ],
)
def test_impossible_options_exit_2(tmp_path, capsys, args, needle):
    code, _, err = run_main(
        ["convert", SAMPLES / "cnn_int8.tflite", "--out", tmp_path, *args], capsys
    )
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_format_the_target_lacks_is_refused_naming_the_layer(tmp_path, capsys):
    code, _, err = run_main(
        ["convert", SAMPLES / "cnn_int8.tflite", "--out", tmp_path, "--format", "fx8"], capsys
    )
    assert code == 4
    assert "conv" in err.lower() and "fx16" in err
    assert not any(tmp_path.iterdir())


def test_config_override_keeps_first_conv_in_fx16(tmp_path, capsys):
    cfg = tmp_path / "mlitool.toml"
    cfg.write_text('format = "sa8"\n[[layer]]\nindex = 0\nformat = "fx16"\n')
    out_dir = tmp_path / "out"
    code, out, err = run_main(
        ["convert", SAMPLES / "cnn_int8.tflite", "--out", out_dir, "--config", cfg, "--json"],
        capsys,
    )
    assert code == 0, err
    layers = json.loads(out)["layers"]
    assert layers[0]["kernel"] == "mli_krn_conv2d_hwcn_fx16"
    assert any(layer["kind"] == "convert" for layer in layers)
    assert all(
        "_sa8_sa8_sa32" in layer["kernel"]  # the SA8 kernel (or its kernel-size specialization)
        for layer in layers
        if layer["kind"] == "conv2d" and layer["index"] > 0
    )


def test_mli11_per_axis_sa8_shares_one_frac_bits_value(tmp_path, capsys):
    """MLI 1.1 asym tensors carry one scale_frac_bits even with per-axis scales: the minimum of the
    channels' 31 - exponent (section 3), and every channel's int32 scale expressed with it."""
    import math

    from mlitool.tflite.reader import read_model

    code, _, err = run_main(
        [
            "convert",
            SAMPLES / "fc_int8.tflite",
            "--out",
            tmp_path,
            "--name",
            "m",
            "--mli",
            "1.1",
            "--format",
            "sa8",
        ],
        capsys,
    )
    assert code == 0, err
    graph = read_model(SAMPLES / "fc_int8.tflite").main
    fc = next(op for op in graph.ops if op.type == "FULLY_CONNECTED")
    w = graph.tensors[fc.inputs[1]]
    expected_frac = min(31 - math.frexp(float(s))[1] for s in w.quant.scale)
    manifest = json.loads((tmp_path / "m.json").read_text())
    entry = next(t for t in manifest["tensors"] if t["source"] == w.name)
    assert entry["params"]["scale_frac_bits"] == [expected_frac]
    for got, s in zip(entry["params"]["scale"], w.quant.scale):
        assert abs(got - float(s) * 2.0**expected_frac) <= 256  # float32: 24 significant bits
    gcc = subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            *mli_cflags("1.1"),
            "-c",
            str(tmp_path / "m.c"),
            "-o",
            str(tmp_path / "m.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert gcc.returncode == 0, gcc.stderr
