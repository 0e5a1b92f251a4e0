"""MLI MAC kernels against the golden vectors of the real MLI 2.0.2 library, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute import exact_sums
from mlitool.execute.mli.kernels import mac, macquant
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor, Role
from tests.support.golden import MODES, arith_of, load
from tests.support.paths import shared_path

_TYPES = ("sa8_sa8_sa32", "fx16", "fx16_fx8_fx8")
KERNELS = {
    **{f"conv2d_hwcn_{t}": mac.conv2d for t in _TYPES},
    **{f"depthwise_conv2d_hwcn_{t}": mac.depthwise_conv2d for t in _TYPES},
    **{f"group_conv2d_hwcn_{t}": mac.group_conv2d for t in _TYPES},
    **{f"transpose_conv2d_hwcn_{t}": mac.transpose_conv2d for t in _TYPES},
    **{f"fully_connected_{t}": mac.fully_connected for t in _TYPES},
    "fully_connected_sa8_sa8_sa32_ext_bias": mac.fully_connected_ext_bias,
}


def _cases(mode: str, kernel: str):
    return load(shared_path("golden"), mode, kernel)[1]


def _run(fn, case, arith, x=None):
    t = case.tensors
    x = t["in"].data[None] if x is None else x
    return fn(x, t["in"], t["weights"], t["bias"], t["out"], case.cfg, arith)


def _mismatches(fn, cases, arith) -> list[str]:
    bad = []
    for case in cases:
        got = _run(fn, case, arith)
        want = case.expected["out"]
        assert got.shape == (1,) + want.shape and got.dtype == want.dtype
        if not np.array_equal(got[0], want):
            diff = int(np.abs(got[0].astype(np.int64) - want).max())
            bad.append(
                f"case {case.index} [{case.tags}]: {int((got[0] != want).sum())} of {want.size} "
                f"differ, by up to {diff}"
            )
    return bad


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("mode", MODES)
def test_golden(mode, kernel):
    bad = _mismatches(KERNELS[kernel], _cases(mode, kernel), arith_of(mode))
    assert not bad, f"{mode}/{kernel}.npz:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "kernel",
    [
        "conv2d_hwcn_fx16",
        "depthwise_conv2d_hwcn_fx16",
        "fully_connected_fx16",
        "group_conv2d_hwcn_sa8_sa8_sa32",
    ],
)
def test_int64_accumulation_path(kernel, monkeypatch):
    """The int64 fallback (taken when float sums could round) gives the same exact answers."""
    monkeypatch.setattr(exact_sums, "F32_EXACT", 0)
    monkeypatch.setattr(exact_sums, "F64_EXACT", 0)
    mode = "CONVERGENT_ACCU_OFF"
    bad = _mismatches(KERNELS[kernel], _cases(mode, kernel), arith_of(mode))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "kernel", ["conv2d_hwcn_sa8_sa8_sa32", "fully_connected_sa8_sa8_sa32", "conv2d_hwcn_fx16"]
)
def test_chunked_float32_sums(kernel, monkeypatch):
    """float32 sums cut into many short chunks (added in float64) give the exact answers."""
    monkeypatch.setattr(exact_sums, "F32_EXACT", 1 << 17)
    monkeypatch.setattr(exact_sums, "_MIN_F32_CHUNK", 1)
    mode = "UP_ACCU_ON"
    bad = _mismatches(KERNELS[kernel], _cases(mode, kernel), arith_of(mode))
    assert not bad, "\n".join(bad)


# sa8_result's three rounding paths, each forced on every sa8 golden case by switching the
# others' thresholds off: {path: (_FLOAT64_EXACT, _SHIFT64_ACC)}. "float64" still falls back to the
# generic path where float64 would not be exact.
_SA8_PATHS = {
    "float64": (macquant._FLOAT64_EXACT, 0),
    "shift64": (0, macquant._SHIFT64_ACC),
    "generic": (0, 0),
}


@pytest.mark.parametrize("path", sorted(_SA8_PATHS))
@pytest.mark.parametrize("kernel", sorted(k for k in KERNELS if "sa8" in k))
@pytest.mark.parametrize("mode", MODES)
def test_sa8_result_paths(mode, kernel, path, monkeypatch):
    """Each of sa8_result's rounding paths alone gives the golden answers (ties included)."""
    float_limit, shift_limit = _SA8_PATHS[path]
    monkeypatch.setattr(macquant, "_FLOAT64_EXACT", float_limit)
    monkeypatch.setattr(macquant, "_SHIFT64_ACC", shift_limit)
    shifts64 = []
    rounding_shift64 = macquant._rounding_shift64

    def counted(p, n, mode):
        shifts64.append(p.size)
        return rounding_shift64(p, n, mode)

    monkeypatch.setattr(macquant, "_rounding_shift64", counted)
    bad = _mismatches(KERNELS[kernel], _cases(mode, kernel), arith_of(mode))
    assert not bad, f"{path}: {mode}/{kernel}.npz:\n" + "\n".join(bad)
    assert bool(shifts64) == (path == "shift64")


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_batch_equals_one_by_one(kernel):
    """Several inputs run as one batch give exactly the per-sample results (and the golden one)."""
    mode = "UP_ACCU_OFF"
    fn, arith = KERNELS[kernel], arith_of(mode)
    rng = np.random.default_rng(7)
    for case in _cases(mode, kernel)[:12]:
        x = case.tensors["in"].data
        info = np.iinfo(x.dtype)
        batch = np.stack(
            [
                x,
                -np.clip(x, info.min + 1, None),
                x[::-1].reshape(x.shape),
                rng.integers(info.min, info.max, size=x.shape, endpoint=True).astype(x.dtype),
            ]
        )
        together = _run(fn, case, arith, batch)
        np.testing.assert_array_equal(together[0], case.expected["out"])
        for i in range(len(batch)):
            np.testing.assert_array_equal(together[i], _run(fn, case, arith, batch[i : i + 1])[0])


def _fx(shape, el_type, frac=4, data=None):
    return MliTensor(
        name="t", role=Role.ACTIVATION, shape=shape, el_type=el_type, frac_bits=frac, data=data
    )


def test_unsupported_type_combination():
    inp, out = _fx((2, 2, 1), ElType.FX8), _fx((1, 1, 1), ElType.FX8)
    w = _fx((2, 2, 1, 1), ElType.FX8, data=np.ones((2, 2, 1, 1), np.int8))
    b = _fx((1,), ElType.FX8, data=np.zeros(1, np.int8))
    with pytest.raises(UnsupportedError, match="conv2d.*fx8"):
        mac.conv2d(np.zeros((1, 2, 2, 1), np.int8), inp, w, b, out, {}, Arith())


RNN_DENSE = [f"rnn_dense_{t}" for t in _TYPES]


def _run_rnn_dense(case, arith, xs=None):
    t, k = case.tensors, case.cfg["inputs_num"]
    xs = [t[f"in{i}"].data[None] for i in range(k)] if xs is None else xs
    return mac.rnn_dense(
        xs,
        [t[f"in{i}"] for i in range(k)],
        [t[f"weights{i}"] for i in range(k)],
        t["bias"],
        t["out"],
        case.cfg,
        arith,
    )


@pytest.mark.parametrize("kernel", RNN_DENSE)
@pytest.mark.parametrize("mode", MODES)
def test_rnn_dense_golden(mode, kernel):
    bad = []
    for case in _cases(mode, kernel):
        got, want = _run_rnn_dense(case, arith_of(mode)), case.expected["out"]
        assert got.shape == (1,) + want.shape and got.dtype == want.dtype
        if not np.array_equal(got[0], want):
            count = int((got[0] != want).sum())
            bad.append(f"case {case.index} [{case.tags}]: {count} of {want.size} differ")
    assert not bad, f"{mode}/{kernel}.npz:\n" + "\n".join(bad)


@pytest.mark.parametrize("kernel", RNN_DENSE)
def test_rnn_dense_batch_equals_one_by_one(kernel):
    mode = "UP_ACCU_ON"
    arith = arith_of(mode)
    rng = np.random.default_rng(11)
    for case in _cases(mode, kernel)[:8]:
        k = case.cfg["inputs_num"]
        singles = [case.tensors[f"in{i}"].data for i in range(k)]
        batches = []
        for x in singles:
            info = np.iinfo(x.dtype)
            noise = rng.integers(info.min, info.max, size=(3,) + x.shape, endpoint=True).astype(
                x.dtype
            )
            batches.append(np.concatenate([x[None], noise]))
        together = _run_rnn_dense(case, arith, batches)
        np.testing.assert_array_equal(together[0], case.expected["out"])
        for j in range(4):
            alone = _run_rnn_dense(case, arith, [b[j : j + 1] for b in batches])
            np.testing.assert_array_equal(together[j], alone[0])
