"""`repro`: float32 products, exp and tanh that do not depend on the BLAS kernel, the batch split
or numpy's SIMD loops, against exact references (math.fsum, float64 libm rounded to float32)."""

from __future__ import annotations

import math

import numpy as np

from mlitool.execute.reference import repro


def test_matmul_is_within_its_error_bound_of_the_exact_sum_and_row_independent():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((40, 300)) * rng.uniform(0.5, 1, (40, 1))).astype(np.float32)
    w = rng.standard_normal((300, 7)).astype(np.float32)
    got = repro.matmul(x, w)
    exact = np.array(
        [[math.fsum(x[i].astype(np.float64) * w[:, j]) for j in range(7)] for i in range(40)]
    )
    # The grid: K * 2^-(a+1) * max|x_row| * max|w_col| (a = 28 bits for K = 300), plus the
    # final rounding to float32 (half a step of float32).
    bound = (
        300 * 2.0**-29 * np.abs(x).max(axis=1)[:, None] * np.abs(w).max(axis=0)
        + np.spacing(np.abs(exact).astype(np.float32)) / 2
    )
    assert repro.x_bits(300) == 28
    assert (np.abs(got - exact) <= bound).all()
    for part in (slice(0, 1), slice(3, 17), slice(17, 40)):
        assert repro.matmul(x[part], w).tobytes() == got[part].tobytes()


def test_exp_and_tanh_are_float64_libm_rounded_to_float32():
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [
            rng.standard_normal(100_000) * 12,
            rng.standard_normal(1000) * 1e-4,
            [0, 88.7, 89, -103, -104, 1e-30, -50, np.inf, -np.inf],
        ]
    ).astype(np.float32)
    with np.errstate(over="ignore"):
        assert repro.exp(x).tobytes() == np.exp(x.astype(np.float64)).astype(np.float32).tobytes()
    assert repro.tanh(x).tobytes() == np.tanh(x.astype(np.float64)).astype(np.float32).tobytes()
    assert np.isnan(repro.exp(np.float32([np.nan]))).all()
    assert np.isnan(repro.tanh(np.float32([np.nan]))).all()
