"""`verify --labels`: accuracy of every mode against real labels, the drop with its interval."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.support.cli import run_main
from tests.support.paths import shared_path
from tests.support.real_inputs import (
    RESNET8_CLASSES,
    RESNET8_MISSED,
    cifar10_test20,
    cifar10_test20_int8,
)


@pytest.mark.parametrize(("kind", "jobs"), [("npy", "1"), ("npz", "2")])
def test_resnet8_accuracy_against_cifar_labels(tmp_path, capsys, kind, jobs):
    model = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    np.save(tmp_path / "x.npy", cifar10_test20_int8())
    labels = cifar10_test20()[1]
    if kind == "npy":
        np.save(tmp_path / "y.npy", labels)
    else:
        np.savez(tmp_path / "y.npz", labels=labels)
    args = ["verify", model, "-i", tmp_path / "x.npy", "--labels", tmp_path / f"y.{kind}"]
    code, out, err = run_main([*args, "-j", jobs, "--json"], capsys)
    assert code == 0, err
    lab = json.loads(out)["labels"]
    # LiteRT (tflite mode equals it) and MLI on the real library take 19 of the 20 images for
    # their label (image 4, an airplane, for a bird: tests/support/real_inputs.py)
    assert lab["samples"] == 20 and lab["classes"] == 10 and RESNET8_MISSED == [4]
    assert lab["accuracy"]["tflite"]["top1"] == 0.95 and lab["accuracy"]["mli"]["top1"] == 0.95
    assert lab["top1_drop_mli_vs_float"]["drop"] == 0.0
    assert "top5" in lab["accuracy"]["mli"]
    # the confusion cells: each image's (label, LiteRT's class), counted
    cells = sorted({(int(a), b) for a, b in zip(labels, RESNET8_CLASSES)})
    want = [[a, b, sum(1 for x in zip(labels, RESNET8_CLASSES) if x == (a, b))] for a, b in cells]
    assert lab["confusion"]["tflite"] == want and lab["confusion"]["mli"] == want
    code, out, err = run_main(args, capsys)
    assert "labels: top-1 95.0% (float 95.0%, drop 0.0 points" in " ".join(out.split())


def test_labels_need_one_per_sample(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    np.save(tmp_path / "x.npy", cifar10_test20_int8()[:3])
    np.save(tmp_path / "y.npy", cifar10_test20()[1])
    code, _, err = run_main(
        ["verify", model, "-i", tmp_path / "x.npy", "--labels", tmp_path / "y.npy"], capsys
    )
    assert code == 2 and "20 labels for 3 samples" in err


def test_drop_interval_is_the_binomial_percentiles():
    """With discordance one way only (b of n samples right in float, wrong in mli), the
    bootstrap drop is Binomial(n, b/n)/n: its 2.5 % and 97.5 % quantiles, exactly."""
    from mlitool.verify.stats import drop_interval

    n, b = 200, 20
    ref = np.ones(n, bool)
    test = np.arange(n) >= b
    cdf = np.cumsum([math.comb(n, k) * (b / n) ** k * (1 - b / n) ** (n - k) for k in range(n)])
    lo, hi = int(np.searchsorted(cdf, 0.025)), int(np.searchsorted(cdf, 0.975))
    drop, got_lo, got_hi = drop_interval(ref, test)
    assert drop == 0.1 and (lo, hi) == (12, 29)
    assert abs(got_lo * n - lo) <= 1 and abs(got_hi * n - hi) <= 1
    assert drop_interval(ref, ref) == (0.0, 0.0, 0.0)
