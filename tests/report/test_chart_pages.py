"""Charts that fit (issue 25): per-layer charts past PAGE_SLOTS layers in parts on one scale,
threshold lines where the user's thresholds are, the C symbols `convert` emits beside the layers,
and table text never cut. The layout figures are worked out by hand: plot area from x = 78,
y = 64 to 284 (220 px)."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace

import pytest

from mlitool.convert import EmitOptions, convert
from mlitool.pipeline import ModelOptions
from mlitool.report.chart_pages import chart_svgs
from mlitool.report.command import ReportOptions, make_report
from mlitool.report.document import Chart, Column, Report, Section, Series, make_table
from mlitool.report.html import render_html
from mlitool.report.render import render_markdown
from tests.support.paths import SAMPLES


def _ticks(svg: str) -> list[str]:
    return re.findall(r'<text class="tick" [^>]*text-anchor="end">([^<]*)</text>', svg)


def test_65_layers_are_two_parts_on_the_scale_of_the_whole_chart():
    # One big layer at the end (a classifier's weights): part 1 keeps its scale, 0 to 1,000.
    values = [10] * 64 + [1000]
    chart = Chart(
        "rom",
        "ROM per layer",
        "bars",
        [f"{i}: conv2d" for i in range(65)],
        (Series("bytes", values),),
        x_label="layer",
        precision=0,
    )
    one, two = chart_svgs(chart)
    assert one.count('<text class="cat"') == 33 and two.count('<text class="cat"') == 32
    assert ">32: conv2d<" in one and ">33: conv2d<" in two and ">64: conv2d<" in two
    assert _ticks(one) == _ticks(two) == ["0", "200", "400", "600", "800", "1,000"]
    assert ">ROM per layer (part 1 of 2: 33 of 65 layers, one y scale)<" in one
    assert 'data-chart="rom" data-part="2"' in two
    # 33 slots of 22 px: 78 + 726 + 24 = 828 px wide, within the 1,168 px column
    assert 'width="828.00"' in one
    first48 = replace(chart, categories=chart.categories[:48], series=(Series("b", values[:48]),))
    assert len(chart_svgs(first48)) == 1


def test_threshold_line_across_the_plot_and_in_the_legend():
    # Values 0..10 and a line at 30: the scale reaches 30 (step 5), y(30) = 64, y(10) = 210.67.
    chart = Chart(
        "snr",
        "SNR",
        "bars",
        ("0: conv2d", "1: conv2d"),
        (Series("chained", (0, 10)), Series("isolated", (5, 10))),
        lines=((30, "--min-snr 30 dB"),),
    )
    (svg,) = chart_svgs(chart)
    # two 64 px slots: the plot from x = 78 to 206
    assert '<line class="threshold" x1="78.00" y1="64.00" x2="206.00" y2="64.00"/>' in svg
    assert _ticks(svg)[-1] == "30"
    # legend (7 px a character): chained at 78, isolated at 78 + 24 + 49 = 151, the line at
    # 151 + 24 + 56 = 231, its label 20 px further
    assert '<line class="threshold" x1="231.00" y1="35.00" x2="247.00" y2="35.00"/>' in svg
    assert '<text class="legend" x="251.00" y="39">--min-snr 30 dB</text>' in svg


@pytest.fixture(scope="module")
def renamed(tmp_path_factory):
    """cnn_int8 as `cnn-int8.v2.tflite`: convert names its C symbols cnn_int8_v2_..."""
    d = tmp_path_factory.mktemp("model")
    path = d / "cnn-int8.v2.tflite"
    shutil.copy(SAMPLES / "cnn_int8.tflite", path)
    return path


def test_thresholds_the_user_set_are_drawn(renamed):
    given = make_report(renamed, ModelOptions(), ReportOptions(samples=1, min_snr=20, max_lsb=3))
    charts = {c.id: c for _, c in given.charts()}
    assert charts["snr-layers"].lines == ((20.0, "--min-snr 20 dB"),)
    assert charts["lsb-layers"].lines == ((3.0, "--max-lsb 3"),)
    html = render_html(given)
    assert html.count('<line class="threshold"') == 4  # two charts: across the plot, legend
    default = make_report(renamed, ModelOptions(), ReportOptions(samples=1))
    charts = {c.id: c for _, c in default.charts()}
    assert charts["snr-layers"].lines == ((30.0, "--min-snr-flag 30 dB"),)
    assert charts["lsb-layers"].lines == ()


def test_layers_carry_the_c_symbols_convert_declares(renamed, tmp_path):
    report = make_report(renamed, ModelOptions(), ReportOptions(samples=1))
    convert(renamed, ModelOptions(), EmitOptions(out=tmp_path))
    header = (tmp_path / "cnn_int8_v2.h").read_text()
    declared = set(re.findall(r"^extern mli_tensor (\w+);", header, re.M))
    symbols = report.table("accuracy-layers").column("c_symbol")
    assert symbols[0] == "cnn_int8_v2_L0_conv_out" and symbols[-1] == "cnn_int8_v2_L8_softmax_out"
    assert len(symbols) == 9 and set(symbols) <= declared
    assert report.table("rom-layers").column("c_symbol") == symbols  # one row per MLI layer
    sens = report.table("sensitivity")
    assert sens.column("c_symbol") == [symbols[p] for p in sens.column("layer")]
    html, md = render_html(report), render_markdown(report)
    assert "<th>C symbol</th>" in html and "cnn_int8_v2_L7_fc_out" in html
    assert "| cnn\\_int8\\_v2\\_L7\\_fc\\_out |" in md
    snr = next(c for _, c in report.charts() if c.id == "snr-layers")
    assert snr.notes == tuple(symbols)
    assert "<title>7: fully_connected (cnn_int8_v2_L7_fc_out) \u2014 chained: " in html
    assert "c_symbol" not in [c.key for c in report.table("quant-tensors").columns]  # tensors


def test_remedies_and_reasons_are_never_cut_in_html():
    remedy = "fx16 (op 10), rescaled weights or FULL_ACCU"
    why = "softmax writes fixed output parameters into its output tensor, " * 2
    table = make_table(
        "t", "T", [("remedy", "Remedy"), Column("why", "Why")], [(remedy, why.strip())]
    )
    html = render_html(Report("r", (), (Section("s", "S", (), (table,)),)))
    assert f">{remedy}</td>" in html and f">{why.strip()}</td>" in html and "\u2026" not in html
