"""MLI LSTM / GRU cells against the golden vectors of the real MLI 2.0.2 library, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.kernels import rnn
from tests.support.golden import MODES, arith_of, load
from tests.support.paths import shared_path

_TYPES = ("sa8_sa8_sa32", "fx16", "fx16_fx8_fx8")
KERNELS = [f"{cell}_cell_{t}" for cell in ("lstm", "gru") for t in _TYPES]


def _run(kernel, case, arith, x=None, h0=None, c0=None):
    t = case.tensors
    x = t["in"].data[None] if x is None else x
    h0 = t["prev_out"].data[None] if h0 is None else h0
    common = (t["in"], t["prev_out"], t["weights_in"], t["weights_out"], t["bias"])
    if kernel.startswith("lstm"):
        c0 = t["cell"].data[None] if c0 is None else c0
        return rnn.lstm_cell(x, h0, c0, *common, t["cell"], t["out"], case.cfg, arith)
    return rnn.gru_cell(x, h0, *common, t["out"], case.cfg, arith), None


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("mode", MODES)
def test_golden(mode, kernel):
    bad = []
    for case in load(shared_path("golden"), mode, kernel)[1]:
        out, cell = _run(kernel, case, arith_of(mode))
        want = case.expected["out"]
        assert out.shape == (1,) + want.shape and out.dtype == want.dtype
        if not np.array_equal(out[0], want):
            bad.append(
                f"case {case.index} [{case.tags}]: out differs in {int((out[0] != want).sum())} "
                f"of {want.size}"
            )
        if cell is not None and not np.array_equal(cell[0], case.expected["cell"]):
            bad.append(f"case {case.index} [{case.tags}]: cell differs")
    assert not bad, f"{mode}/{kernel}.npz:\n" + "\n".join(bad)


@pytest.mark.parametrize("kernel", KERNELS)
def test_batch_equals_one_by_one(kernel):
    mode = "CONVERGENT_ACCU_ON"
    arith = arith_of(mode)
    rng = np.random.default_rng(5)
    for case in load(shared_path("golden"), mode, kernel)[1][:6]:
        t = case.tensors

        def batch(a):
            info = np.iinfo(a.dtype)
            noise = rng.integers(info.min, info.max, size=(2,) + a.shape, endpoint=True).astype(
                a.dtype
            )
            return np.concatenate([a[None], noise])

        x, h0 = batch(t["in"].data), batch(t["prev_out"].data)
        c0 = batch(t["cell"].data) if "cell" in t else None
        out, cell = _run(kernel, case, arith, x, h0, c0)
        np.testing.assert_array_equal(out[0], case.expected["out"])
        for j in range(3):
            one_out, one_cell = _run(
                kernel,
                case,
                arith,
                x[j : j + 1],
                h0[j : j + 1],
                None if c0 is None else c0[j : j + 1],
            )
            np.testing.assert_array_equal(out[j], one_out[0])
            if cell is not None:
                np.testing.assert_array_equal(cell[j], one_cell[0])
