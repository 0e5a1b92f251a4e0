"""A report chart as SVG, of its kind: past PAGE_SLOTS categories (layers) a bar, stacked or
range chart is drawn as several SVGs of about equal size, all on the scale of the whole chart
(`chart_svgs`), so each fits the report's column, no layer is hidden and a large layer on one
part does not make another look empty."""

from __future__ import annotations

import math
from dataclasses import replace

from mlitool.report.document import Chart, Series
from mlitool.report.svg_arena import intervals_svg
from mlitool.report.svg_bars import (
    bars_scale,
    bars_svg,
    histogram_svg,
    range_scale,
    range_svg,
    stacked_scale,
    stacked_svg,
)

# Categories on one chart: 48 x 22 px + margins = 1,158 px, within the HTML's 1,168 px column.
PAGE_SLOTS = 48

_KINDS = {
    "bars": bars_svg,
    "stacked": stacked_svg,
    "range": range_svg,
    "histogram": histogram_svg,
    "intervals": intervals_svg,
}


_PAGED = {"bars": bars_scale, "stacked": stacked_scale, "range": range_scale}


def chart_svgs(chart: Chart) -> list[str]:
    """The chart as one SVG or, past PAGE_SLOTS categories, as parts of about equal size drawn
    on the scale of the whole chart; each part's title says which part it is."""
    n = len(chart.categories)
    if chart.kind not in _PAGED or n <= PAGE_SLOTS:
        return [_KINDS[chart.kind](chart)]
    scale = _PAGED[chart.kind](chart)
    parts = math.ceil(n / PAGE_SLOTS)
    size = math.ceil(n / parts)
    noun = f"{chart.x_label or 'categorie'}s"
    out = []
    for k, a in enumerate(range(0, n, size), 1):
        b = min(a + size, n)
        part = replace(
            chart,
            title=f"{chart.title} (part {k} of {parts}: {b - a} of {n} {noun}, one y scale)",
            categories=chart.categories[a:b],
            series=tuple(Series(s.name, s.values[a:b]) for s in chart.series),
            notes=chart.notes[a:b],
        )
        svg = _KINDS[chart.kind](part, scale)
        out.append(svg.replace(" data-kind=", f' data-part="{k}" data-kind=', 1))
    return out


def chart_svg(chart: Chart) -> str:
    return "".join(chart_svgs(chart))
