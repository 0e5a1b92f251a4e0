"""Kernel-size specializations picked by TensorFlow Lite Micro's rule (issue 36): the rule on
every case of its table, `convert` calling them by default (vww links no generic convolution,
depthwise or pooling kernel) and `--no-specialize` calling the generic kernels only. The
runtime tests (test_runtime_*.py, tests/support/runtime_harness.py specializes like convert)
check the specialized C bit-exact on the real MLI 2.0.2 in the four builds."""

from __future__ import annotations

import json
import re

import pytest

from mlitool.mli.specialize import specialized_kernel
from mlitool.mli.types import ElType, MliLayer, MliModel, MliTensor, Role
from tests.support.cli import run_main
from tests.support.paths import shared_path

CONV = "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
DW = "mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32"
GROUP = "mli_krn_group_conv2d_hwcn_sa8_sa8_sa32"
TCONV = "mli_krn_transpose_conv2d_hwcn_sa8_sa8_sa32"
AVG, MAX = "mli_krn_avepool_hwc_sa8", "mli_krn_maxpool_hwc_sa8"
PAD0 = {"padding_left": 0, "padding_right": 0, "padding_top": 0, "padding_bottom": 0}


def _pick(kernel: str, hw=None, **cfg) -> str:
    tensors = {}
    if hw is not None:
        tensors["w"] = MliTensor("w", Role.WEIGHTS, (*hw, 4, 8), ElType.SA8)
    layer = MliLayer(0, "OP", "kind", kernel, [], [], weights="w" if hw else None, cfg=cfg)
    return specialized_kernel(MliModel("m", "2.0", "sa8", "hwc", tensors, [layer], [], []), layer)


@pytest.mark.parametrize(
    ("kernel", "hw", "cfg", "picked"),
    [
        (CONV, (1, 1), PAD0, f"{CONV}_k1x1"),
        (CONV, (1, 1), {**PAD0, "padding_top": 1}, CONV),  # k1x1 only without padding
        (CONV, (3, 3), {**PAD0, "padding_left": 1}, f"{CONV}_k3x3"),
        (CONV, (5, 5), PAD0, f"{CONV}_k5x5"),
        (CONV, (7, 7), PAD0, CONV),
        (CONV, (3, 1), PAD0, CONV),
        (CONV, (3, 3), {**PAD0, "dilation_width": 2}, CONV),
        (DW, (3, 3), PAD0, f"{DW}_k3x3"),
        (DW, (5, 5), PAD0, f"{DW}_k5x5"),
        (DW, (1, 1), PAD0, DW),
        (GROUP, (3, 3), PAD0, f"{GROUP}_k3x3"),
        (GROUP, (5, 5), PAD0, f"{GROUP}_k5x5"),
        (TCONV, (2, 2), {"stride_width": 2, "stride_height": 2}, f"{TCONV}_k2x2_str2"),
        (TCONV, (4, 4), {"stride_width": 2, "stride_height": 2}, f"{TCONV}_k4x4_str2"),
        (TCONV, (2, 2), {"stride_width": 1, "stride_height": 1}, TCONV),
        (TCONV, (3, 3), {"stride_width": 2, "stride_height": 2}, TCONV),
        ("mli_krn_conv2d_hwcn_fx16", (3, 3), PAD0, "mli_krn_conv2d_hwcn_fx16"),  # sa8 only
    ],
)
def test_the_rule_on_weights(kernel, hw, cfg, picked):
    assert _pick(kernel, hw, **cfg) == picked


@pytest.mark.parametrize("pool", [AVG, MAX])
def test_the_rule_on_pooling(pool):
    assert _pick(pool, kernel_width=2, kernel_height=2) == f"{pool}_k2x2"
    assert _pick(pool, kernel_width=3, kernel_height=3) == f"{pool}_k3x3"
    assert _pick(pool, kernel_width=3, kernel_height=2) == pool
    assert _pick(pool, kernel_width=6, kernel_height=6) == pool


def _calls(c_text: str) -> set[str]:
    return set(re.findall(r"\b(mli_krn_\w+)\(", c_text))


def test_vww_calls_specializations_and_no_specialize_the_generic_kernels(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, out, err = run_main(["convert", model, "-o", tmp_path / "s", "--json"], capsys)
    assert code == 0, err
    calls = _calls((tmp_path / "s" / "vww_96_int8.c").read_text())
    assert calls == {
        f"{CONV}_k1x1",  # 13 pointwise convolutions
        f"{CONV}_k3x3",  # the first, 3x3 with padding
        f"{DW}_k3x3",
        f"{AVG}_k3x3",
        "mli_krn_fully_connected_sa8_sa8_sa32",
        "mli_krn_softmax_sa8",
    }
    doc = json.loads(out)
    assert doc["footprint"]["mli_functions"] == sorted(calls)
    manifest = json.loads((tmp_path / "s" / "vww_96_int8.json").read_text())
    assert {la["kernel"] for la in manifest["layers"] if la["kernel"]} == calls
    code, out, err = run_main(
        ["convert", model, "-o", tmp_path / "g", "--json", "--no-specialize"], capsys
    )
    assert code == 0, err
    generic = _calls((tmp_path / "g" / "vww_96_int8.c").read_text())
    assert generic == {CONV, DW, AVG, "mli_krn_fully_connected_sa8_sa8_sa32", "mli_krn_softmax_sa8"}
    assert json.loads(out)["footprint"]["mli_functions"] == sorted(generic)
