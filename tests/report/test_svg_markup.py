"""The exact SVG elements of the axes, whiskers and x-axis ticks, worked out by hand from the
layout: plot area from x = 78 (left margin), y = 64 (top) to 284 (64 + 220 px); two decimals."""

from __future__ import annotations

from mlitool.report.chart_pages import chart_svg
from mlitool.report.document import Chart, Series


def test_range_chart_axes_grid_and_whiskers():
    # y from 0 to 10 in steps of 2: y(v) = 284 - 22 v; one category 64 px wide, centred at 110.
    chart = Chart(
        "r",
        "R",
        "range",
        ("a",),
        (Series("min", (0,)), Series("median", (5,)), Series("max", (10,))),
    )
    svg = chart_svg(chart)
    for element in (
        '<line class="grid" x1="78.00" y1="240.00" x2="142.00" y2="240.00"/>',
        '<line class="axis" x1="78.00" y1="64.00" x2="78.00" y2="284.00"/>',
        '<line class="axis" x1="78.00" y1="284.00" x2="142.00" y2="284.00"/>',
        '<line class="whisker" x1="110.00" y1="284.00" x2="110.00" y2="64.00"/>'
        '<line class="whisker" x1="105.00" y1="284.00" x2="115.00" y2="284.00"/>'
        '<line class="whisker" x1="105.00" y1="64.00" x2="115.00" y2="64.00"/>',
        '<circle cx="110.00" cy="174.00" r="3.5" fill="#E69F00"/>',
    ):
        assert element in svg, element


def test_histogram_and_interval_ticks_under_the_x_axis():
    # Histogram: 2 bins of 24 px from x = 78; a 4 px tick and its edge label 16 px below the axis.
    hist = Chart(
        "h",
        "H",
        "histogram",
        ("b0", "b1"),
        (Series("n", (1, 3)),),
        precision=2,
        bin_edges=(0, 0.5, 1),
    )
    svg = chart_svg(hist)
    for x, label in (("78.00", "0.00"), ("102.00", "0.50"), ("126.00", "1.00")):
        assert (
            f'<line class="axis" x1="{x}" y1="284.00" x2="{x}" y2="288.00"/>'
            f'<text class="tick" x="{x}" y="300.00" text-anchor="middle">{label}</text>'
        ) in svg
    # Arena plan: one layer of 24 px, its number centred under it at 78 + 12.
    plan = Chart(
        "p",
        "P",
        "intervals",
        ("buf",),
        tuple(Series(n, (v,)) for n, v in (("first", 0), ("last", 0), ("offset", 0), ("size", 8))),
    )
    assert '<text class="tick" x="90.00" y="300.00" text-anchor="middle">0</text>' in chart_svg(
        plan
    )
