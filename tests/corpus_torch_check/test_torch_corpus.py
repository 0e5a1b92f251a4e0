"""Issue 34's measure on the PyTorch-export corpus (`tests/corpus_torch`, made by
tools/make_torch_corpus.py with litert-torch, PT2E and ai-edge-quantizer): every file converts in
sa8 and fx16 (float-input files both `--weights-only` and calibrated with their .npy); tflite
mode equals LiteRT's reference kernels at every layer (float tensors too, bit for bit: its sums
are added in LiteRT's order; in a file with a float op LiteRT runs through the host libm,
`tests.support.litert.LIBM_OPS`, within 1e-4 of the tensor's largest magnitude, as rounding
carries from layer to layer);
and the emitted C of every calibrated or int8 conversion, run on the real MLI 2.0.2 library in
the four builds, equals mli mode at every layer. QDQ files (`pt2e_qdq`) also convert from their
QUANTIZE -> DEQUANTIZE pairs alone (way "pairs": no calibration; a float activation without a
pair takes its CONCATENATION's pair or runs in a float region), with the pairs' own parameters,
and their C is checked converted that way.

What fails today is listed below with its reason (mlitool's message) and runs as a strict
xfail: a fix makes it pass, and the strict mark then fails until the entry is removed. tools/torch_corpus_table.py measures the same and writes the table (baseline.md).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import ModelOptions, load, read, settle
from tests.support import runtime_harness as H
from tests.support.corpus import entries
from tests.support.litert import libm_ops
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_torch"
ENTRIES = entries(CORPUS)
FORMATS = ("sa8", "fx16")

# What fails today, by file (tests/corpus_torch/baseline.md has the whole table): a file that
# does not convert fails in every format and way, and so its C check.
DOES_NOT_CONVERT: dict[str, str] = {}
# QDQ files whose float activations all convert from their pairs: a CONCATENATION's unpaired
# inputs take its output's pair (the U-Net), and the GRU's unpaired gates are a float region
# (passes/float_regions.py). Any file listed here would still need --calibration.
NEED_CALIBRATION: dict[str, str] = {}
LAYERS_DIFFER: dict[str, str] = {}
C_DIFFERS: dict[str, str] = {}


def _known(test: str, name: str, fmt: str = "", way: str = "") -> str | None:
    """Why `test` fails today on `name` in `fmt` (converted `way`), or None."""
    if test == "layers":
        return LAYERS_DIFFER.get(name)
    if way == "pairs" and name in NEED_CALIBRATION:
        return NEED_CALIBRATION[name]
    return DOES_NOT_CONVERT.get(name) or (C_DIFFERS.get(f"{name}-{fmt}") if test == "c" else None)


def _floats(entry: dict) -> bool:
    return entry["inputs"][0]["dtype"] == "float32"


def _qdq(entry: dict) -> bool:
    return entry["variant"] == "pt2e_qdq"


def _ways(entry: dict) -> tuple[str, ...]:
    if not _floats(entry):
        return ("int8",)
    # a QDQ file's pairs give its activations' parameters: no calibration (passes.qdq)
    return ("weights-only", "calibrated") + (("pairs",) if _qdq(entry) else ())


def _cases(test: str, params: list[tuple]) -> list:
    """pytest params, each a strict xfail where it fails today (`_known`)."""
    out = []
    for p in params:
        case_id = "-".join(p)
        why = _known(test, *p)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(*p, id=case_id, marks=marks))
    return out


LAYER_CASES = _cases("layers", [(n,) for n in sorted(ENTRIES)])
CONVERT_CASES = _cases(
    "convert",
    [(n, f, w) for n, e in sorted(ENTRIES.items()) for f in FORMATS for w in _ways(e)],
)
C_CASES = _cases(
    "c",
    [(n, f) for n, e in sorted(ENTRIES.items()) for f in FORMATS],
)


def _options(name: str, fmt: str, way: str) -> ModelOptions:
    entry = ENTRIES[name]
    if way == "weights-only":
        return ModelOptions(format=fmt, weights_only=True)
    if way == "pairs":
        return ModelOptions(format=fmt)
    calibration = CORPUS / entry["calibration"] if _floats(entry) else None
    return ModelOptions(format=fmt, calibration=calibration)


@pytest.mark.parametrize("name", LAYER_CASES)
def test_tflite_mode_equals_litert_at_every_layer(name):
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    path = CORPUS / name
    g = read(path).main
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # the table's inputs
    xs = {}
    for i in g.inputs:
        t = g.tensors[i]
        shape = (2, *t.shape)
        if np.dtype(t.dtype).kind == "f":
            xs[i] = rng.uniform(-1, 1, shape).astype(t.dtype)
        else:
            info = np.iinfo(np.dtype(t.dtype))
            xs[i] = rng.integers(info.min, info.max + 1, shape).astype(t.dtype)
    every = [t for op in g.ops for t in op.outputs]
    ours = run_graph(g, xs, "tflite", keep=True)
    ref = oracle.run_litert(path, g, xs, every)
    compared = 0
    libm = libm_ops(g)
    for t in filter(ref.__contains__, every):  # not: tensors a rewrite at import added
        if t not in ours:
            continue
        want, got = ref[t].reshape(ours[t].shape), ours[t]
        where = f"{name}: {g.tensors[t].name}"
        if np.dtype(want.dtype).kind == "f" and libm:  # the host libm's rounding, carried on
            finite = np.abs(want[np.isfinite(want)])
            atol = max(1e-4 * float(finite.max(initial=0.0)), 1e-6)
            np.testing.assert_allclose(got, want, rtol=0, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
        compared += 1
    assert compared >= len(g.ops) // 2, f"{name}: only {compared} layers compared"


@pytest.mark.parametrize("name,fmt,way", CONVERT_CASES)
def test_converts(name, fmt, way, tmp_path):
    graph, model = load(CORPUS / name, settle(_options(name, fmt, way)))
    assert model.layers and len(model.outputs) == len(graph.outputs)


@pytest.mark.parametrize("name,fmt", C_CASES)
def test_the_c_equals_mli_mode(name, fmt, mli_builds, tmp_path):
    entry = ENTRIES[name]
    paired = _qdq(entry) and name not in NEED_CALIBRATION  # the pairs' parameters
    calibration = CORPUS / entry["calibration"] if _floats(entry) and not paired else None
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


PAIRED = sorted(n for n, e in ENTRIES.items() if _qdq(e) and n not in NEED_CALIBRATION)


@pytest.mark.parametrize("name", PAIRED)
def test_qdq_pairs_give_the_sa8_parameters(name):
    """Every SA8 activation of a QDQ file's float tensor carries its pair's zero point and scale
    (not a range re-derived), and every conv / FC weight its pair's per-channel scales."""
    graph, mli = load(CORPUS / name, settle(ModelOptions(format="sa8")))
    checked = 0
    for m in mli.tensors.values():
        i = m.source_index
        q = None if i is None else graph.tensors[i].qdq
        if q is None or m.el_type.name != "SA8":
            continue
        # a kernel's own output (a convert then writes the pair's parameters), or a view whose
        # bytes are another pair's tensor (the QUANTIZE after it requantizes, as LiteRT does)
        if m.name.endswith("_krn") or m.buffer is not None:
            continue
        n = len(q.scale)
        assert list(m.zero_point) == list(q.zero_point[:n]) or n > 1, m.name
        np.testing.assert_allclose(m.real_scale()[:n], q.scale, rtol=2**-14, err_msg=m.name)
        checked += 1
    weights = [t for t in graph.tensors if t.data is not None and t.qdq is not None]
    assert checked >= len(weights), f"{name}: {checked} tensors checked"
