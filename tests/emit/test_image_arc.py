"""The footprint is the image that links (issue 36): the MLPerf Tiny models converted for ARC HS,
cross-linked with the real MLI 2.0.2 and a main that runs them once (tests/support/arc_image.py,
Debian gcc-12-arc-linux-gnu), and the map's bytes against every part the footprint names.

Skips without the cross compiler; fails when CI is set (.ci/run installs it)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support import arc_image
from tests.support.cli import run_main
from tests.support.paths import in_ci, shared_path

MODELS = ("vww_96_int8", "resnet8_int8", "kws_ref_model_int8")


@pytest.fixture(scope="module")
def arc():
    try:
        arc_image.build_mli()
    except arc_image.ArcUnavailable as e:
        if in_ci():
            pytest.fail(f"{e}; CI is set and .ci/run installs the ARC cross compiler")
        pytest.skip(str(e))


@pytest.mark.parametrize("name", MODELS)
def test_footprint_within_3_percent_of_the_linked_image(arc, name, tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", f"{name}.tflite")
    code, out, err = run_main(
        ["convert", model, "--target", "em", "-o", tmp_path, "--json"], capsys
    )
    assert code == 0, err
    fp = json.loads(out)["footprint"]
    linked = arc_image.link_model(tmp_path, name, tmp_path)
    m, mli, arena = linked["model"], linked["mli"], linked["main"]["bss"]
    linked_rom = m["text"] + m["rodata"] + m["data"] + mli["text"] + mli["rodata"] + mli["data"]
    linked_ram = arena + m["data"] + m["bss"]
    assert abs(fp["rom_bytes"] - linked_rom) <= 0.03 * linked_rom
    assert abs(fp["ram_bytes"] - linked_ram) <= 0.03 * linked_ram
    # part by part: data exactly, .bss up to its alignment fill, code as measured / estimated
    assert fp["rom"]["constants"] + fp["rom"]["lut_tables"] == m["rodata"]
    assert fp["rom"]["writable_structs"] == fp["ram"]["writable_structs"] == m["data"]
    assert 0 <= m["bss"] - fp["ram"]["bss"] < 4
    assert fp["ram"]["arena_bytes"] == arena
    assert abs(fp["rom"]["mli_code"] - (mli["text"] + mli["rodata"] + mli["data"])) <= 0.01 * (
        mli["text"] + mli["rodata"]
    )
    assert abs(fp["rom"]["model_code"] - m["text"]) <= 0.1 * m["text"]
    assert fp["mli_functions"] == arc_image.undefined_mli(tmp_path / f"{name}.o")


@pytest.mark.parametrize(
    ("name", "budget"), [("vww_96_int8", "64K"), ("kws_ref_model_int8", "16K")]
)
def test_fast_memory_footprint_within_3_percent(arc, name, budget, tmp_path, capsys):
    """--fast-memory: fast + slow buffers, the runtime's statics and its larger code."""
    model = shared_path("models", "mlperf_tiny", f"{name}.tflite")
    args = ["convert", model, "--target", "em", "--fast-memory", budget, "-o", tmp_path, "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    fp = json.loads(out)["footprint"]
    linked = arc_image.link_model(tmp_path, name, tmp_path, fast=True)
    m, mli = linked["model"], linked["mli"]
    header = (tmp_path / f"{name}.h").read_text()
    buffers = sum(
        int(re.search(rf"#define {name.upper()}_{which}_BYTES (\d+)u", header).group(1))
        for which in ("FAST", "SLOW")
    )
    # the main's buffers: one byte longer each, each aligned to 16 (fill before both)
    assert 2 <= linked["main"]["bss"] - buffers < 2 + 3 * 16
    assert buffers == fp["ram"]["fast_bytes"] + fp["ram"]["slow_bytes"]
    linked_rom = m["text"] + m["rodata"] + m["data"] + mli["text"] + mli["rodata"] + mli["data"]
    linked_ram = buffers + m["data"] + m["bss"]
    assert abs(fp["rom_bytes"] - linked_rom) <= 0.03 * linked_rom
    assert abs(fp["ram_bytes"] - linked_ram) <= 0.03 * linked_ram
    assert 0 <= m["bss"] - fp["ram"]["bss"] < 4
    assert fp["mli_functions"] == arc_image.undefined_mli(tmp_path / f"{name}.o")
