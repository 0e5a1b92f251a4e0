"""Charts of a report as inline SVG: no scripts, no external references, text escaped. This
module draws what every chart has (scales, axes, labels, legends, a bar); the kinds are drawn
by `svg_bars` and `svg_arena`, a chart is split into parts by `chart_pages`.

Every chart has a title, a y axis with ticks and a label, category (or bin) labels on the x axis
and, when it has several series, a legend. Non-finite values are marked, not dropped silently:
+inf draws a bar to the top of the axis labelled "inf" (e.g. an SNR of identical outputs),
-inf a bar to the bottom labelled "-inf", NaN / missing values a "n/a" mark at the baseline.
Each bar carries a <title> with its exact value (a tooltip in browsers). Coordinates are written
with two decimals, so the same chart always gives the same bytes.

A chart's `lines` (thresholds) are dashed lines across the plot, labelled, inside the scale.
"""

from __future__ import annotations

import math
from html import escape

from mlitool.report.document import Chart, format_float

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442")
LEFT, RIGHT, TOP, BOTTOM = 78, 24, 64, 126  # margins around the plot area
HIST_BOTTOM = 52  # histograms: bin edges are not rotated
PLOT_H = 220
MIN_GROUP_W = 22
LABEL_CHARS = 22
# Text widths per character, a little over the average of a sans-serif font at the CSS sizes
# (title 14px bold, labels 12px, legend 11px): the SVG is made wide enough for its text.
TITLE_PX, LABEL_PX, LEGEND_PX = 9.0, 7.5, 7.0


def px(x: float) -> str:
    s = f"{x:.2f}"
    return "0.00" if s == "-0.00" else s


def esc(text) -> str:
    return escape(str(text), quote=True)


def line(cls: str, x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line class="{cls}" x1="{px(x1)}" y1="{px(y1)}" x2="{px(x2)}" y2="{px(y2)}"/>'


def _grouped(v: float, decimals: int) -> str:
    """A tick value with thousands separators (65,536), as the tables write integers."""
    s = f"{v:,.{decimals}f}"
    return s[1:] if s.startswith("-") and not s.strip("-0.,") else s  # no "-0.0"


def finite(values) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


# --- scales ------------------------------------------------------------------------------------


def _nice_step(span: float, count: int = 5) -> float:
    raw = span / count
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


class Linear:
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


def value_scale(chart: Chart, values: list[float]):
    fin = finite([*values, *(v for v, _ in chart.lines)])  # a threshold stays in view
    if chart.log_y:
        pos = [v for v in fin if v > 0]
        return _Log(min(pos), max(pos)) if pos else _Log(1.0, 10.0)
    return Linear(min(fin, default=0.0), max(fin, default=0.0), whole=chart.precision == 0)


# --- frame -------------------------------------------------------------------------------------


class Frame:
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
            self.add(line("grid", LEFT, y, LEFT + self.plot_w, y))
            self.add(
                f'<text class="tick" x="{px(LEFT - 6)}" y="{px(y + 4)}" '
                f'text-anchor="end">{esc(label)}</text>'
            )
        self.add(line("axis", LEFT, TOP, LEFT, TOP + PLOT_H))
        self.add(line("axis", LEFT, TOP + PLOT_H, LEFT + self.plot_w, TOP + PLOT_H))
        if c.y_label:
            yc = TOP + PLOT_H / 2
            self.add(
                f'<text class="label" x="16" y="{px(yc)}" text-anchor="middle" '
                f'transform="rotate(-90 16 {px(yc)})">{esc(c.y_label)}</text>'
            )
        if c.x_label:
            half = LABEL_PX * len(c.x_label) / 2
            xc = max(LEFT + self.plot_w / 2, half + 4)  # centred under the plot, or inside
            self.fit(xc + half)
            self.add(
                f'<text class="label" x="{px(xc)}" '
                f'y="{px(self.height - 8)}" text-anchor="middle">{esc(c.x_label)}</text>'
            )
        self.fit(LEFT + TITLE_PX * len(c.title))
        self.add(f'<text class="title" x="{px(LEFT)}" y="20">{esc(c.title)}</text>')

    def category_labels(self, labels) -> None:
        for i, label in enumerate(labels):
            x, y = self.x(i + 0.5), TOP + PLOT_H + 12
            short = label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "\u2026"
            # rotated by 45 degrees, its start reaches left of the chart: shift the drawing right
            self.shift = max(self.shift, LABEL_PX * len(short) * 0.71 - x + 4)
            self.add(
                f'<text class="cat" x="{px(x)}" y="{px(y)}" text-anchor="end" '
                f'transform="rotate(-45 {px(x)} {px(y)})"><title>{esc(category_name(self.chart, i))}'
                f"</title>{esc(short)}</text>"
            )

    def x_tick(self, x: float, label) -> None:
        """A label under the x axis at x (unrotated)."""
        self.add(
            f'<text class="tick" x="{px(x)}" y="{px(TOP + PLOT_H + 16)}" '
            f'text-anchor="middle">{esc(label)}</text>'
        )

    def legend(self, names) -> float:
        """Swatches of the series (when there are several); returns where the row ends."""
        x = LEFT
        if len(names) < 2:
            return x
        for i, name in enumerate(names):
            self.add(
                f'<rect x="{px(x)}" y="30" width="10" height="10" '
                f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            )
            self.add(f'<text class="legend" x="{px(x + 14)}" y="39">{esc(name)}</text>')
            self.fit(x + 14 + LEGEND_PX * len(name))
            x += 24 + LEGEND_PX * len(name)
        return x

    def thresholds(self, x: float) -> None:
        """Each of the chart's lines dashed across the plot, named in the legend row from x."""
        for value, label in self.chart.lines:
            y = self.y(value)
            self.add(line("threshold", LEFT, y, LEFT + self.plot_w, y))
            self.add(line("threshold", x, 35, x + 16, 35))
            self.add(f'<text class="legend" x="{px(x + 20)}" y="39">{esc(label)}</text>')
            self.fit(x + 20 + LEGEND_PX * len(label))
            x += 30 + LEGEND_PX * len(label)

    def svg(self) -> str:
        c = self.chart
        self.width += max(self.shift, 0.0)
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{esc(c.id)}" '
            f'data-kind="{c.kind}" width="{px(self.width)}" height="{px(self.height)}" '
            f'viewBox="0 0 {px(self.width)} {px(self.height)}" role="img" '
            f'aria-label="{esc(c.title)}">'
        )
        body = "".join(self.parts)
        if self.shift > 0:
            body = f'<g transform="translate({px(self.shift)} 0)">{body}</g>'
        return head + f"<title>{esc(c.title)}</title>" + body + "</svg>"


def category_name(chart: Chart, i: int) -> str:
    """Category i as tooltips name it: with its note (the layer's C symbol) when there is one."""
    cat = chart.categories[i]
    return f"{cat} ({chart.notes[i]})" if chart.notes and chart.notes[i] else cat


def value_text(chart: Chart, v: float | None) -> str:
    return "n/a" if v is None else format_float(v, chart.precision)


def draw_bar(fr: Frame, x: float, w: float, v: float | None, color: str, tip: str) -> None:
    """One bar from the baseline to `v`, with the non-finite cases marked."""
    base_y = fr.y(fr.scale.base)
    if v is None or math.isnan(v):
        fr.add(
            f'<text class="mark" x="{px(x + w / 2)}" y="{px(base_y - 3)}" '
            f'text-anchor="middle"><title>{esc(tip)}</title>n/a</text>'
        )
        return
    top = fr.y(v) if math.isfinite(v) else (TOP if v > 0 else TOP + PLOT_H)
    y0, y1 = min(base_y, top), max(base_y, top)
    fr.add(
        f'<rect x="{px(x)}" y="{px(y0)}" width="{px(w)}" height="{px(max(y1 - y0, 0.5))}" '
        f'fill="{color}"><title>{esc(tip)}</title></rect>'
    )
    if not math.isfinite(v):
        ty = TOP - 3 if v > 0 else TOP + PLOT_H + 10
        fr.add(
            f'<text class="mark" x="{px(x + w / 2)}" y="{px(ty)}" text-anchor="middle">'
            f"{'inf' if v > 0 else '-inf'}</text>"
        )
