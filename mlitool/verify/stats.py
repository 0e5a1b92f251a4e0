"""Streaming accuracy statistics: the metrics of `mlitool.verify.metrics`, accumulated batch by batch so
verify never holds every sample's activations at once. `result()` equals the metrics computed
on the concatenated batches (up to float summation order)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class RealStats:
    """SNR (dB), max absolute error, RMSE and cosine similarity of test vs reference."""

    signal: float = 0.0
    noise: float = 0.0
    max_abs: float = 0.0
    count: int = 0
    dot: float = 0.0
    test_energy: float = 0.0

    def add(self, reference: np.ndarray, test: np.ndarray) -> None:
        ref = np.asarray(reference, dtype=np.float64).reshape(-1)
        tst = np.asarray(test, dtype=np.float64).reshape(-1)
        err = ref - tst
        self.signal += float(ref @ ref)
        self.noise += float(err @ err)
        self.dot += float(ref @ tst)
        self.test_energy += float(tst @ tst)
        if err.size:
            self.max_abs = max(self.max_abs, float(np.max(np.abs(err))))
        self.count += err.size

    def merge(self, o: "RealStats") -> None:
        """Add another batch's figures (as `add` would have, batch by batch)."""
        self.signal += o.signal
        self.noise += o.noise
        self.dot += o.dot
        self.test_energy += o.test_energy
        self.max_abs = max(self.max_abs, o.max_abs)
        self.count += o.count

    def result(self) -> dict[str, float]:
        if self.noise == 0.0:
            snr = math.inf
        elif self.signal == 0.0:
            snr = -math.inf
        else:
            snr = 10.0 * math.log10(self.signal / self.noise)
        if self.signal == 0.0 or self.test_energy == 0.0:
            cos = 1.0 if self.signal == self.test_energy else 0.0
        else:
            cos = self.dot / math.sqrt(self.signal * self.test_energy)
        return {
            "snr_db": snr,
            "max_abs_err": self.max_abs,
            "rmse": math.sqrt(self.noise / self.count) if self.count else 0.0,
            "cosine": cos,
        }


@dataclass
class LsbStats:
    """Share of differing integer elements and the largest difference in LSB."""

    differing: int = 0
    count: int = 0
    max_lsb: int = 0

    def add(self, reference_q: np.ndarray, test_q: np.ndarray) -> None:
        diff = np.abs(
            np.asarray(reference_q, dtype=np.int64).reshape(-1)
            - np.asarray(test_q, dtype=np.int64).reshape(-1)
        )
        self.differing += int(np.count_nonzero(diff))
        self.count += diff.size
        if diff.size:
            self.max_lsb = max(self.max_lsb, int(diff.max()))

    def merge(self, o: "LsbStats") -> None:
        self.differing += o.differing
        self.count += o.count
        self.max_lsb = max(self.max_lsb, o.max_lsb)

    def result(self) -> dict[str, float]:
        return {
            "differing_share": self.differing / self.count if self.count else 0.0,
            "max_lsb": self.max_lsb,
        }


@dataclass
class Top1Stats:
    agree: int = 0
    count: int = 0

    def add(self, reference: np.ndarray, test: np.ndarray) -> None:
        ref = np.asarray(reference).reshape(len(reference), -1)
        tst = np.asarray(test).reshape(len(test), -1)
        self.agree += int(np.sum(np.argmax(ref, axis=1) == np.argmax(tst, axis=1)))
        self.count += len(ref)

    def merge(self, o: "Top1Stats") -> None:
        self.agree += o.agree
        self.count += o.count

    def result(self) -> float:
        return self.agree / self.count if self.count else 1.0


@dataclass
class LabelStats:
    """Per sample, whether the label is a mode's top-1 and among its top-5 (kept per sample:
    the paired interval of the accuracy drop needs them), and the label and top-1 class (the
    confusion pairs)."""

    top1: np.ndarray = None  # bool [samples]
    top5: np.ndarray = None
    label: np.ndarray = None  # int [samples]
    predicted: np.ndarray = None

    def __post_init__(self) -> None:
        self.top1 = np.zeros(0, bool) if self.top1 is None else self.top1
        self.top5 = np.zeros(0, bool) if self.top5 is None else self.top5
        self.label = np.zeros(0, np.int64) if self.label is None else self.label
        self.predicted = np.zeros(0, np.int64) if self.predicted is None else self.predicted

    def add(self, scores: np.ndarray, labels: np.ndarray) -> None:
        s = np.asarray(scores, dtype=np.float64).reshape(len(labels), -1)
        known = labels < s.shape[1]
        lab = np.where(known, labels, 0)
        mine = s[np.arange(len(labels)), lab][:, None]
        # the label's rank, ties to the lower class index (as argmax, which top-1 agreement uses)
        cls = np.arange(s.shape[1])[None, :]
        above = np.sum((s > mine) | ((s == mine) & (cls < lab[:, None])), axis=1)
        self.top1 = np.concatenate([self.top1, known & (above == 0)])
        self.top5 = np.concatenate([self.top5, known & (above < 5)])
        self.label = np.concatenate([self.label, labels.astype(np.int64)])
        self.predicted = np.concatenate([self.predicted, np.argmax(s, axis=1)])

    def merge(self, o: "LabelStats") -> None:
        self.top1 = np.concatenate([self.top1, o.top1])
        self.top5 = np.concatenate([self.top5, o.top5])
        self.label = np.concatenate([self.label, o.label])
        self.predicted = np.concatenate([self.predicted, o.predicted])

    def confusion(self) -> list[list[int]]:
        """The non-zero cells of the confusion matrix as [label, top-1 class, samples], sorted
        (sparse: a 1001-class matrix would be a million cells)."""
        pairs, counts = np.unique(
            np.stack([self.label, self.predicted], 1), axis=0, return_counts=True
        )
        return [[int(a), int(b), int(n)] for (a, b), n in zip(pairs, counts)]


def drop_interval(
    reference: np.ndarray, test: np.ndarray, rounds: int = 10000, seed: int = 0
) -> tuple[float, float, float]:
    """The accuracy drop reference - test (per-sample correctness, paired) and its 95 % paired
    bootstrap percentile interval. A resample's drop depends only on how many samples only the
    reference gets right (+1) and how many only the test does (-1), so the resamples are drawn
    as multinomial counts of the three outcomes (seeded: the same figures every run)."""
    n = len(reference)
    d = reference.astype(int) - test.astype(int)
    p = np.array([np.sum(d == 1), np.sum(d == -1), np.sum(d == 0)], dtype=np.float64) / n
    counts = np.random.default_rng(seed).multinomial(n, p, size=rounds)
    drops = (counts[:, 0] - counts[:, 1]) / n
    lo, hi = np.percentile(drops, [2.5, 97.5])
    return float(d.sum() / n), float(lo), float(hi)
