import math

import numpy as np

from mlitool.verify import metrics


def test_snr_of_known_noise():
    ref = np.array([[3.0, 4.0]])  # signal power 25
    test = ref + np.array([[0.0, 0.5]])  # noise power 0.25
    assert math.isclose(metrics.snr_db(ref, test), 20.0)


def test_snr_identical_is_infinite_and_rendered_for_json():
    ref = np.ones((2, 3))
    assert metrics.snr_db(ref, ref) == math.inf
    assert metrics.finite(metrics.snr_db(ref, ref)) == "inf"


def test_compare_values():
    ref = np.array([[1.0, 0.0], [0.0, 1.0]])
    test = np.array([[1.0, 0.0], [0.0, -1.0]])
    m = metrics.compare(ref, test)
    assert m["max_abs_err"] == 2.0
    assert math.isclose(m["rmse"], 1.0)
    assert math.isclose(m["cosine"], 0.0)


def test_lsb_diff_and_top1():
    a = np.array([[1, 2, 3], [5, 0, 0]], dtype=np.int8)
    b = np.array([[1, 2, 6], [5, 7, 0]], dtype=np.int8)
    d = metrics.lsb_diff(a, b)
    assert d == {"differing_share": 2 / 6, "max_lsb": 7}
    assert metrics.top1_agreement(a, b) == 0.5
