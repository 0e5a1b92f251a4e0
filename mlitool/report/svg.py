"""Charts of a report as inline SVG: no scripts, no external references, text escaped.

Every chart has a title, a y axis with ticks and a label, category (or bin) labels on the x axis
and, when it has several series, a legend. Non-finite values are marked, not dropped silently:
+inf draws a bar to the top of the axis labelled "inf" (e.g. an SNR of identical outputs),
-inf a bar to the bottom labelled "-inf", NaN / missing values a "n/a" mark at the baseline.
Each bar carries a <title> with its exact value (a tooltip in browsers). Coordinates are written
with two decimals, so the same chart always gives the same bytes.

Past PAGE_SLOTS categories (layers) a bar, stacked or range chart is drawn as several SVGs of
about equal size, all on the scale of the whole chart (`chart_svgs`), so each fits the report's
column, no layer is hidden and a large layer on one part does not make another look empty.
A chart's `lines` (thresholds) are dashed lines across the plot, labelled, inside the scale.
"""

from __future__ import annotations

import math
from dataclasses import replace
from html import escape

from mlitool.report.document import Chart, Series, format_float

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442")
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
LEFT, RIGHT, TOP, BOTTOM = 78, 24, 64, 126  # margins around the plot area
HIST_BOTTOM = 52  # histograms: bin edges are not rotated
PLOT_H = 220
MIN_GROUP_W = 22
# Categories on one chart: 48 x 22 px + margins = 1,158 px, within the HTML's 1,168 px column.
PAGE_SLOTS = 48
LABEL_CHARS = 22
# Text widths per character, a little over the average of a sans-serif font at the CSS sizes
# (title 14px bold, labels 12px, legend 11px): the SVG is made wide enough for its text.
TITLE_PX, LABEL_PX, LEGEND_PX = 9.0, 7.5, 7.0


def _f(x: float) -> str:
    s = f"{x:.2f}"
    return "0.00" if s == "-0.00" else s


def _e(text) -> str:
    return escape(str(text), quote=True)


def _line(cls: str, x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line class="{cls}" x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}"/>'


def _grouped(v: float, decimals: int) -> str:
    """A tick value with thousands separators (65,536), as the tables write integers."""
    s = f"{v:,.{decimals}f}"
    return s[1:] if s.startswith("-") and not s.strip("-0.,") else s  # no "-0.0"


def _finite(values) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


# --- scales ------------------------------------------------------------------------------------


def _nice_step(span: float, count: int = 5) -> float:
    raw = span / count
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


class _Linear:
    def __init__(self, lo: float, hi: float, whole: bool = False):
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        if hi - lo <= 0:
            hi = lo + 1.0
        self.step = _nice_step(hi - lo)
        if whole:  # counts (bytes, LSB): no tick between two integers
            self.step = max(self.step, 1.0)
        self.lo = math.floor(lo / self.step + 1e-9) * self.step
        self.hi = math.ceil(hi / self.step - 1e-9) * self.step
        self.decimals = max(0, -math.floor(math.log10(self.step) + 1e-9)) if self.step < 1 else 0
        if round(self.step * 10**self.decimals, 6) % 1:  # steps like 2.5
            self.decimals += 1

    def frac(self, v: float) -> float:
        return (v - self.lo) / (self.hi - self.lo)

    def ticks(self) -> list[tuple[float, str]]:
        n = int(round((self.hi - self.lo) / self.step))
        return [
            (self.lo + i * self.step, _grouped(self.lo + i * self.step, self.decimals))
            for i in range(n + 1)
        ]

    @property
    def base(self) -> float:
        return 0.0


class _Log:
    def __init__(self, lo: float, hi: float):
        self.e0 = math.floor(math.log10(lo))
        self.e1 = max(math.ceil(math.log10(hi)), self.e0 + 1)

    def frac(self, v: float) -> float:
        if v <= 0:
            return 0.0
        return (math.log10(v) - self.e0) / (self.e1 - self.e0)

    def ticks(self) -> list[tuple[float, str]]:
        step = max(1, (self.e1 - self.e0 + 7) // 8)
        return [(10.0**e, _pow10(e)) for e in range(self.e0, self.e1 + 1, step)]

    @property
    def base(self) -> float:
        return 10.0**self.e0


def _pow10(e: int) -> str:
    return f"1e{e}" if abs(e) >= 4 else _grouped(10.0**e, max(0, -e))


def _scale(chart: Chart, values: list[float]):
    fin = _finite([*values, *(v for v, _ in chart.lines)])  # a threshold stays in view
    if chart.log_y:
        pos = [v for v in fin if v > 0]
        return _Log(min(pos), max(pos)) if pos else _Log(1.0, 10.0)
    return _Linear(min(fin, default=0.0), max(fin, default=0.0), whole=chart.precision == 0)


# --- frame -------------------------------------------------------------------------------------


class _Frame:
    def __init__(self, chart: Chart, n_slots: int, scale):
        self.chart, self.scale = chart, scale
        self.slot = max(MIN_GROUP_W, min(64, 640 / max(n_slots, 1)))
        self.plot_w = self.slot * max(n_slots, 1)
        self.width = LEFT + self.plot_w + RIGHT
        self.height = TOP + PLOT_H + BOTTOM
        self.parts: list[str] = []
        self.shift = 0.0  # px the drawing moves right so that no category label is cut

    def y(self, v: float) -> float:
        return TOP + PLOT_H * (1.0 - min(max(self.scale.frac(v), 0.0), 1.0))

    def x(self, i: float) -> float:
        return LEFT + i * self.slot

    def add(self, s: str) -> None:
        self.parts.append(s)

    def fit(self, right: float) -> None:
        """Widen the chart so that text ending at x = `right` is not clipped."""
        self.width = max(self.width, right + RIGHT)

    def narrow(self, n_slots: int, plot_width: float) -> None:
        """Slots of 4..24 px over about `plot_width`, and a short bottom (unrotated labels)."""
        self.slot = max(4.0, min(24.0, plot_width / max(n_slots, 1)))
        self.plot_w = self.slot * max(n_slots, 1)
        self.width = LEFT + self.plot_w + RIGHT
        self.height = TOP + PLOT_H + HIST_BOTTOM

    def axes(self) -> None:
        c = self.chart
        for v, label in self.scale.ticks():
            y = self.y(v)
            self.add(_line("grid", LEFT, y, LEFT + self.plot_w, y))
            self.add(
                f'<text class="tick" x="{_f(LEFT - 6)}" y="{_f(y + 4)}" '
                f'text-anchor="end">{_e(label)}</text>'
            )
        self.add(_line("axis", LEFT, TOP, LEFT, TOP + PLOT_H))
        self.add(_line("axis", LEFT, TOP + PLOT_H, LEFT + self.plot_w, TOP + PLOT_H))
        if c.y_label:
            yc = TOP + PLOT_H / 2
            self.add(
                f'<text class="label" x="16" y="{_f(yc)}" text-anchor="middle" '
                f'transform="rotate(-90 16 {_f(yc)})">{_e(c.y_label)}</text>'
            )
        if c.x_label:
            half = LABEL_PX * len(c.x_label) / 2
            xc = max(LEFT + self.plot_w / 2, half + 4)  # centred under the plot, or inside
            self.fit(xc + half)
            self.add(
                f'<text class="label" x="{_f(xc)}" '
                f'y="{_f(self.height - 8)}" text-anchor="middle">{_e(c.x_label)}</text>'
            )
        self.fit(LEFT + TITLE_PX * len(c.title))
        self.add(f'<text class="title" x="{_f(LEFT)}" y="20">{_e(c.title)}</text>')

    def category_labels(self, labels) -> None:
        for i, label in enumerate(labels):
            x, y = self.x(i + 0.5), TOP + PLOT_H + 12
            short = label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "\u2026"
            # rotated by 45 degrees, its start reaches left of the chart: shift the drawing right
            self.shift = max(self.shift, LABEL_PX * len(short) * 0.71 - x + 4)
            self.add(
                f'<text class="cat" x="{_f(x)}" y="{_f(y)}" text-anchor="end" '
                f'transform="rotate(-45 {_f(x)} {_f(y)})"><title>{_e(_named(self.chart, i))}'
                f"</title>{_e(short)}</text>"
            )

    def x_tick(self, x: float, label) -> None:
        """A label under the x axis at x (unrotated)."""
        self.add(
            f'<text class="tick" x="{_f(x)}" y="{_f(TOP + PLOT_H + 16)}" '
            f'text-anchor="middle">{_e(label)}</text>'
        )

    def legend(self, names) -> float:
        """Swatches of the series (when there are several); returns where the row ends."""
        x = LEFT
        if len(names) < 2:
            return x
        for i, name in enumerate(names):
            self.add(
                f'<rect x="{_f(x)}" y="30" width="10" height="10" '
                f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            )
            self.add(f'<text class="legend" x="{_f(x + 14)}" y="39">{_e(name)}</text>')
            self.fit(x + 14 + LEGEND_PX * len(name))
            x += 24 + LEGEND_PX * len(name)
        return x

    def thresholds(self, x: float) -> None:
        """Each of the chart's lines dashed across the plot, named in the legend row from x."""
        for value, label in self.chart.lines:
            y = self.y(value)
            self.add(_line("threshold", LEFT, y, LEFT + self.plot_w, y))
            self.add(_line("threshold", x, 35, x + 16, 35))
            self.add(f'<text class="legend" x="{_f(x + 20)}" y="39">{_e(label)}</text>')
            self.fit(x + 20 + LEGEND_PX * len(label))
            x += 30 + LEGEND_PX * len(label)

    def svg(self) -> str:
        c = self.chart
        self.width += max(self.shift, 0.0)
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{_e(c.id)}" '
            f'data-kind="{c.kind}" width="{_f(self.width)}" height="{_f(self.height)}" '
            f'viewBox="0 0 {_f(self.width)} {_f(self.height)}" role="img" '
            f'aria-label="{_e(c.title)}">'
        )
        body = "".join(self.parts)
        if self.shift > 0:
            body = f'<g transform="translate({_f(self.shift)} 0)">{body}</g>'
        return head + f"<title>{_e(c.title)}</title>" + body + "</svg>"


def _named(chart: Chart, i: int) -> str:
    """Category i as tooltips name it: with its note (the layer's C symbol) when there is one."""
    cat = chart.categories[i]
    return f"{cat} ({chart.notes[i]})" if chart.notes and chart.notes[i] else cat


def _value_text(chart: Chart, v: float | None) -> str:
    return "n/a" if v is None else format_float(v, chart.precision)


def _bar(fr: _Frame, x: float, w: float, v: float | None, color: str, tip: str) -> None:
    """One bar from the baseline to `v`, with the non-finite cases marked."""
    base_y = fr.y(fr.scale.base)
    if v is None or math.isnan(v):
        fr.add(
            f'<text class="mark" x="{_f(x + w / 2)}" y="{_f(base_y - 3)}" '
            f'text-anchor="middle"><title>{_e(tip)}</title>n/a</text>'
        )
        return
    top = fr.y(v) if math.isfinite(v) else (TOP if v > 0 else TOP + PLOT_H)
    y0, y1 = min(base_y, top), max(base_y, top)
    fr.add(
        f'<rect x="{_f(x)}" y="{_f(y0)}" width="{_f(w)}" height="{_f(max(y1 - y0, 0.5))}" '
        f'fill="{color}"><title>{_e(tip)}</title></rect>'
    )
    if not math.isfinite(v):
        ty = TOP - 3 if v > 0 else TOP + PLOT_H + 10
        fr.add(
            f'<text class="mark" x="{_f(x + w / 2)}" y="{_f(ty)}" text-anchor="middle">'
            f"{'inf' if v > 0 else '-inf'}</text>"
        )


# --- kinds -------------------------------------------------------------------------------------


def _bars_scale(chart: Chart):
    return _scale(chart, [v for s in chart.series for v in s.values])


def _bars(chart: Chart, scale=None) -> str:
    fr = _Frame(chart, len(chart.categories), scale or _bars_scale(chart))
    fr.axes()
    k = max(len(chart.series), 1)
    w = (fr.slot - 6) / k
    for i in range(len(chart.categories)):
        for j, s in enumerate(chart.series):
            v = s.values[i]
            tip = f"{_named(chart, i)} \u2014 {s.name}: {_value_text(chart, v)}"
            _bar(fr, fr.x(i) + 3 + j * w, w, v, PALETTE[j % len(PALETTE)], tip)
    fr.category_labels(chart.categories)
    fr.thresholds(fr.legend([s.name for s in chart.series]))
    return fr.svg()


def _stacked_scale(chart: Chart):
    totals = [
        sum(
            max(s.values[i] or 0.0, 0.0)
            for s in chart.series
            if s.values[i] is None or math.isfinite(s.values[i])
        )
        for i in range(len(chart.categories))
    ]
    return _Linear(0.0, max([*totals, *(v for v, _ in chart.lines)], default=0.0))


def _stacked(chart: Chart, scale=None) -> str:
    fr = _Frame(chart, len(chart.categories), scale or _stacked_scale(chart))
    fr.axes()
    for i in range(len(chart.categories)):
        acc = 0.0
        for j, s in enumerate(chart.series):
            v = s.values[i]
            if v is None or not math.isfinite(v) or v <= 0:
                continue
            y0, y1 = fr.y(acc + v), fr.y(acc)
            tip = f"{_named(chart, i)} \u2014 {s.name}: {_value_text(chart, v)}"
            fr.add(
                f'<rect x="{_f(fr.x(i) + 3)}" y="{_f(y0)}" width="{_f(fr.slot - 6)}" '
                f'height="{_f(max(y1 - y0, 0.5))}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{_e(tip)}</title></rect>"
            )
            acc += v
    fr.category_labels(chart.categories)
    fr.thresholds(fr.legend([s.name for s in chart.series]))
    return fr.svg()


def _range_scale(chart: Chart):
    lo_s, med_s, hi_s = chart.series
    return _scale(chart, list(lo_s.values) + list(hi_s.values) + list(med_s.values))


def _range(chart: Chart, scale=None) -> str:
    lo_s, med_s, hi_s = chart.series
    fr = _Frame(chart, len(chart.categories), scale or _range_scale(chart))
    fr.axes()
    for i in range(len(chart.categories)):
        lo, med, hi = lo_s.values[i], med_s.values[i], hi_s.values[i]
        xc = fr.x(i + 0.5)
        tip = (
            f"{_named(chart, i)} \u2014 min {_value_text(chart, lo)}, median {_value_text(chart, med)}, "
            f"max {_value_text(chart, hi)}"
        )
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
            fr.add(
                f'<text class="mark" x="{_f(xc)}" y="{_f(TOP + PLOT_H - 3)}" '
                f'text-anchor="middle"><title>{_e(tip)}</title>n/a</text>'
            )
            continue
        y_lo, y_hi = fr.y(lo), fr.y(hi)
        fr.add(
            f"<g><title>{_e(tip)}</title>"
            + _line("whisker", xc, y_lo, xc, y_hi)
            + _line("whisker", xc - 5, y_lo, xc + 5, y_lo)
            + _line("whisker", xc - 5, y_hi, xc + 5, y_hi)
        )
        if med is not None and math.isfinite(med):
            fr.add(f'<circle cx="{_f(xc)}" cy="{_f(fr.y(med))}" r="3.5" fill="{PALETTE[1]}"/>')
        fr.add("</g>")
    fr.category_labels(chart.categories)
    fr.add(
        f'<line class="whisker" x1="{_f(LEFT)}" y1="35" x2="{_f(LEFT + 12)}" y2="35"/>'
        f'<text class="legend" x="{_f(LEFT + 16)}" y="39">min \u2013 max</text>'
        f'<circle cx="{_f(LEFT + 110)}" cy="35" r="3.5" fill="{PALETTE[1]}"/>'
        f'<text class="legend" x="{_f(LEFT + 118)}" y="39">median</text>'
    )
    fr.fit(LEFT + 118 + LEGEND_PX * len("median"))
    fr.thresholds(LEFT + 128 + LEGEND_PX * len("median"))
    return fr.svg()


def _histogram(chart: Chart) -> str:
    counts = chart.series[0].values
    n = len(counts)
    fr = _Frame(chart, n, _Linear(0.0, max(_finite(counts), default=0.0)))
    fr.narrow(n, 480)
    fr.axes()
    edges = chart.bin_edges
    for i, v in enumerate(counts):
        tip = (
            f"[{format_float(edges[i], chart.precision)}, "
            f"{format_float(edges[i + 1], chart.precision)}): {_value_text(chart, v)}"
        )
        _bar(fr, fr.x(i), fr.slot, v, PALETTE[0], tip)
    marks = sorted({0, n // 2, n}) if n else []
    for i in marks:
        x = fr.x(i)
        fr.add(_line("axis", x, TOP + PLOT_H, x, TOP + PLOT_H + 4))
        fr.x_tick(x, format_float(edges[i], chart.precision))
    return fr.svg()


def _intervals(chart: Chart) -> str:
    """An arena plan: each buffer a rectangle over the layers it lives (x) at its byte offsets
    (y), the way people draw a memory plan; coloured by group, with the lower-bound lines."""
    first, last, offset, size = (s.values for s in chart.series)
    n_layers = max(int(max(last, default=0)) + 1, chart.layers)
    top = max((o + b for o, b in zip(offset, size)), default=0)
    top = max([top, *(v for v, _ in chart.lines)])
    fr = _Frame(chart, n_layers, _Linear(0.0, float(top)))
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
            f'<rect class="buffer" x="{_f(x0 + 0.5)}" y="{_f(y0)}" width="{_f(x1 - x0 - 1)}" '
            f'height="{_f(max(y1 - y0, 0.5))}" fill="{colour}" '
            f'fill-opacity="0.8" stroke="#fff"><title>{_e(tip)}</title></rect>'
        )
    for v, label in chart.lines:  # above the buffers, labelled inside the plot
        y = fr.y(v)
        fr.add(_line("bound", LEFT, y, LEFT + fr.plot_w, y))
        fr.add(f'<text class="legend" x="{_f(LEFT + 4)}" y="{_f(y - 4)}">{_e(label)}</text>')
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


def _group_legend(fr: _Frame, groups: list[str]) -> None:
    """The groups' colours above the plot, in rows as wide as the plot (or the title, when
    that is wider), two at most: the chart widens for the rest (between title and plot)."""
    widths = [24 + LEGEND_PX * len(g) for g in groups]
    right = max(LEFT + fr.plot_w, fr.width - RIGHT, LEFT + sum(widths) / 2 + max(widths, default=0))
    x, y = LEFT, 30
    for g, w in zip(groups, widths):
        if x > LEFT and x + w > right:
            x, y = LEFT, y + 14
        fr.add(
            f'<rect x="{_f(x)}" y="{_f(y)}" width="10" height="10" '
            f'fill="{GROUP_COLOURS.get(g, OTHER_COLOUR)}"/>'
        )
        fr.add(f'<text class="legend" x="{_f(x + 14)}" y="{_f(y + 9)}">{_e(g)}</text>')
        fr.fit(x + 14 + LEGEND_PX * len(g))
        x += w


_KINDS = {
    "bars": _bars,
    "stacked": _stacked,
    "range": _range,
    "histogram": _histogram,
    "intervals": _intervals,
}


_PAGED = {"bars": _bars_scale, "stacked": _stacked_scale, "range": _range_scale}


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
