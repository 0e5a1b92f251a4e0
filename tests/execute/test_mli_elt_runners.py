"""The executor adapters (`LAYER_RUNNERS`) of the non-MAC kernels, batching, and the argmax
heap order against a literal transcription of MLI's heap select / heap sort."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mlitool.execute.mli.kernels import activations, convert_tensor, eltwise, movement
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.kernels.movement import _top_k
from mlitool.mli.types import MliLayer, MliModel, Role
from tests.support.golden import load
from tests.support.paths import shared_path

MODE = "CONVERGENT_ACCU_OFF"
RUNNERS = {
    **eltwise.LAYER_RUNNERS,
    **activations.LAYER_RUNNERS,
    **movement.LAYER_RUNNERS,
    **convert_tensor.LAYER_RUNNERS,
}
FILES = [
    "eltwise_add_sa8",
    "eltwise_mul_fx16",
    "eltwise_max_fx8",
    "relu_sa8",
    "leaky_relu_fx16",
    "prelu_sa8",
    "sigm_sa8",
    "tanh_fx16",
    "softmax_sa8",
    "softmax_fx16",
    "l2_normalize_sa8",
    "argmax_sa8",
    "permute_sa8",
    "convert_sa8_to_fx16",
    "convert_fp32_to_sa8",
]


def _kind(kernel: str) -> str:
    return "convert" if kernel.startswith("convert_") else kernel.rsplit("_", 1)[0]


def _perturbed(x: np.ndarray) -> np.ndarray:
    """A second, different sample of the same type (so batching cannot hide cross-talk)."""
    if x.dtype.kind == "f":
        return (x[::-1] * np.float32(0.75)).reshape(x.shape) if x.ndim else x * np.float32(0.75)
    info = np.iinfo(x.dtype)
    return np.clip(np.flip(x).astype(np.int64) // 2 + 3, info.min, info.max).astype(x.dtype)


def _layer_model(kind: str, case, params_from: dict[str, str]):
    tensors, inputs = {}, []
    for role, t in case.tensors.items():
        const = role in params_from.values() or role in ("slope", "epsilon")
        tensors[role] = dataclasses.replace(
            t, role=Role.PARAM if const else Role.ACTIVATION, data=t.data if const else None
        )
        if not const and role != "out":
            inputs.append(role)
    params = dict(params_from)
    params.update({r: r for r in ("slope", "epsilon") if r in case.tensors})
    layer = MliLayer(
        index=case.index,
        op_type="TEST",
        kind=kind,
        kernel="",
        inputs=inputs,
        outputs=["out"],
        params=params,
        cfg=dict(case.cfg),
    )
    model = MliModel(
        source="golden",
        mli_version="2.0",
        format="",
        layout="hwc",
        tensors=tensors,
        layers=[layer],
        inputs=inputs,
        outputs=["out"],
    )
    return layer, model


@pytest.mark.parametrize("kernel", FILES)
def test_runner_batches_golden_cases(kernel):
    _, cases = load(shared_path("golden"), MODE, kernel)
    arith = Arith("convergent", False)
    kind = _kind(kernel)
    runner = RUNNERS[kind]
    for case in cases:
        params = {}
        if kind.startswith("eltwise_"):
            # A scalar operand comes in as a constant (layer.params), the other as activations.
            scalar = [r for r in ("in2", "in1") if case.tensors[r].size == 1]
            params = {scalar[0]: scalar[0]} if scalar else {}
        layer, model = _layer_model(kind, case, params)
        firsts = [case.tensors[r].data for r in layer.inputs]
        seconds = [_perturbed(x) for x in firsts]
        batch = [np.stack([a, b]) for a, b in zip(firsts, seconds)]
        got = runner(layer, model, batch, arith)
        assert got.shape == (2,) + case.expected["out"].shape, case.tags
        np.testing.assert_array_equal(
            got[0], case.expected["out"], err_msg=f"c{case.index} {case.tags}"
        )
        alone = runner(layer, model, [x[None] for x in seconds], arith)
        np.testing.assert_array_equal(got[1], alone[0], err_msg=f"c{case.index} {case.tags}")


def test_runner_reports_missing_slope():
    _, cases = load(shared_path("golden"), MODE, "leaky_relu_sa8")
    layer, model = _layer_model("leaky_relu", cases[0], {})
    layer.params = {}
    from mlitool.errors import ModelFormatError

    with pytest.raises(ModelFormatError, match="slope"):
        RUNNERS["leaky_relu"](layer, model, [cases[0].tensors["in"].data[None]], Arith())


def _mli_heap_top_k(vals: list[int], k: int) -> list[int]:
    """MLI's argmax (heapify / heap_select_k / heap_sort) transcribed element by element."""

    def heapify(h, size, root):
        smallest = root
        while root < size // 2:
            left, right = 2 * root + 1, 2 * root + 2
            if left < size and vals[h[left]] < vals[h[smallest]]:
                smallest = left
            if right < size and vals[h[right]] < vals[h[smallest]]:
                smallest = right
            if smallest == root:
                break
            h[root], h[smallest] = h[smallest], h[root]
            root = smallest

    h = list(range(k))
    for i in range(k // 2 - 1, -1, -1):
        heapify(h, k, i)
    for j in range(k, len(vals)):
        if vals[h[0]] > vals[j]:
            continue
        h[0] = j
        heapify(h, k, 0)
    for i in range(k // 2 - 1, -1, -1):
        heapify(h, k, i)
    for i in range(k - 1, 0, -1):
        h[0], h[i] = h[i], h[0]
        heapify(h, i, 0)
    return h


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_argmax_heap_order_with_ties(k):
    rng = np.random.default_rng(k)
    vals = rng.integers(-3, 4, size=(64, 40))  # many ties
    want = np.array([_mli_heap_top_k(row.tolist(), k) for row in vals])
    np.testing.assert_array_equal(_top_k(vals, k), want)


def test_lut_kernels_refuse_fx8():
    from mlitool.errors import UnsupportedError
    from mlitool.mli.types import ElType, MliTensor

    t = MliTensor(name="x", role=Role.ACTIVATION, shape=(4,), el_type=ElType.FX8, frac_bits=5)
    with pytest.raises(UnsupportedError, match="sa8 and fx16"):
        activations.sigm(np.zeros((1, 4), np.int8), t, t, Arith())
