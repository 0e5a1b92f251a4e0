"""Emitting the real int8 models of ../shared/models (read -> lower -> emit): the C compiles with
gcc (C99) and the header with g++ (C++11) for each MLI target, and a compiled probe reads back
every tensor's fields and data exactly as the lowered Python model holds them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest

from mlitool.emit.writer import emit
from tests.support.emit_probe import expected_lines, probe_source
from tests.support.paths import mli_cflags, shared_path

WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
SMALL = [
    "mlperf_tiny/kws_ref_model_int8",
    "mlperf_tiny/resnet8_int8",
    "mlperf_tiny/ad01_int8",
    "tflm/hello_world_int8",
    "tflm/micro_speech_int8",
]
LARGE = ["mlperf_tiny/vww_96_int8", "embarc_mli/mobilenet_v1_int8"]

# (model, format, target, layout)
CASES = (
    [(m, "sa8", "2.0", "hwc") for m in SMALL + LARGE]
    + [(m, f, "2.0", "hwc") for m in SMALL for f in ("fx16", "fx8w16d")]
    + [(m, "fx16", "1.1", "chw") for m in SMALL]
    + [(m, "fx8w16d", "1.0", "chw") for m in SMALL]
    + [(m, "sa8", "1.1", "hwc") for m in ("mlperf_tiny/ad01_int8", "tflm/hello_world_int8")]
)

pytestmark = pytest.mark.skipif(
    not (shutil.which("gcc") and shutil.which("g++")), reason="gcc/g++ not installed"
)

_graphs: dict = {}


def _lowered(name: str, fmt: str, target: str, layout: str):
    from mlitool.mli.lower.driver import lower
    from mlitool.tflite.reader import read_model

    path = shared_path("models", name + ".tflite")
    if name not in _graphs:
        _graphs[name] = read_model(path).main
    return lower(_graphs[name], format=fmt, mli_version=target, layout=layout, source=str(path))


def _run(cmd, cwd):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stdout}\n{res.stderr[:4000]}"
    return res.stdout


@pytest.mark.parametrize(
    "name,fmt,target,layout", CASES, ids=[f"{m.split('/')[1]}-{f}-{t}" for m, f, t, _ in CASES]
)
def test_real_model_compiles_and_reads_back(tmp_path, name, fmt, target, layout):
    model = _lowered(name, fmt, target, layout)
    emit(model, tmp_path, "net")
    manifest = json.loads((tmp_path / "net.json").read_text())
    c_names = {t["name"]: t["c_name"] for t in manifest["tensors"]}
    inc = [*mli_cflags(target), "-I", str(tmp_path)]
    (tmp_path / "probe.c").write_text(probe_source(manifest, "net.h"))
    shutil.copy(tmp_path / "probe.c", tmp_path / "probe.cc")
    _run(["gcc", "-std=c99", *WARN, *inc, "-c", "net.c", "-o", "net.o"], tmp_path)
    _run(["gcc", "-std=c99", *WARN, *inc, "probe.c", "net.o", "-o", "probe_c"], tmp_path)
    _run(["g++", "-std=c++11", *WARN, *inc, "probe.cc", "net.o", "-o", "probe_cxx"], tmp_path)
    want = expected_lines(model, c_names)
    assert _run([str(tmp_path / "probe_c")], tmp_path).splitlines() == want
    assert _run([str(tmp_path / "probe_cxx")], tmp_path).splitlines() == want
    # Manifest against the model: every constant's bytes, every layer's kernel and tensors.
    for t in manifest["tensors"]:
        mt = model.tensors[t["name"]]
        if t["sha256"]:
            le = mt.data.astype(mt.data.dtype.newbyteorder("<"))
            assert t["sha256"] == hashlib.sha256(le.tobytes()).hexdigest()
        assert t["shape"] == list(mt.shape) and t["bytes"] == (mt.nbytes if mt.rank else 0)
    assert [lay["kernel"] for lay in manifest["layers"]] == [lay.kernel for lay in model.layers]
    assert [lay["inputs"] for lay in manifest["layers"]] == [
        [c_names[n] for n in lay.inputs] for lay in model.layers
    ]
    weights = sum(
        t.data.nbytes
        for t in model.tensors.values()
        if t.role.value == "weights" and t.buffer is None
    )
    assert manifest["totals"]["weight_bytes"] == weights
    assert (tmp_path / "net.h").read_text().isascii()
