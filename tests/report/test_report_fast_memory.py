"""`report --fast-memory SIZE` (issue 24): the plan `convert --fast-memory` writes into its
manifest, in every form of the report (terminal, JSON, Markdown, HTML), the summary line's RAM as
fast + slow, and the arena charts: the fast buffer and the slow arena, buffers coloured by the
kind of layer that writes them, each with its lower bound drawn, checked against live bytes
counted here from the plan's lifetimes."""

from __future__ import annotations

import json
import re

import pytest

from mlitool.mli.kernels import LUT_LENGTHS
from mlitool.mli.memory.arena import activation_buffers, model_arena
from mlitool.mli.memory.placement import plan_model
from mlitool.pipeline import ModelOptions, load, settle
from mlitool.report.command import ReportOptions, make_report
from mlitool.report.html import render_html
from mlitool.report.render import render_json, render_markdown
from mlitool.report.svg_arena import GROUP_COLOURS
from tests.support import c_image
from tests.support.cli import run_main
from tests.support.paths import SAMPLES, shared_path

K = 1024


def _vww():
    return shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")


def _tables(doc: dict) -> dict:
    return {t["id"]: t for s in doc["sections"] for t in s["tables"]}


def _charts(doc: dict) -> dict:
    return {c["id"]: c for s in doc["sections"] for c in s["charts"]}


@pytest.mark.parametrize("budget", ["64K", "32K"])
def test_report_gives_the_plan_convert_writes(budget, tmp_path, capsys):
    model = _vww()
    code, _, err = run_main(
        ["convert", model, "-o", tmp_path, "--fast-memory", budget, "-q"], capsys
    )
    assert code == 0, err
    fm = json.loads((tmp_path / "vww_96_int8.json").read_text())["runtime"]["fast_memory"]
    args = ["report", model, "--fast-memory", budget, "--no-accuracy", "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    doc = json.loads(out)
    tables = _tables(doc)
    figures = {r["figure"]: r["value"] for r in tables["fast-memory"]["rows"]}
    for key in ("budget", "fast_bytes", "slow_bytes", "bytes_moved", "lower_bound_moved"):
        assert figures[key] == fm[key], key
    assert figures["tiled_layers"] == fm["tiled_layers"]
    assert figures["staging_bytes"] == fm["staging"]["bytes"]
    assert figures["budget"] == int(budget[:-1]) * K
    assert figures["fast_bytes"] <= figures["budget"]
    assert figures["lower_bound_moved"] <= figures["bytes_moved"]
    layers = tables["fast-memory-layers"]["rows"]
    assert [
        (r["position"], r["tiles"], r["bytes_moved"], r["constants_bytes"]) for r in layers
    ] == [(r["layer"], r["tiles"], r["bytes_moved"], r["constants_bytes"]) for r in fm["layers"]]
    assert sum(r["bytes_moved"] for r in layers) == figures["bytes_moved"]
    if budget == "32K":
        assert max(r["tiles"] for r in layers) > 1
    # the answers-first line: RAM as fast + slow + the structs and statics of the emitted C
    c_text = (tmp_path / "vww_96_int8.c").read_text()
    structs, bss = c_image.writable_structs(c_text), c_image.bss(c_text)
    ram = fm["fast_bytes"] + fm["slow_bytes"] + structs + bss
    assert (
        f"RAM {ram:,} B (fast {fm['fast_bytes']:,} + slow {fm['slow_bytes']:,} + structs "
        f"{structs:,} + bss {bss:,})" in (doc["meta"]["summary"])
    )
    assert doc["meta"]["fast_memory"] == int(budget[:-1]) * K
    # the buffers where the manifest puts them
    arena = {r["buffer"]: (r["memory"], r["offset"]) for r in tables["arena"]["rows"]}
    assert arena == {b["name"]: (b["memory"], b["offset"]) for b in fm["buffers"]}


def test_config_key_and_every_form(tmp_path, capsys, monkeypatch):
    (tmp_path / "mlitool.toml").write_text('fast_memory = "16K"\n')
    monkeypatch.chdir(tmp_path)
    args = ["report", SAMPLES / "cnn_int8.tflite", "--no-accuracy", "-o", "r"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    _, mli = load(SAMPLES / "cnn_int8.tflite", settle(ModelOptions()))
    plan = plan_model(mli, 16 * K)
    assert "fast buffer (NAME_FAST_BYTES)" in out and f"{plan.fast_bytes:,}" in out
    md = (tmp_path / "r" / "cnn_int8.report.md").read_text()
    assert (
        "Fast memory plan" in md
        and f"| bytes\\_moved | bytes moved per inference | {plan.bytes_moved:,} |" in md
    )
    html = (tmp_path / "r" / "cnn_int8.report.html").read_text()
    assert 'data-table="fast-memory"' in html and 'data-chart="arena-plan-slow"' in html
    csv = (tmp_path / "r" / "cnn_int8.csv" / "memory__fast-memory-layers.csv").read_text()
    assert csv.startswith("position,op_index,kind,c_symbol,tiles,constants_bytes,bytes_moved\n")


# --- the arena charts -----------------------------------------------------------------------


def _live_peak(intervals, layers: int, align: int) -> int:
    """Max over the layers of the aligned bytes of the (first, last, size) intervals alive."""
    peak = 0
    for t in range(layers):
        alive = [-(-size // align) * align for first, last, size in intervals if first <= t <= last]
        peak = max(peak, sum(alive))
    return peak


def _rects(html: str, chart: str) -> list[tuple[str, str]]:
    svg = html[html.index(f'data-chart="{chart}"') :]
    svg = svg[: svg.index("</svg>")]
    return re.findall(r'<rect class="buffer" [^>]*fill="(#[0-9A-F]{6})"[^>]*><title>([^<]*)<', svg)


def test_one_arena_chart_colours_and_lower_bound():
    path = SAMPLES / "cnn_int8.tflite"
    _, mli = load(path, settle(ModelOptions()))
    report = make_report(path, ModelOptions(), ReportOptions(accuracy=False))
    chart = _charts(json.loads(render_json(report)))["arena-plan"]
    bufs = activation_buffers(mli)
    align = model_arena(mli).align
    bound = _live_peak([(b.first, b.last, b.size) for b in bufs], len(mli.layers), align)
    # cnn_int8: conv1's 32x32x16 output read by the max pool that writes 16x16x16
    assert chart["lines"] == [
        {"value": bound, "label": f"lower bound: {bound:,} B (most bytes alive at once)"}
    ]
    assert bound == 16384 + 4096
    html = render_html(report)
    rects = _rects(html, "arena-plan")
    assert len(rects) == len(bufs)
    kinds = {}
    for la in mli.layers:
        for n in la.outputs:
            kinds.setdefault(n, la.kind)
    for fill, tip in rects:
        name = tip.split(": ")[0]
        kind = "input" if name in mli.inputs else kinds.get(name)
        group = {"conv2d": "conv", "maxpool": "pooling", "fully_connected": "fc"}.get(kind, kind)
        if group in GROUP_COLOURS:
            assert fill == GROUP_COLOURS[group], (name, kind)
    conv = [f for f, tip in rects if tip.endswith("(conv)")]
    assert conv and set(conv) == {"#0072B2"}
    svg = html[html.index('data-chart="arena-plan"') :]
    svg = svg[: svg.index("</svg>")]
    assert '<line class="bound"' in svg and ">conv</text>" in svg and ">pooling</text>" in svg


def test_fast_and_slow_charts_lower_bounds():
    path = _vww()
    _, mli = load(path, settle(ModelOptions()))
    plan = plan_model(mli, 32 * K)
    report = make_report(path, ModelOptions(fast_memory="32K"), ReportOptions(accuracy=False))
    charts = _charts(json.loads(render_json(report)))
    n = len(mli.layers)
    # fast: resident buffers over their lifetimes, each layer's staged operands at its own
    # step (up to the end of its last slot), the tables all along
    resident = [(p.buffer.first, p.buffer.last, p.buffer.size) for p in plan.resident.placements]
    staged = [
        (pos, pos, max(s.offset + s.bytes for s in st.slots) - plan.staging_offset)
        for pos, st in enumerate(plan.layers)
        if st.slots
    ]
    tables = [(0, n - 1, 2 * LUT_LENGTHS[k]) for k in plan.luts]
    fast = _live_peak(resident + staged + tables, n, plan.align)
    assert charts["arena-plan"]["lines"][0]["value"] == fast
    assert fast <= plan.fast_bytes
    slow = [(p.buffer.first, p.buffer.last, p.buffer.size) for p in plan.slow.placements]
    assert charts["arena-plan-slow"]["lines"][0]["value"] == _live_peak(slow, n, plan.align)
    assert charts["arena-plan"]["layers"] == charts["arena-plan-slow"]["layers"] == n
    groups = charts["arena-plan"]["groups"]
    assert groups.count("staging") == len(staged) and groups.count("tables") == 1
    html = render_html(report)
    assert len(_rects(html, "arena-plan-slow")) == len(plan.slow.placements)
    # the slow arena's rectangles: its buffers, at their offsets
    rows = {r[0]: r for r in report.table("arena").rows}
    for p in plan.slow.placements:
        assert rows[p.buffer.name][1:3] == ("slow", p.buffer.size)
    md = render_markdown(report)
    assert "chart" not in md or "Slow arena" in md


def _interval_chart(groups, line: float) -> str:
    from mlitool.report.chart_pages import chart_svg
    from mlitool.report.document import Chart, Series

    n = len(groups)
    values = {"first": [0] * n, "last": [1] * n, "offset": [10 * i for i in range(n)]}
    values["size"] = [10] * n
    series = tuple(Series(k, tuple(v)) for k, v in values.items())
    cats = tuple(f"b{i}" for i in range(n))
    return chart_svg(
        Chart("p", "P", "intervals", cats, series, groups=groups, lines=((line, "lb"),))
    )


def test_lower_bound_line_above_every_buffer():
    """A lower bound above every buffer still sits at its value on the y axis."""
    svg = _interval_chart(("conv",), 45000)
    y = float(re.search(r'<line class="bound" x1="[\d.]+" y1="([\d.]+)"', svg).group(1))
    assert y == 64 + 220 * (1 - 45000 / 50000)  # the axis ends at 50,000 (steps of 10,000)


def test_legend_of_every_kind_in_two_rows_over_a_narrow_plot():
    """Twelve layer kinds over a two-layer plot: the legend takes two rows above the plot
    (y 30 and 44, the plot starts at 64), the chart as wide as its longer row."""
    groups = tuple(GROUP_COLOURS)
    svg = _interval_chart(groups, 10)
    rows = re.findall(
        r'<rect x="([\d.]+)" y="([\d.]+)" width="10" height="10" fill="(#\w+)"/>', svg
    )
    assert [c for _, _, c in rows] == list(GROUP_COLOURS.values())
    assert sorted({float(y) for _, y, _ in rows}) == [30.0, 44.0]
    texts = re.findall(r'<text class="legend" x="([\d.]+)" y="(?:39|53).00">([^<]*)<', svg)
    width = float(re.search(r'width="([\d.]+)"', svg).group(1))
    assert max(float(x) + 7.0 * len(t) for x, t in texts) <= width - 24
