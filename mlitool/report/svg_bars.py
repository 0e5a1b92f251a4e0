"""Bar, stacked-bar, range (min / median / max) and histogram charts as SVG (`mlitool.report.svg`
draws their frame). The per-layer kinds take the scale to draw on, so that the parts of a long
chart (`mlitool.report.chart_pages`) share one."""

from __future__ import annotations

import math

from mlitool.report.document import Chart, format_float
from mlitool.report.svg import (
    LEFT,
    LEGEND_PX,
    PALETTE,
    PLOT_H,
    TOP,
    Frame,
    Linear,
    category_name,
    draw_bar,
    esc,
    finite,
    line,
    px,
    value_scale,
    value_text,
)


def bars_scale(chart: Chart):
    return value_scale(chart, [v for s in chart.series for v in s.values])


def bars_svg(chart: Chart, scale=None) -> str:
    fr = Frame(chart, len(chart.categories), scale or bars_scale(chart))
    fr.axes()
    k = max(len(chart.series), 1)
    w = (fr.slot - 6) / k
    for i in range(len(chart.categories)):
        for j, s in enumerate(chart.series):
            v = s.values[i]
            tip = f"{category_name(chart, i)} \u2014 {s.name}: {value_text(chart, v)}"
            draw_bar(fr, fr.x(i) + 3 + j * w, w, v, PALETTE[j % len(PALETTE)], tip)
    fr.category_labels(chart.categories)
    fr.thresholds(fr.legend([s.name for s in chart.series]))
    return fr.svg()


def stacked_scale(chart: Chart):
    totals = [
        sum(
            max(s.values[i] or 0.0, 0.0)
            for s in chart.series
            if s.values[i] is None or math.isfinite(s.values[i])
        )
        for i in range(len(chart.categories))
    ]
    return Linear(0.0, max([*totals, *(v for v, _ in chart.lines)], default=0.0))


def stacked_svg(chart: Chart, scale=None) -> str:
    fr = Frame(chart, len(chart.categories), scale or stacked_scale(chart))
    fr.axes()
    for i in range(len(chart.categories)):
        acc = 0.0
        for j, s in enumerate(chart.series):
            v = s.values[i]
            if v is None or not math.isfinite(v) or v <= 0:
                continue
            y0, y1 = fr.y(acc + v), fr.y(acc)
            tip = f"{category_name(chart, i)} \u2014 {s.name}: {value_text(chart, v)}"
            fr.add(
                f'<rect x="{px(fr.x(i) + 3)}" y="{px(y0)}" width="{px(fr.slot - 6)}" '
                f'height="{px(max(y1 - y0, 0.5))}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{esc(tip)}</title></rect>"
            )
            acc += v
    fr.category_labels(chart.categories)
    fr.thresholds(fr.legend([s.name for s in chart.series]))
    return fr.svg()


def range_scale(chart: Chart):
    lo_s, med_s, hi_s = chart.series
    return value_scale(chart, list(lo_s.values) + list(hi_s.values) + list(med_s.values))


def range_svg(chart: Chart, scale=None) -> str:
    lo_s, med_s, hi_s = chart.series
    fr = Frame(chart, len(chart.categories), scale or range_scale(chart))
    fr.axes()
    for i in range(len(chart.categories)):
        lo, med, hi = lo_s.values[i], med_s.values[i], hi_s.values[i]
        xc = fr.x(i + 0.5)
        tip = (
            f"{category_name(chart, i)} \u2014 min {value_text(chart, lo)}, median {value_text(chart, med)}, "
            f"max {value_text(chart, hi)}"
        )
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
            fr.add(
                f'<text class="mark" x="{px(xc)}" y="{px(TOP + PLOT_H - 3)}" '
                f'text-anchor="middle"><title>{esc(tip)}</title>n/a</text>'
            )
            continue
        y_lo, y_hi = fr.y(lo), fr.y(hi)
        fr.add(
            f"<g><title>{esc(tip)}</title>"
            + line("whisker", xc, y_lo, xc, y_hi)
            + line("whisker", xc - 5, y_lo, xc + 5, y_lo)
            + line("whisker", xc - 5, y_hi, xc + 5, y_hi)
        )
        if med is not None and math.isfinite(med):
            fr.add(f'<circle cx="{px(xc)}" cy="{px(fr.y(med))}" r="3.5" fill="{PALETTE[1]}"/>')
        fr.add("</g>")
    fr.category_labels(chart.categories)
    fr.add(
        f'<line class="whisker" x1="{px(LEFT)}" y1="35" x2="{px(LEFT + 12)}" y2="35"/>'
        f'<text class="legend" x="{px(LEFT + 16)}" y="39">min \u2013 max</text>'
        f'<circle cx="{px(LEFT + 110)}" cy="35" r="3.5" fill="{PALETTE[1]}"/>'
        f'<text class="legend" x="{px(LEFT + 118)}" y="39">median</text>'
    )
    fr.fit(LEFT + 118 + LEGEND_PX * len("median"))
    fr.thresholds(LEFT + 128 + LEGEND_PX * len("median"))
    return fr.svg()


def histogram_svg(chart: Chart) -> str:
    counts = chart.series[0].values
    n = len(counts)
    fr = Frame(chart, n, Linear(0.0, max(finite(counts), default=0.0)))
    fr.narrow(n, 480)
    fr.axes()
    edges = chart.bin_edges
    for i, v in enumerate(counts):
        tip = (
            f"[{format_float(edges[i], chart.precision)}, "
            f"{format_float(edges[i + 1], chart.precision)}): {value_text(chart, v)}"
        )
        draw_bar(fr, fr.x(i), fr.slot, v, PALETTE[0], tip)
    marks = sorted({0, n // 2, n}) if n else []
    for i in marks:
        x = fr.x(i)
        fr.add(line("axis", x, TOP + PLOT_H, x, TOP + PLOT_H + 4))
        fr.x_tick(x, format_float(edges[i], chart.precision))
    return fr.svg()
