"""Accuracy metrics between a reference and a test array (both batched, same shape)."""

from __future__ import annotations

import math

import numpy as np


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """10·log10(Σref² / Σ(ref−test)²); +inf when identical, -inf when the reference is all zero
    but the test is not."""
    ref = np.asarray(reference, dtype=np.float64)
    err = ref - np.asarray(test, dtype=np.float64)
    noise = float(np.sum(err * err))
    signal = float(np.sum(ref * ref))
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def cosine(reference: np.ndarray, test: np.ndarray) -> float:
    a = np.asarray(reference, dtype=np.float64).ravel()
    b = np.asarray(test, dtype=np.float64).ravel()
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 1.0 if na == nb else 0.0
    return float(np.dot(a, b) / (na * nb))


def compare(reference: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """SNR (dB), max absolute error, RMSE and cosine similarity of real-valued arrays."""
    ref = np.asarray(reference, dtype=np.float64)
    err = ref - np.asarray(test, dtype=np.float64)
    return {
        "snr_db": snr_db(ref, test),
        "max_abs_err": float(np.max(np.abs(err))) if err.size else 0.0,
        "rmse": float(np.sqrt(np.mean(err * err))) if err.size else 0.0,
        "cosine": cosine(ref, test),
    }


def lsb_diff(reference_q: np.ndarray, test_q: np.ndarray) -> dict[str, float]:
    """Share of differing integer elements and the largest difference, in LSB."""
    diff = np.abs(np.asarray(reference_q, dtype=np.int64) - np.asarray(test_q, dtype=np.int64))
    return {
        "differing_share": float(np.count_nonzero(diff)) / diff.size if diff.size else 0.0,
        "max_lsb": int(diff.max()) if diff.size else 0,
    }


def top1_agreement(reference: np.ndarray, test: np.ndarray) -> float:
    """Share of samples (leading dimension) whose argmax over the rest agrees."""
    ref = np.asarray(reference).reshape(len(reference), -1)
    tst = np.asarray(test).reshape(len(test), -1)
    return float(np.mean(np.argmax(ref, axis=1) == np.argmax(tst, axis=1)))


def finite(value: float) -> float | str:
    """JSON has no infinities: render ±inf as strings."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if math.isnan(value):
        return "nan"
    return value
