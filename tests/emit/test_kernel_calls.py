"""Kernel calls per inference in the manifest (issue 36), against the emitted NAME_run read as C:
per layer, its call statements times the bounds of the loops around them."""

from __future__ import annotations

import json
import math
import re

import pytest

from tests.support.cli import run_main
from tests.support.paths import ROOT, shared_path


def _calls_in_c(c_text: str, name: str) -> dict[int, int]:
    run = c_text[c_text.index(f"mli_status {name}_run(void) {{") :]
    run = run[: run.index("\n}\n")]
    blocks = re.split(r"\n    /\* (\d+): ", run)[1:]
    out = {}
    for pos, block in zip(blocks[::2], blocks[1::2]):
        bounds = [int(b) for b in re.findall(r"for \(i\d+ = 0u; i\d+ < (\d+)u; i\d+\+\+\)", block)]
        out[int(pos)] = block.count("status = ") * math.prod(bounds)
    return out


@pytest.mark.parametrize(
    "model",
    [
        shared_path("models", "mlperf_tiny", "vww_96_int8.tflite"),
        ROOT / "tests" / "corpus" / "mobilenet_v3_small_int8.tflite",
        ROOT / "tests" / "corpus" / "efficientnet_like_int8.tflite",
    ],
)
def test_manifest_kernel_calls_are_the_c_calls(model, tmp_path, capsys):
    code, _, err = run_main(["convert", model, "-o", tmp_path, "-q"], capsys)
    assert code == 0, err
    name = model.stem
    manifest = json.loads((tmp_path / f"{name}.json").read_text())
    in_c = _calls_in_c((tmp_path / f"{name}.c").read_text(), name)
    assert {la["position"]: la["kernel_calls"] for la in manifest["layers"]} == in_c
    assert manifest["kernel_calls_per_inference"] == sum(in_c.values())
    if name == "vww_96_int8":
        assert manifest["kernel_calls_per_inference"] == 30  # 31 layers, one a view
    if name == "mobilenet_v3_small_int8":
        # its first squeeze-excite MUL ([1,8,8,16] x [1,1,1,16]) loops over the 16 channels,
        # not the 64 pixels: 185 - 64 + 16 calls
        assert manifest["kernel_calls_per_inference"] == 137
        assert in_c[9] == 16
