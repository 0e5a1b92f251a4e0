"""Issue 23's measure on the Keras-export corpus (`tests/corpus`, made by tools/make_corpus.py):
every file converts in its formats (int8: sa8 and fx16; 16x8: fx16; float32: sa8 calibrated);
tflite mode equals LiteRT's reference kernels at every layer (float tensors too, bit for bit: the
sums are added in LiteRT's order; within float32 rounding in a file with a float op LiteRT runs
through the host libm, `tests.support.litert.LIBM_OPS`); and the emitted C, run on the real MLI 2.0.2 library in the four
builds, equals `run --mode mli` at every layer.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.corpus import entries
from tests.support.litert import libm_ops
from tests.support.paths import ROOT, mli_cflags

# MLITOOL_CORPUS=DIR runs the same checks on another folder of .tflite files (a corpus of your own)
CORPUS = Path(os.environ.get("MLITOOL_CORPUS") or ROOT / "tests" / "corpus")
ENTRIES = entries(CORPUS)


def _formats(entry: dict) -> list[str]:
    return {"int8": ["sa8", "fx16"], "16x8": ["fx16"], "float32": ["sa8"]}[entry["variant"]]


CASES = [(name, fmt) for name, entry in sorted(ENTRIES.items()) for fmt in _formats(entry)]


def _calibration(name: str, entry: dict, tmp_path):
    if entry["variant"] != "float32":
        return None
    if entry.get("calibration"):
        return CORPUS / entry["calibration"]
    low, high = entry.get("input_range") or (-1.0, 1.0)
    shape = entry["inputs"][0]["shape"][1:]
    data = np.random.default_rng(0).uniform(low, high, (8, *shape)).astype(np.float32)
    path = tmp_path / f"{name}_calib.npy"
    np.save(path, data)
    return path


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_tflite_mode_equals_litert_at_every_layer(name):
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    path = CORPUS / name
    g = read(path).main
    rng = np.random.default_rng(1)
    xs = {}
    for i in g.inputs:
        t = g.tensors[i]
        shape = (2,) + tuple(t.shape)
        if np.dtype(t.dtype).kind == "f":
            xs[i] = rng.uniform(-1, 1, shape).astype(t.dtype)
        else:
            info = np.iinfo(np.dtype(t.dtype))
            xs[i] = rng.integers(info.min, info.max + 1, shape).astype(t.dtype)
    every = [t for op in g.ops for t in op.outputs]
    ours = run_graph(g, xs, "tflite", keep=True)
    ref = oracle.run_litert(path, g, xs, every)
    # A file with an op LiteRT's reference resolver lacks in every version (ELU) runs on LiteRT's
    # optimized kernels, whose convolutions and QUANTIZE round a few values otherwise.
    _, kernels = oracle.interpreter(path)
    builtin = not kernels.startswith("reference")
    if "ops" in ENTRIES[name]:
        assert builtin == ("ELU" in ENTRIES[name]["ops"]), kernels
    libm = libm_ops(g)
    for t in filter(ref.__contains__, every):  # not: tensors a rewrite at import added
        want, got = ref[t].reshape(ours[t].shape), ours[t]
        where = f"{name}: {g.tensors[t].name}"
        if np.dtype(want.dtype).kind == "f" and (libm or builtin):  # libm's rounding, carried on;
            # the optimized kernels' sums run in another order
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=where)
        elif np.dtype(want.dtype).kind == "f":
            np.testing.assert_array_equal(got, want, err_msg=where)
        elif builtin:
            diff = np.abs(got.astype(np.int64) - want)
            assert diff.max() <= 4 and np.mean(diff > 0) <= 0.01, where
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)


@pytest.mark.parametrize("name,fmt", CASES)
def test_converts_and_the_c_equals_the_executor(name, fmt, mli_builds, tmp_path):
    entry = ENTRIES[name]
    calibration = _calibration(name, entry, tmp_path)
    results = H.run_case(
        CORPUS / name,
        fmt,
        tmp_path / "out",
        mli_builds,
        mli_cflags("2.0"),
        calibration=calibration,
        samples=2,
    )
    H.assert_bit_exact(results)
