"""`mlitool convert` and the runtime: on by default, `--no-runtime` writes exactly the
tensors-only files of earlier versions, the header names the verified build, and a `--name`
whose NAME.h would shadow a header the C includes is refused (exit 2, nothing written)."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from tests.support.paths import SAMPLES, mli_cflags
from tests.support.tflite_build import T, graph_model
from mlitool import __version__

MLITOOL = [sys.executable, "-m", "mlitool"]

# sha256 of the files mlitool wrote before the runtime existed (commit d9980b7, the generator
# version string normalised to 0.1.0): `--no-runtime` must keep writing exactly these.
BEFORE_RUNTIME = {
    ("cnn_int8", "sa8", "2.0"): {
        "c": "475d49fcc6b2050d0894cbd0b807936a0270e3bc7a62e4188e5cbc7061c814dd",
        "h": "18404e2d06066b8fe67c823c8fd987d857fa80e989372c010001ca3e0155f81b",
        "json": "7b5aa10d21ffcfb80fbd445fc9eb2e8227a472e05954d84f3d739f00333f469b"},
    ("cnn_int8", "fx16", "1.1"): {
        "c": "068c87af66911c565c9db38cda7984daf4a03e63b815bbe6312ab50e67e34e7b",
        "h": "881a844e04c169b0ccf89ed04711155ce6369d3a7146b242dd32134c34a7b2db",
        "json": "731a0b1a247d53ce68925e3caf7770d0464385eb7417a36658cf5d90b4f78e90"},
    ("fc_int8", "fx8w16d", "2.0"): {
        "c": "6b8efbb3f9aa7683b8ac3f5b046db5fdb05e1a6f658df21691d04b6421251c25",
        "h": "f96bd7610b22333d7aeaf60ea2de7470ba403dd6d44d1a7c04bdaa98191fa27b",
        "json": "87789801ea767e80c5293db742c95f0b53b364a0c22df89f43903dde94545df0"},
}


def _convert(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*MLITOOL, "convert", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def _digest(path) -> str:
    text = path.read_bytes().replace(f"mlitool {__version__}".encode(), b"mlitool 0.1.0")
    return hashlib.sha256(text).hexdigest()


@pytest.mark.parametrize("case", sorted(BEFORE_RUNTIME), ids=lambda c: "-".join(c))
def test_no_runtime_writes_the_files_of_before(case, tmp_path):
    model, fmt, target = case
    r = _convert(SAMPLES / f"{model}.tflite", "--out", tmp_path, "--format", fmt, "--mli", target,
                 "--no-runtime")
    assert r.returncode == 0, r.stderr
    assert {ext: _digest(tmp_path / f"{model}.{ext}") for ext in ("c", "h", "json")} \
        == BEFORE_RUNTIME[case]


@pytest.mark.parametrize("args,build", [
    ((), "ROUND_MODE=UP FULL_ACCU=OFF"),
    (("--target", "em"), "ROUND_MODE=CONVERGENT FULL_ACCU=ON"),
    (("--round", "convergent"), "ROUND_MODE=CONVERGENT FULL_ACCU=OFF"),
    (("--target", "em", "--accu", "reduced"), "ROUND_MODE=CONVERGENT FULL_ACCU=OFF"),
])
def test_header_names_the_verified_build(args, build, tmp_path):
    r = _convert(SAMPLES / "fc_int8.tflite", "--out", tmp_path, "--name", "fc", *args)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "fc.h").read_text()
    assert f'#define FC_MLI_BUILD "{build}"' in header
    assert "mli_status fc_init(void *arena, size_t arena_bytes);" in header
    assert '"verified_build": "' + build + '"' in (tmp_path / "fc.json").read_text()


def test_mli1_header_names_no_build(tmp_path):
    r = _convert(SAMPLES / "fc_int8.tflite", "--out", tmp_path, "--name", "fc", "--mli", "1.1",
                 "--format", "fx16")
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "fc.h").read_text()
    assert "FC_MLI_BUILD" not in header and "mli_status fc_run(void);" in header


@pytest.mark.parametrize("name,header", [
    ("mli_api", []), ("mli_types", []), ("mli_config", []), ("MLI_Helpers_API", []),
    ("mli_kernels_api", []), ("mli_mov_api", []), ("stdint", []), ("stddef", []), ("stdfix", []),
    ("my_mli", ["--header", "<vendor/my_mli.h>"]),
])
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
    cmd = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *mli_cflags("2.0"),
           "-I", str(tmp_path), "-c", str(tmp_path / "mli_net.c"), "-o", str(tmp_path / "n.o")]
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
