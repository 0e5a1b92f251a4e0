"""The verdict against every threshold a user sets (issue 25): --ram-budget / --rom-budget /
--min-accuracy with --min-snr / --max-lsb, on verify and report, from the command line or
mlitool.toml; each failed one named with its value and limit, exit 3."""

from __future__ import annotations

import json

import numpy as np

from tests.support import c_image
from tests.support.cli import run_main
from tests.support.paths import SAMPLES, shared_path
from tests.support.real_inputs import cifar10_test20, cifar10_test20_int8

CNN = SAMPLES / "cnn_int8.tflite"


def _ram(tmp_path, capsys) -> int:
    """The RAM the deployed model needs, read from the emitted files: the arena the header
    defines + the writable tensor structs + the runtime's statics (tests/support/c_image.py)."""
    code, _, err = run_main(["convert", CNN, "-o", tmp_path / "c", "-q"], capsys)
    assert code == 0, err
    return sum(c_image.ram(tmp_path / "c", "cnn_int8").values())


def test_judge_names_every_failed_threshold_with_value_and_limit():
    from mlitool.verdict import Measured, Thresholds, judge

    th = Thresholds(min_snr=20, max_lsb=1, min_accuracy=90, ram_budget=48000, rom_budget=300000)
    got = Measured(64512, 251244, (("Identity", 12.345, 3),), 85.0)
    assert judge(got, th) == (
        "FAIL",
        [
            "RAM 64,512 B > budget 48,000 B",
            "top-1 accuracy 85.0% < min 90%",
            "output 'Identity' SNR 12.35 dB < min 20 dB",
            "output 'Identity' differs from tflite by 3 LSB > max 1 LSB",
        ],
    )
    # at the limit is within it; nothing measured is not a failure
    ok = Measured(48000, 300000, (("Identity", 20.0, 1),), 90.0)
    assert judge(ok, th)[0] == "PASS"
    assert judge(Measured(48000, 300000), th) == (
        "PASS",
        [
            "RAM 48,000 B <= budget 48,000 B",
            "ROM 300,000 B <= budget 300,000 B",
            "--max-lsb: not measured",
            "--min-accuracy: not measured",
            "--min-snr: not measured",
        ],
    )
    assert judge(ok, Thresholds()) == ("UNCHECKED", [])


def test_shortfalls_measure_what_judge_checks():
    """How far each threshold is from met, by the checks `judge` makes (tune's distance):
    the worst output, 0 where met, left out where not measured."""
    from mlitool.verdict import Measured, Thresholds, shortfalls

    th = Thresholds(min_snr=20, max_lsb=1, min_accuracy=90, ram_budget=48000, rom_budget=300000)
    got = Measured(64512, 251244, (("a", 12.5, 3), ("b", 25.0, 0)), 85.0)
    assert shortfalls(got, th) == {
        "--ram-budget": 16512.0,
        "--rom-budget": 0.0,
        "--min-accuracy": 5.0,
        "--min-snr": 7.5,
        "--max-lsb": 2.0,
    }
    ok = Measured(48000, 300000, (("a", 20.0, 1),), None)
    assert shortfalls(ok, th) == dict.fromkeys(
        ["--ram-budget", "--rom-budget", "--min-snr", "--max-lsb"], 0.0
    )


def test_verify_ram_budget_against_the_emitted_image(tmp_path, capsys, monkeypatch):
    ram = _ram(tmp_path, capsys)
    monkeypatch.setenv("COLUMNS", "200")  # the first line unwrapped
    base = ["verify", CNN, "-n", "2"]
    code, out, err = run_main([*base, "--ram-budget", ram - 1], capsys)
    assert code == 3
    assert out.splitlines()[0].startswith(
        f"cnn_int8: FAIL: RAM {ram:,} B > budget {ram - 1:,} B. RAM {ram:,} B (arena "
    )
    assert err.strip() == f"mlitool: error: RAM {ram:,} B > budget {ram - 1:,} B"
    code, out, err = run_main([*base, "--ram-budget", ram, "--min-snr", "10", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["verdict"] == "PASS" and doc["footprint"]["ram_bytes"] == ram
    assert doc["thresholds"]["ram_budget"] == ram and doc["thresholds"]["failed"] == []


def test_config_thresholds_and_the_command_line_over_them(tmp_path, capsys, monkeypatch):
    ram = _ram(tmp_path, capsys)
    (tmp_path / "mlitool.toml").write_text(f'ram_budget = "{ram - 1}"\nmin_snr = 10\n')
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["verify", CNN, "-n", "2", "--json"], capsys)
    assert code == 3 and f"RAM {ram:,} B > budget {ram - 1:,} B" in err
    assert json.loads(out)["thresholds"]["min_snr"] == 10
    code, out, err = run_main(["verify", CNN, "-n", "2", "--ram-budget", f"{ram}"], capsys)
    assert code == 0, err
    (tmp_path / "mlitool.toml").write_text('rom_budget = "64Q"\n')
    code, _, err = run_main(["verify", CNN, "-n", "2"], capsys)
    assert code == 2 and "mlitool.toml" in err and "rom_budget '64Q'" in err


def test_report_rom_budget_without_execution(capsys):
    """vww's ROM is 265,218 B and RAM 67,076 B (tests/cli/test_answers_first.py); the budget
    needs no samples."""
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    args = ["report", model, "--no-accuracy", "--json"]
    code, out, err = run_main([*args, "--rom-budget", "265217"], capsys)
    assert code == 3
    meta = json.loads(out)["meta"]
    assert meta["verdict"] == "FAIL"
    assert meta["summary"].startswith("FAIL: ROM 265,218 B > budget 265,217 B. RAM 67,076 B")
    assert "FAILED ROM 265,218 B > budget 265,217 B" in meta["checks"]
    code, out, err = run_main([*args, "--rom-budget", "265218", "--ram-budget", "67076"], capsys)
    assert code == 0, err
    assert json.loads(out)["meta"]["verdict"] != "FAIL"


def test_min_accuracy_needs_labels(capsys):
    for command in ("verify", "report"):
        code, out, err = run_main([command, CNN, "-n", "2", "--min-accuracy", "90"], capsys)
        assert code == 2 and out == ""
        assert err.startswith("mlitool: error: --min-accuracy needs --labels FILE")


def test_min_accuracy_against_cifar_labels(tmp_path, capsys):
    """resnet8 takes 19 of the 20 CIFAR-10 images for their label in mli mode (on the real
    library: tests/verify/test_verify_labels.py): 95.0 %."""
    model = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    np.save(tmp_path / "x.npy", cifar10_test20_int8())
    np.save(tmp_path / "y.npy", cifar10_test20()[1])
    args = ["verify", model, "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy"]
    code, out, err = run_main([*args, "--min-accuracy", "95.5", "--json"], capsys)
    assert code == 3
    doc = json.loads(out)
    assert doc["thresholds"]["failed"] == ["top-1 accuracy 95.0% < min 95.5%"]
    assert doc["summary"]["text"].startswith("FAIL: top-1 accuracy 95.0% < min 95.5%. RAM ")
