"""All-zero per-axis zero points share one array (issue 36): vww_96_int8's 10,944 B of them
become one `NAME_zero_points` of 256 zeros; each constant points into it with its own capacity.
Bit-exactness on the real library: tests/emit/test_runtime_models.py and the fast-memory runtime
tests (channel slices move the pointer inside it)."""

from __future__ import annotations

import json
import re

from tests.support.cli import run_main
from tests.support.paths import shared_path


def test_vww_constants_point_into_one_shared_array(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, out, err = run_main(["convert", model, "-o", tmp_path, "--json"], capsys)
    assert code == 0, err
    c_text = (tmp_path / "vww_96_int8.c").read_text()
    manifest = json.loads((tmp_path / "vww_96_int8.json").read_text())
    per_axis = [
        t
        for t in manifest["tensors"]
        if t["params"].get("dim", -1) >= 0 and t["role"] != "activation"
    ]
    channels = [len(t["params"]["zero_point"]) for t in per_axis]
    assert all(not any(t["params"]["zero_point"]) for t in per_axis)
    assert 2 * sum(channels) == 10944 and max(channels) == 256
    assert re.findall(r"static const int16_t (\w+)\[(\d+)\] = \{ 0 \};", c_text) == [
        ("vww_96_int8_zero_points", "256")
    ]
    assert "_zp[" not in c_text  # no array of its own
    pointers = re.findall(
        r"\.zero_point = \{ \.capacity = (\d+)u, \.mem = \{ \.pi16 = \(int16_t \*\)(\w+) \} \}",
        c_text,
    )
    assert sorted(int(c) for c, _ in pointers) == sorted(2 * n for n in channels)
    assert {p for _, p in pointers} == {"vww_96_int8_zero_points"}
    fp = json.loads(out)["footprint"]
    assert fp["rom"]["constants"] == 251244 - 10944 + 512  # the arrays before, less, plus one
    assert manifest["totals"]["param_bytes"] == 2 * 5472 + 5472 + 512  # scales, frac bits, zeros
