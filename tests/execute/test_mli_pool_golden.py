"""MLI pooling kernels against the golden vectors of the real MLI 2.0.2 library, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.kernels import pool
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor, Role
from tests.support.golden import MODES, arith_of, load
from tests.support.paths import shared_path

KERNELS = {
    f"{kind}_hwc_{t}": getattr(pool, kind)
    for kind in ("avepool", "maxpool")
    for t in ("sa8", "fx8", "fx16")
}


def _cases(mode: str, kernel: str):
    return load(shared_path("golden"), mode, kernel)[1]


def _run(fn, case, arith, x=None):
    t = case.tensors
    return fn(t["in"].data[None] if x is None else x, t["in"], t["out"], case.cfg, arith)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("mode", MODES)
def test_golden(mode, kernel):
    fn, arith = KERNELS[kernel], arith_of(mode)
    bad = []
    for case in _cases(mode, kernel):
        got, want = _run(fn, case, arith), case.expected["out"]
        assert got.shape == (1,) + want.shape and got.dtype == want.dtype
        if not np.array_equal(got[0], want):
            bad.append(
                f"case {case.index} [{case.tags}] cfg {case.cfg}: "
                f"{int((got[0] != want).sum())} of {want.size} differ"
            )
    assert not bad, f"{mode}/{kernel}.npz:\n" + "\n".join(bad)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_batch_equals_one_by_one(kernel):
    mode = "CONVERGENT_ACCU_OFF"
    fn, arith = KERNELS[kernel], arith_of(mode)
    rng = np.random.default_rng(3)
    for case in _cases(mode, kernel)[:12]:
        x = case.tensors["in"].data
        info = np.iinfo(x.dtype)
        batch = np.stack(
            [
                x,
                rng.integers(info.min, info.max, size=x.shape, endpoint=True).astype(x.dtype),
                np.full_like(x, info.max),
                np.full_like(x, info.min),
            ]
        )
        together = _run(fn, case, arith, batch)
        np.testing.assert_array_equal(together[0], case.expected["out"])
        for i in range(len(batch)):
            np.testing.assert_array_equal(together[i], _run(fn, case, arith, batch[i : i + 1])[0])


def test_reciprocal_table_and_formula_agree():
    """Sizes >= 32 use MLI's formula; it reproduces the table below 32 as well."""
    assert pool.reciprocal(3) == (0x5555, 16)
    assert pool.reciprocal(49) == (
        0x5397,
        20,
    )  # (2^31 // 49) << 6 >> 17 = 21399; 21399 / 2^20 ~ 1/49
    for div in range(2, 300):
        mul, shift = pool.reciprocal(div)
        assert 2**14 <= mul < 2**15 and abs(mul / 2**shift - 1 / div) < 2**-shift


def test_unsupported_type():
    t = MliTensor(name="t", role=Role.ACTIVATION, shape=(2, 2, 1), el_type=ElType.SA32)
    with pytest.raises(UnsupportedError, match="maxpool"):
        pool.maxpool(
            np.zeros((1, 2, 2, 1), np.int32), t, t, {"kernel_width": 2, "kernel_height": 2}, Arith()
        )
