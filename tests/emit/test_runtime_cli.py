"""`mlitool convert` and the runtime: on by default, `--no-runtime` writes the same tensors and
configs without NAME_init / NAME_run, the header names the verified build, and a `--name`
whose NAME.h would shadow a header the C includes is refused (exit 2, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import SAMPLES, mli_cflags
from tests.support.tflite_build import T, graph_model

MLITOOL = [sys.executable, "-m", "mlitool"]

CASES = [("cnn_int8", "sa8", "2.0"), ("cnn_int8", "fx16", "1.1"), ("fc_int8", "fx8w16d", "2.0")]


def _convert(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MLITOOL, "convert", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def _data_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("static const")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c))
def test_no_runtime_writes_the_same_tensors_without_the_runtime(case, tmp_path):
    model, fmt, target = case
    files = {}
    for flag in ("--no-runtime", None):
        out = tmp_path / (flag or "runtime")
        r = _convert(
            SAMPLES / f"{model}.tflite",
            "--out",
            out,
            "--format",
            fmt,
            "--mli",
            target,
            *([flag] if flag else []),
        )
        assert r.returncode == 0, r.stderr
        files[flag] = {ext: (out / f"{model}.{ext}").read_text() for ext in ("c", "h", "json")}
    bare, full = files["--no-runtime"], files[None]
    for word in (f"{model}_init", f"{model}_run", "ARENA_BYTES"):
        assert word not in bare["c"] + bare["h"] and word in full["c"] + full["h"]
    # the runtime adds its const look-up tables, and each layer's kernel calls per inference
    runtime_data = [
        line
        for line in _data_lines(full["c"])
        if "_lut_data[" not in line and " mli_lut " not in line
    ]
    assert _data_lines(bare["c"]) == runtime_data and _data_lines(bare["c"])
    a, b = json.loads(bare["json"]), json.loads(full["json"])
    assert "runtime" not in a and "runtime" in b
    calls = [la.pop("kernel_calls") for la in b["layers"]]
    assert a["tensors"] == b["tensors"] and a["layers"] == b["layers"] and sum(calls) > 0


@pytest.mark.parametrize(
    "args,build",
    [
        ((), "ROUND_MODE=UP FULL_ACCU=OFF"),
        (("--target", "em"), "ROUND_MODE=CONVERGENT FULL_ACCU=ON"),
        (("--round", "convergent"), "ROUND_MODE=CONVERGENT FULL_ACCU=OFF"),
        (("--target", "em", "--accu", "reduced"), "ROUND_MODE=CONVERGENT FULL_ACCU=OFF"),
    ],
)
def test_header_names_the_verified_build(args, build, tmp_path):
    r = _convert(SAMPLES / "fc_int8.tflite", "--out", tmp_path, "--name", "fc", *args)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "fc.h").read_text()
    assert f'#define FC_MLI_BUILD "{build}"' in header
    assert "mli_status fc_init(void *arena, size_t arena_bytes);" in header
    assert '"verified_build": "' + build + '"' in (tmp_path / "fc.json").read_text()


def test_mli1_header_names_no_build(tmp_path):
    r = _convert(
        SAMPLES / "fc_int8.tflite",
        "--out",
        tmp_path,
        "--name",
        "fc",
        "--mli",
        "1.1",
        "--format",
        "fx16",
    )
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "fc.h").read_text()
    assert "FC_MLI_BUILD" not in header and "mli_status fc_run(void);" in header


@pytest.mark.parametrize(
    "name,header",
    [
        ("mli_api", []),
        ("mli_types", []),
        ("mli_config", []),
        ("MLI_Helpers_API", []),
        ("mli_kernels_api", []),
        ("mli_mov_api", []),
        ("stdint", []),
        ("stddef", []),
        ("stdfix", []),
        ("my_mli", ["--header", "<vendor/my_mli.h>"]),
    ],
)
def test_name_shadowing_a_header_is_refused(name, header, tmp_path):
    out = tmp_path / "out"
    r = _convert(SAMPLES / "fc_int8.tflite", "--out", out, "--name", name, *header)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and f"--name '{name}'" in r.stderr and "shadow" in r.stderr
    assert not out.exists()


def test_a_name_that_only_starts_with_mli_compiles(tmp_path):
    """Only real header names are refused: `mli_net` is a fine file name (its C prefix is kept
    out of the library's mli_ namespace)."""
    r = _convert(SAMPLES / "fc_int8.tflite", "--out", tmp_path, "--name", "mli_net")
    assert r.returncode == 0, r.stderr
    cmd = [
        "gcc",
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        *mli_cflags("2.0"),
        "-I",
        str(tmp_path),
        "-c",
        str(tmp_path / "mli_net.c"),
        "-o",
        str(tmp_path / "n.o"),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_a_bad_name_is_refused_before_the_model_is_read(tmp_path):
    """--name is checked first: the model file does not even exist here."""
    r = _convert(tmp_path / "missing.tflite", "--out", tmp_path / "out", "--name", "a/b")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--name 'a/b'" in r.stderr


def test_a_model_without_layers_has_no_runtime(tmp_path):
    """Nothing to run: a typed refusal (exit 4, nothing written) that points at --no-runtime,
    which still writes the tensors."""
    model = tmp_path / "empty.tflite"
    model.write_bytes(graph_model([T([1, 4], scale=0.5)], [], [0], [0]))
    r = _convert(model, "--out", tmp_path / "out")
    assert r.returncode == 4 and "no layers" in r.stderr and "--no-runtime" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "empty.h").exists()
    r = _convert(model, "--out", tmp_path / "out", "--no-runtime")
    assert r.returncode == 0, r.stderr
