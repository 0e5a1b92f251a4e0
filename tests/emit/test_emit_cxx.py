"""The emitted NAME.c of real models is also valid C++20: `g++ -std=c++20 -Wall -Wextra -Werror
-pedantic -x c++` compiles it against the real MLI headers (../shared/mli), for every MLI target and
format, and every tensor, config and the bind-views function keep C linkage (unmangled, global),
so a C++ build links with C code and the header's declarations. NAME_selftest.c as well."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mlitool.convert import EmitOptions, convert
from mlitool.pipeline import ModelOptions
from tests.support.paths import SAMPLES, mli_cflags, shared_path

CXX = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]

TARGETS = [
    ("2.0", "sa8"),
    ("2.0", "fx16"),
    ("2.0", "fx8w16d"),
    ("1.1", "fx16"),
    ("1.1", "fx8w16d"),
    ("1.0", "fx16"),
    ("1.0", "fx8"),
]
MODELS = [
    "samples/cnn_int8",
    "shared/mlperf_tiny/kws_ref_model_int8",
    "shared/mlperf_tiny/ad01_int8",
]

pytestmark = pytest.mark.skipif(
    not (shutil.which("g++") and shutil.which("nm")), reason="g++/nm not installed"
)


def _model_path(model: str) -> Path:
    where, rest = model.split("/", 1)
    if where == "samples":
        return SAMPLES / f"{rest}.tflite"
    return shared_path("models", f"{rest}.tflite")


def _defined_globals(obj: Path) -> dict[str, str]:
    """Global symbols defined in an object file: name -> nm type letter."""
    res = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True)
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isupper() and parts[1] != "U":
            out[parts[2]] = parts[1]
    return out


@pytest.mark.parametrize("target,fmt", TARGETS, ids=[f"{t}-{f}" for t, f in TARGETS])
@pytest.mark.parametrize("model", MODELS, ids=[m.rsplit("/", 1)[1] for m in MODELS])
def test_emitted_c_compiles_as_cxx20(tmp_path, model, target, fmt):
    path = _model_path(model)
    convert(path, ModelOptions(format=fmt, mli=target), EmitOptions(out=tmp_path, name="net"))
    cmd = CXX + [*mli_cflags(target), "-I", str(tmp_path), "-c", "net.c", "-o", "net.o"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr[:4000]}"

    manifest = json.loads((tmp_path / "net.json").read_text())
    want = {t["c_name"] for t in manifest["tensors"]}
    want |= {layer["cfg_symbol"] for layer in manifest["layers"] if layer["cfg_symbol"]}
    want.add(manifest["model"]["bind_views"])
    want |= set(manifest["runtime"]["functions"].values())  # NAME_init, NAME_run, ...
    defined = _defined_globals(tmp_path / "net.o")
    missing = sorted(want - defined.keys())
    assert not missing, f"not defined with C linkage: {missing[:10]}"
    assert defined[manifest["model"]["bind_views"]] == "T"
    # Nothing else is exported: data and parameter arrays stay internal (static).
    assert set(defined) == want


@pytest.mark.parametrize(
    "fmt,fast", [("sa8", None), ("fx16", None), ("sa8", "16K")], ids=["sa8", "fx16", "sa8-fast"]
)
@pytest.mark.parametrize("macro", ["", "-DNET_SELFTEST_PRINTF=printf", "-DNET_SELFTEST_NO_OUTPUTS"])
def test_selftest_compiles_as_cxx20(tmp_path, fmt, fast, macro):
    """NAME_selftest.c (convert --selftest) too, with its optional macros, also on the two
    buffers of --fast-memory; its three functions keep C linkage and it calls NAME.c's by their
    C names."""
    path = SAMPLES / "cnn_int8.tflite"
    opts = ModelOptions(format=fmt, fast_memory=fast)
    convert(path, opts, EmitOptions(out=tmp_path, name="net", selftest=2))
    cmd = CXX + [*mli_cflags("2.0"), *filter(None, [macro]), "-I", str(tmp_path)]
    cmd += ["-c", "net_selftest.c", "-o", "st.o"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr[:4000]}"
    st = json.loads((tmp_path / "net.json").read_text())["runtime"]["selftest"]
    want = {st["function"], st["function_arena"], st["hook"]}
    assert _defined_globals(tmp_path / "st.o") == dict.fromkeys(want, "T")
    nm = subprocess.run(["nm", "-u", str(tmp_path / "st.o")], capture_output=True, text=True)
    assert "_Z" not in nm.stdout and "net_run" in nm.stdout  # NAME.h's functions: C names
