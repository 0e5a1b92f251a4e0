"""verify's figures do not depend on how the samples are cut into batches.

Unit level: the streaming statistics of any split of N samples, merged batch by batch as verify
merges them, equal the figures of all N samples computed at once from their definitions (the
samples are small integers, so every float64 sum is exact in any order and the figures must
be equal to the last bit). End to end: verify's document for N samples in batches of 1, 4, 5 or
all N, with --jobs 1 or 2, is the same document. `run` and verify advance their progress by
samples, not by batches."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlitool.pipeline import ModelOptions
from mlitool.plumbing.progress import Progress
from mlitool.run import RunOptions, execute
from mlitool.verify.command import VerifyOptions, verify
from mlitool.verify.stats import LsbStats, RealStats, Top1Stats
from tests.support.tflite_build import Buf, build, fc_spec


@st.composite
def split_samples(draw):
    """(reference, test, batch boundaries): n samples of k integer values each."""
    n, k = draw(st.integers(1, 9)), draw(st.integers(1, 4))
    values = arrays(np.int64, (n, k), elements=st.integers(-50, 50))
    ref, test = draw(values), draw(values)
    cuts = [i for i in range(1, n) if draw(st.booleans())]
    return ref, test, [0, *cuts, n]


def _merged(cls, ref, test, bounds):
    """As verify does: each batch's stats on their own, merged in batch order into empty ones."""
    total = cls()
    for start, stop in itertools.pairwise(bounds):
        batch = cls()
        batch.add(ref[start:stop], test[start:stop])
        total.merge(batch)
    return total.result()


def _real_figures(ref: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """The definitions (see mlitool.verify.metrics), on all samples at once."""
    r, t = ref.astype(np.float64).ravel(), test.astype(np.float64).ravel()
    err = r - t
    signal, noise, energy = float(r @ r), float(err @ err), float(t @ t)
    snr = (
        math.inf if noise == 0 else -math.inf if signal == 0 else 10.0 * math.log10(signal / noise)
    )
    if signal == 0 or energy == 0:
        cos = 1.0 if signal == energy else 0.0
    else:
        cos = float(r @ t) / math.sqrt(signal * energy)
    return {
        "snr_db": snr,
        "max_abs_err": float(np.max(np.abs(err))),
        "rmse": math.sqrt(noise / err.size),
        "cosine": cos,
    }


@settings(max_examples=150, deadline=None)
@given(split_samples())
def test_merged_batches_equal_all_samples_at_once(case):
    ref, test, bounds = case
    assert _merged(RealStats, ref, test, bounds) == _real_figures(ref, test)
    diff = np.abs(ref - test)
    assert _merged(LsbStats, ref, test, bounds) == {
        "differing_share": np.count_nonzero(diff) / diff.size,
        "max_lsb": int(diff.max()),
    }
    agree = int(np.sum(np.argmax(ref, axis=1) == np.argmax(test, axis=1)))
    assert _merged(Top1Stats, ref, test, bounds) == agree / len(ref)


def test_a_worse_early_batch_is_kept():
    """The hand-made case: the largest error and LSB are in the first of three batches, and
    the one top-1 miss is in a single-sample batch."""
    ref = np.array([[0, 9], [0, 1], [5, 0], [1, 1]])
    test = np.array([[0, 2], [0, 1], [0, 5], [1, 0]])
    bounds = [0, 2, 3, 4]
    real = _merged(RealStats, ref, test, bounds)
    assert real["max_abs_err"] == 7.0 and real["rmse"] == math.sqrt((49 + 25 + 25 + 1) / 8)
    assert _merged(LsbStats, ref, test, bounds) == {"differing_share": 4 / 8, "max_lsb": 7}
    assert _merged(Top1Stats, ref, test, bounds) == 3 / 4


# ---- end to end ---------------------------------------------------------------------------

N = 21  # the last samples agree with tflite: a merge that
# kept the last batch's LSB would show 0
SUMS = {"snr_db", "rmse", "cosine"}  # float sums: batch order changes their last bits


def _classifier(tmp_path):
    """fc_spec with three near-equal classes, no bias: the int8 output (scale 1) saturates and
    ties, so MLI's top-1 misses float's on some samples and differs from tflite by 1 LSB."""
    spec = fc_spec(np.array([[10, 10, 10, 10], [5, 5, 6, 4], [3, 4, 3, 3]], np.int8))
    spec.buffers[2] = Buf(np.zeros(3, np.int32).tobytes())
    spec.tensors[3] = dataclasses.replace(spec.tensors[3], scale=[1.0])
    path = tmp_path / "fc.tflite"
    path.write_bytes(build(spec))
    return path


def _same(a, b, where="") -> None:
    """Equal documents; the sum-based figures within 1e-9 (the sums' order)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            if k in SUMS and isinstance(a[k], float):
                assert math.isclose(a[k], b[k], rel_tol=1e-9), f"{where}/{k}: {a[k]} {b[k]}"
            else:
                _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_verify_document_does_not_depend_on_batches_or_jobs(tmp_path):
    path = _classifier(tmp_path)
    docs = {
        (b, j): verify(path, ModelOptions(), VerifyOptions(samples=N, batch=b, jobs=j))
        for b, j in [(N, 1), (1, 1), (4, 1), (5, 2)]
    }
    one = docs[N, 1]
    out = one["outputs"][0]
    # the figures a wrong merge would change: a miss, an LSB, errors that vary by sample
    assert out["top1"] == {"vs_float": 20 / 21, "vs_tflite": 1.0}
    assert out["vs_tflite"]["max_lsb"] == 1 and out["vs_tflite"]["differing_share"] == 8 / 63
    assert one["inputs"]["samples"] == N
    for key, doc in docs.items():
        _same(one, doc, f"batch {key[0]}, jobs {key[1]}")


class _Counting(Progress):
    def __init__(self):
        self.steps: dict[str, list[int]] = {}

    def stage(self, label, total):
        self.steps[label] = [total]
        return self.steps[label].append


def test_progress_counts_samples_not_batches(tmp_path):
    path = _classifier(tmp_path)
    x = np.random.default_rng(3).integers(-128, 128, (N, 1, 4), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    p = _Counting()
    execute(path, ModelOptions(), RunOptions(input=tmp_path / "x.npy", batch=5, progress=p))
    verify(path, ModelOptions(), VerifyOptions(samples=N, batch=5, progress=p))
    assert p.steps["run (mli)"] == [N, 5, 5, 5, 5, 1]
    assert p.steps["verify (samples)"] == [N, 5, 5, 5, 5, 1]
