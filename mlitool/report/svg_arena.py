"""The arena plan chart (kind "intervals") as SVG: each buffer a rectangle over the layers it
lives (x) at its byte offsets (y), coloured by the kind of layer that writes it."""

from __future__ import annotations

import math

from mlitool.report.document import Chart
from mlitool.report.svg import (
    LEFT,
    LEGEND_PX,
    PALETTE,
    RIGHT,
    Frame,
    Linear,
    esc,
    line,
    px,
)

# Arena plans: one fixed colour per kind of layer that writes a buffer (legend in this order).
GROUP_COLOURS = {
    "input": "#4D4D4D",
    "conv": "#0072B2",
    "depthwise": "#56B4E9",
    "pooling": "#009E73",
    "fc": "#E69F00",
    "eltwise": "#CC79A7",
    "activation": "#F0E442",
    "recurrent": "#D55E00",
    "data movement": "#8C6D31",
    "fallback": "#E41A1C",
    "staging": "#B3B3B3",
    "tables": "#7F3C8D",
}
OTHER_COLOUR = "#7F7F7F"


def intervals_svg(chart: Chart) -> str:
    """An arena plan: each buffer a rectangle over the layers it lives (x) at its byte offsets
    (y), the way people draw a memory plan; coloured by group, with the lower-bound lines."""
    first, last, offset, size = (s.values for s in chart.series)
    n_layers = max(int(max(last, default=0)) + 1, chart.layers)
    top = max((o + b for o, b in zip(offset, size)), default=0)
    top = max([top, *(v for v, _ in chart.lines)])
    fr = Frame(chart, n_layers, Linear(0.0, float(top)))
    fr.narrow(n_layers, 900)
    fr.axes()
    for i, name in enumerate(chart.categories):
        x0, x1 = fr.x(first[i]), fr.x(last[i] + 1)
        y0, y1 = fr.y(offset[i] + size[i]), fr.y(offset[i])
        tip = (
            f"{name}: {int(size[i]):,} B at offset {int(offset[i]):,}, layers "
            f"{int(first[i])}\u2013{int(last[i])}"
        )
        if chart.groups:
            colour = GROUP_COLOURS.get(chart.groups[i], OTHER_COLOUR)
            tip += f" ({chart.groups[i]})"
        else:
            colour = PALETTE[i % len(PALETTE)]
        fr.add(
            f'<rect class="buffer" x="{px(x0 + 0.5)}" y="{px(y0)}" width="{px(x1 - x0 - 1)}" '
            f'height="{px(max(y1 - y0, 0.5))}" fill="{colour}" '
            f'fill-opacity="0.8" stroke="#fff"><title>{esc(tip)}</title></rect>'
        )
    for v, label in chart.lines:  # above the buffers, labelled inside the plot
        y = fr.y(v)
        fr.add(line("bound", LEFT, y, LEFT + fr.plot_w, y))
        fr.add(f'<text class="legend" x="{px(LEFT + 4)}" y="{px(y - 4)}">{esc(label)}</text>')
        fr.fit(LEFT + 4 + LEGEND_PX * len(label))
    step = max(1, math.ceil(n_layers / 20))
    for k in range(0, n_layers, step):
        fr.x_tick(fr.x(k + 0.5), k)
    _group_legend(
        fr,
        [g for g in GROUP_COLOURS if g in chart.groups]
        + sorted({g for g in chart.groups if g not in GROUP_COLOURS}),
    )
    return fr.svg()


def _group_legend(fr: Frame, groups: list[str]) -> None:
    """The groups' colours above the plot, in rows as wide as the plot (or the title, when
    that is wider), two at most: the chart widens for the rest (between title and plot)."""
    widths = [24 + LEGEND_PX * len(g) for g in groups]
    right = max(LEFT + fr.plot_w, fr.width - RIGHT, LEFT + sum(widths) / 2 + max(widths, default=0))
    x, y = LEFT, 30
    for g, w in zip(groups, widths):
        if x > LEFT and x + w > right:
            x, y = LEFT, y + 14
        fr.add(
            f'<rect x="{px(x)}" y="{px(y)}" width="10" height="10" '
            f'fill="{GROUP_COLOURS.get(g, OTHER_COLOUR)}"/>'
        )
        fr.add(f'<text class="legend" x="{px(x + 14)}" y="{px(y + 9)}">{esc(g)}</text>')
        fr.fit(x + 14 + LEGEND_PX * len(g))
        x += w
