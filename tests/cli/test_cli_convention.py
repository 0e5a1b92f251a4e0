"""One option convention on every command (--json, --json-out, -o DIR, -q), config discovery,
overrides that match nothing, choices and exit codes in --help, one-line usage errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.support.cli import run_main
from tests.support.paths import SAMPLES

CNN = SAMPLES / "cnn_int8.tflite"
FX16_LAYER0 = '[[tool.mlitool.layer]]\nindex = 0\nformat = "fx16"\n'


@pytest.fixture
def inputs(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.random.default_rng(1).integers(-128, 128, (2, 1, 32, 32, 3), dtype=np.int8))
    return path


def _commands(inputs):
    return {
        "inspect": ["inspect", CNN],
        "convert": ["convert", CNN],
        "run": ["run", CNN, "-i", inputs],
        "verify": ["verify", CNN, "-n", 2],
        "report": ["report", CNN, "-n", 2],
    }


@pytest.mark.parametrize("command", ["inspect", "convert", "run", "verify", "report"])
def test_json_flag_json_out_and_out_dir_mean_the_same_everywhere(
    command, tmp_path, inputs, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    args = _commands(inputs)[command]
    code, out, err = run_main(
        [*args, "--json", "--json-out", tmp_path / "doc.json", "-o", tmp_path / "out"], capsys
    )
    assert code == 0, err
    doc = json.loads(out)  # stdout: exactly one JSON document
    assert json.loads((tmp_path / "doc.json").read_text()) == doc
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    expected = {
        "inspect": ["cnn_int8.inspect.json"],
        "convert": ["cnn_int8.c", "cnn_int8.h", "cnn_int8.json"],
        "run": ["cnn_int8.mli.npz"],
        "verify": ["cnn_int8.verify.json"],
        "report": [
            "cnn_int8.csv",
            "cnn_int8.report.html",
            "cnn_int8.report.json",
            "cnn_int8.report.md",
        ],
    }[command]
    assert written == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "out", "x.npy"]


@pytest.mark.parametrize("command", ["inspect", "convert", "run", "verify", "report"])
def test_quiet_prints_nothing(command, tmp_path, inputs, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main([*_commands(inputs)[command], "-q"], capsys)
    assert code == 0, err
    assert (out, err) == ("", "")


def test_run_out_is_a_directory_and_npz_names_the_file(tmp_path, inputs, capsys):
    code, _, err = run_main(["run", CNN, "-i", inputs, "-o", tmp_path / "r.npz"], capsys)
    assert code == 2 and "--npz" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.npz").exists()
    code, _, err = run_main(["run", CNN, "-i", inputs, "--npz", tmp_path / "r.npz"], capsys)
    assert code == 0 and (tmp_path / "r.npz").is_file()


# --- config discovery --------------------------------------------------------------------------


def _kernels(out: str) -> list[str]:
    return [layer["kernel"] for layer in json.loads(out)["layers"]]


def test_mlitool_toml_is_found_upward_and_named(tmp_path, capsys, monkeypatch):
    (tmp_path / "mlitool.toml").write_text(FX16_LAYER0)
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    code, out, err = run_main(["convert", CNN, "-o", tmp_path / "o", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["config"] == "../../mlitool.toml"
    assert _kernels(out)[0] == "mli_krn_conv2d_hwcn_fx16"
    manifest = json.loads((tmp_path / "o" / "cnn_int8.json").read_text())
    assert manifest["model"]["config"] == "../../mlitool.toml"
    assert "Settings from ../../mlitool.toml." in (tmp_path / "o" / "cnn_int8.h").read_text()
    code, out, err = run_main(["convert", CNN, "-o", tmp_path / "o"], capsys)
    assert "config: ../../mlitool.toml" in out


def test_pyproject_counts_only_with_a_tool_mlitool_table(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.mlitool]\nformat = "fx16"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    monkeypatch.chdir(tmp_path / "pkg")
    code, out, err = run_main(["convert", CNN, "-o", tmp_path / "o", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["config"] == "../pyproject.toml"
    assert json.loads(out)["format"] == "fx16"
    # mlitool.toml in a nearer folder wins over the pyproject further up.
    (tmp_path / "pkg" / "mlitool.toml").write_text('format = "sa8"\n')
    code, out, err = run_main(["convert", CNN, "-o", tmp_path / "o", "--json"], capsys)
    assert (json.loads(out)["config"], json.loads(out)["format"]) == ("mlitool.toml", "sa8")


def test_no_config_anywhere_is_named_none(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["convert", CNN, "-o", tmp_path, "--json"], capsys)
    assert code == 0 and json.loads(out)["config"] is None
    assert "Settings from" not in (tmp_path / "cnn_int8.h").read_text()


@pytest.mark.parametrize(
    "layer, hint",
    [
        ("index = 99", "the model has ops 0..8"),
        ('op = "CONV2D"', "did you mean op = 'CONV_2D'?"),
        ('name = "cnn_1/conv1_1/Relu"', "did you mean name = 'cnn_1/conv1_1/Relu;cnn_1/conv1_1/"),
        ('name = "no/such/layer"', "names are op output tensors"),
    ],
)
def test_override_that_matches_no_layer_is_an_error(tmp_path, capsys, monkeypatch, layer, hint):
    (tmp_path / "mlitool.toml").write_text(f'[[layer]]\n{layer}\nformat = "fx16"\n')
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["convert", CNN, "-o", tmp_path / "o"], capsys)
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and "mlitool.toml" in line and "matches no layer" in line
    assert hint in line
    assert not (tmp_path / "o").exists()


def test_warnings_go_to_stderr(tmp_path, capsys):
    from tests.support.tflite_build import build, fc_spec

    spec = fc_spec()
    spec.tensors[1].zero_point = [0]  # normalised by the reader, with a warning
    model = tmp_path / "fc.tflite"
    model.write_bytes(build(spec))
    for command in (["inspect", model], ["convert", model, "-o", tmp_path]):
        code, out, err = run_main([*command, "--json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["warnings"] and all(f"warning: {w}" in err for w in doc["warnings"])


def test_warning_lines_group_by_kind_in_first_seen_order():
    from mlitool.plumbing.notices import warning_lines

    lines = warning_lines(
        [
            "tensor 1 'a: b' of subgraph 0: one zero point for all its scales; broadcast to all",
            "op 3 (CONV_2D): 2 channel(s) clamped",
            "4 constant tensor(s) saturated",
            "tensor 7 'c' of subgraph 1: one zero point for all its scales; broadcast to all",
            "op 5 (CONV_2D): 2 channel(s) clamped",
            "4 constant tensor(s) saturated",
            "tensor 9 'd' of subgraph 0: options of unknown type 7 ignored",
        ]
    )
    assert lines == [
        (
            "2 tensors: one zero point for all its scales; broadcast to all (tensor 1 'a: b' of "
            "subgraph 0, tensor 7 'c' of subgraph 1)"
        ),
        "2 ops: 2 channel(s) clamped (op 3 (CONV_2D), op 5 (CONV_2D))",
        "4 constant tensor(s) saturated (2 times)",
        "tensor 9 'd' of subgraph 0: options of unknown type 7 ignored",
    ]


# --- help, completion, usage errors ------------------------------------------------------------


def _help(*args) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "mlitool", *args, "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_help_shows_choices_and_exit_codes():
    text = _help("convert")
    for choices in (
        "sa8|fx16|fx8w16d|fx8",
        "2.0|1.1|1.0",
        "vpx|em",
        "up|convergent",
        "full|reduced",
        "minmax|percentile",
        "hwc|chw",
    ):
        assert choices in text
    assert "mli|tflite|float" in _help("run")
    for args in ((), ("inspect",), ("convert",), ("run",), ("verify",), ("report",)):
        text = " ".join(_help(*args).split())
        assert "Exit codes: 0 ok" in text and "130 interrupted (Ctrl-C)" in text
        assert "4 unsupported by the MLI target" in text


def test_shell_completion_is_available():
    assert "--install-completion" in _help() and "--show-completion" in _help()
    # typer detects the shell from the parent process: run it from bash, as a user would (a
    # compound command, so bash does not exec python in its place).
    r = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m mlitool --show-completion; exit $?"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "_MLITOOL_COMPLETE" in r.stdout


def test_bare_mlitool_prints_the_help_as_click_does():
    r = subprocess.run(
        [sys.executable, "-m", "mlitool"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == ""
    assert lines[0] == "Usage: mlitool [OPTIONS] COMMAND [ARGS]..." and "Commands:" in lines
    assert "\\n" not in r.stderr and "mlitool: error" not in r.stderr and len(lines) > 15


@pytest.mark.parametrize(
    "shell, first",
    [
        ("zsh", "#compdef mlitool"),
        ("fish", "complete --command mlitool --no-files"),
        ("bash", "_mlitool_completion() {"),
        ("pwsh", "Import-Module PSReadLine"),
    ],
)
@pytest.mark.parametrize("form", ["two words", "equals"])
def test_show_completion_prints_the_script_of_the_shell_named(shell, first, form, capsys):
    args = ["--show-completion", shell] if form == "two words" else [f"--show-completion={shell}"]
    code, out, err = run_main(args, capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith(first) and "_MLITOOL_COMPLETE" in out


def test_show_completion_of_an_unknown_shell_is_a_usage_error(capsys):
    code, out, err = run_main(["--show-completion", "tcsh"], capsys)
    assert code == 2 and out == ""
    assert err == (
        "mlitool: error: --show-completion 'tcsh': choose one of bash, zsh, fish, "
        "powershell, pwsh\n"
    )


@pytest.mark.parametrize("where", ["first", "after the command", "last"])
def test_debug_is_taken_anywhere(where, tmp_path, capsys, monkeypatch):
    import mlitool.inspect.command as insp

    def boom(_):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(insp, "summarize", boom)
    args = {
        "first": ["--debug", "inspect", CNN],
        "after the command": ["inspect", "--debug", CNN],
        "last": ["inspect", CNN, "--json", "--debug"],
    }[where]
    code, _, err = run_main(args, capsys)
    assert code == 1 and "Traceback" in err and "RuntimeError: simulated bug" in err


def test_debug_after_the_command_changes_nothing_else(tmp_path, capsys):
    code, out, err = run_main(["convert", CNN, "--debug", "-o", tmp_path, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["files"] == [
        str(tmp_path / f"cnn_int8{s}") for s in (".h", ".c", ".json")
    ]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["convert", CNN, "--format", "int4"], "'int4' is not a format (sa8, "),
        (["run", CNN, "-i", "x.npy", "--mode", "fast"], "--mode"),
        (["report", CNN, "--json", "r.json"], "unexpected extra argument"),
        (["convrt", CNN], "Did you mean 'convert'?"),
    ],
)
def test_usage_errors_are_one_line(args, needle, capsys):
    code, out, err = run_main(args, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "--help" in err


def test_choices_are_case_insensitive(tmp_path, capsys):
    code, out, err = run_main(
        ["convert", CNN, "-o", tmp_path, "--format", "FX16", "--json"], capsys
    )
    assert code == 0 and json.loads(out)["format"] == "fx16"


# --- input shapes ------------------------------------------------------------------------------


def test_run_takes_the_batch_form_people_have(tmp_path, capsys):
    x = np.random.default_rng(2).integers(-128, 128, (3, 32, 32, 3), dtype=np.int8)
    np.save(tmp_path / "nhwc.npy", x)
    np.save(tmp_path / "n1hwc.npy", x[:, None])
    for name in ("nhwc", "n1hwc"):
        code, _, err = run_main(
            ["run", CNN, "-i", tmp_path / f"{name}.npy", "--npz", tmp_path / f"{name}.npz"], capsys
        )
        assert code == 0, err
    a, b = np.load(tmp_path / "nhwc.npz"), np.load(tmp_path / "n1hwc.npz")
    np.testing.assert_array_equal(a["Identity"], b["Identity"])


@pytest.mark.parametrize(
    "shape, hint",
    [
        (
            (3, 16, 16, 3),
            "got shape (3, 16, 16, 3), expected (N, 32, 32, 3) for N samples of the "
            "model's [1, 32, 32, 3]",
        ),
        ((3, 3, 32, 32), "channels-first: the model takes HWC (np.transpose(a, (0, 2, 3, 1)))"),
        ((32, 32, 3), "one sample without the sample axis: save a[None]"),
    ],
)
def test_shape_errors_suggest_the_shape_people_have(shape, hint, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros(shape, np.int8))
    code, out, err = run_main(["run", CNN, "-i", tmp_path / "x.npy"], capsys)
    assert code == 2 and hint in err and len(err.strip().splitlines()) == 1


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    """Ctrl-C wherever it lands (here: in the middle of reading the model) ends with one line
    and the shell's code for SIGINT, 130, not a traceback."""
    import mlitool.inspect.command

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mlitool.inspect.command, "fold_model", interrupted)
    code, out, err = run_main(["inspect", CNN], capsys)
    assert (code, out, err) == (130, "", "mlitool: aborted\n")
