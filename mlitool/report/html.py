"""A report as one self-contained HTML file: inline CSS, tables, charts as inline SVG.

No scripts, fonts, style sheets or images are loaded from anywhere: the file reads the same
offline, from an archive or a CI artifact. All text is HTML-escaped.
"""

from __future__ import annotations

import re
from html import escape

from mlitool.report.chart_pages import chart_svgs
from mlitool.report.document import Report, Table, format_value

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin-bottom: .3rem; }
table { border-collapse: collapse; margin: .4rem 0 1.2rem; font-size: .85rem; }
th, td { border: 1px solid #d0d0d0; padding: .2rem .5rem; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { max-width: 26rem; overflow-wrap: anywhere; }
td.long { min-width: 12rem; }
table.wide { font-size: .78rem; } table.wide th, table.wide td { padding: .15rem .3rem; }
tbody tr:nth-child(even) { background: #fafafa; }
.meta td:first-child { font-weight: 600; }
.note { color: #555; font-size: .85rem; }
.scroll { overflow-x: auto; }
.headline { border-left: 6px solid #7f7f7f; background: #f6f6f6; padding: .6rem 1rem;
            margin: 1rem 0 1.4rem; }
.headline .verdict { font-size: 1.3rem; font-weight: 700; margin-right: .8rem; }
.headline.pass { border-color: #009E73; } .headline.pass .verdict { color: #00734f; }
.headline.review { border-color: #E69F00; } .headline.review .verdict { color: #9a5b00; }
.headline.fail { border-color: #D55E00; } .headline.fail .verdict { color: #b34700; }
.headline ul { margin: .3rem 0 0; padding-left: 1.2rem; }
figure { margin: .6rem 0 1.4rem; overflow-x: auto; max-width: 100%; }
details summary { cursor: pointer; font-weight: 600; margin: .4rem 0; }
.charts { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
svg.chart { font-family: inherit; background: #fff; max-width: 100%; height: auto; }
svg .title { font-size: 14px; font-weight: 600; }
svg .tick, svg .cat, svg .legend, svg .mark { font-size: 11px; fill: #333; }
svg .label { font-size: 12px; fill: #333; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; }
svg .axis { stroke: #333; stroke-width: 1; }
svg .whisker { stroke: #0072B2; stroke-width: 2; }
svg .bound { stroke: #b30000; stroke-width: 1.5; stroke-dasharray: 6 3; }
svg .threshold { stroke: #D55E00; stroke-width: 1.5; stroke-dasharray: 6 3; }
""".strip()


LONG_CHARS = 24  # longer text gets a wider column


def _e(text) -> str:
    return escape(str(text), quote=True)


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _breakable(text: str) -> str:
    """Escaped text with line-break opportunities after the separators of long TFLite tensor
    names ("model/conv2d/BiasAdd;model/...")."""
    return "".join(
        _e(part) + ("<wbr>" if part in (";", "/") else "") for part in re.split(r"([;/])", text)
    )


def _text_cell(text: str) -> str:
    """A text cell, never cut (remedies, reasons, fused TFLite names): long text gets a wider
    column and wraps, at its separators first."""
    cls = "text long" if len(text) > LONG_CHARS else "text"
    return f'<td class="{cls}">{_breakable(text)}</td>'


def _table(t: Table) -> list[str]:
    """A table with the columns people read (the rest are in the JSON and CSV files); an empty
    one is a sentence, not an empty grid."""
    if not t.rows:
        return [f'<p class="note" id="table-{t.id}"><strong>{_e(t.title)}</strong>: none.</p>']
    shown = [i for i, c in enumerate(t.columns) if c.on_page]
    out = [f'<h3 id="table-{t.id}">{_e(t.title)}</h3>']
    note = t.note
    if len(shown) < len(t.columns):
        note = f"{note} " if note else ""
        note += (
            f"{len(t.columns) - len(shown)} more columns "
            f"({', '.join(t.columns[i].header() for i in range(len(t.columns)) if i not in shown)})"
            " are in the JSON and CSV files."
        )
    if note:
        out.append(f'<p class="note">{_e(note)}</p>')
    wide = ' class="wide"' if len(shown) > 10 else ""
    out.append(f'<div class="scroll"><table{wide} data-table="{_e(t.id)}">')
    out.append(
        "<thead><tr>"
        + "".join(f"<th>{_e(t.columns[i].header())}</th>" for i in shown)
        + "</tr></thead>"
    )
    out.append("<tbody>")
    for row in t.rows:
        cells = []
        for i in shown:
            c, v = t.columns[i], row[i]
            text = c.text(v)
            cells.append(f'<td class="num">{_e(text)}</td>' if _numeric(v) else _text_cell(text))
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return out


_HEADLINE_KEYS = ("model", "target", "format", "arithmetic")  # the headline names them


def _headline(meta: dict) -> list[str]:
    """Verdict, what was checked, and for what: the first thing a reader sees."""
    word = str(meta["verdict"])
    what = " \u00b7 ".join(str(meta[k]) for k in _HEADLINE_KEYS if k in meta)
    checks = [c for c in str(meta.get("checks", "")).split("; ") if c]
    return [
        f'<div class="headline {_e(word.lower())}" data-verdict="{_e(word)}">',
        f'<span class="verdict">{_e(word)}</span><span>{_e(what)}</span>',
        *([f'<p class="summary">{_e(meta["summary"])}</p>'] if "summary" in meta else []),
        "<ul>" + "".join(f"<li>{_e(c)}</li>" for c in checks) + "</ul>",
        "</div>",
    ]


def _plan_of(chart_id: str, table_id: str) -> bool:
    return chart_id == f"{table_id}-plan" or chart_id.startswith(f"{table_id}-plan-")


def _figures(charts) -> list[str]:
    """One figure per chart, or per part of a chart paged past its category limit."""
    return [f"<figure>{svg}</figure>" for c in charts for svg in chart_svgs(c)]


def render_html(report: Report) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(report.title)}</title>",
        f"<style>\n{CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    meta = dict(report.meta)
    if "verdict" in meta:
        out += _headline(meta)
    shown = ("summary", "verdict", "checks", *(_HEADLINE_KEYS if "verdict" in meta else ()))
    rest = [(k, v) for k, v in report.meta if k not in shown]
    if rest:
        out.append('<table class="meta"><tbody>')
        out += [
            f"<tr><td>{_e(k)}</td><td>{_e(format_value(v, grouped=True))}</td></tr>"
            for k, v in rest
        ]
        out.append("</tbody></table>")
    if len(report.sections) > 1:
        out.append(
            "<nav><ul>"
            + "".join(f'<li><a href="#{_e(s.id)}">{_e(s.title)}</a></li>' for s in report.sections)
            + "</ul></nav>"
        )
    for s in report.sections:
        out.append(f'<section id="{_e(s.id)}">')
        out.append(f"<h2>{_e(s.title)}</h2>")
        out += [f"<p>{_e(p)}</p>" for p in s.text]
        # A table's charts (TABLE-plan, TABLE-plan-...) are drawn next to it.
        beside = {c.id: t.id for t in s.tables for c in s.charts if _plan_of(c.id, t.id)}
        for t in s.tables:
            out += _table(t)
            out += _figures(c for c in s.charts if beside.get(c.id) == t.id)
        rest = [c for c in s.charts if c.id not in beside and c.kind != "histogram"]
        if rest:
            out.append('<div class="charts">')
            out += _figures(rest)
            out.append("</div>")
        hists = [c for c in s.charts if c.kind == "histogram"]
        if hists:  # one per weight tensor: many and tall, so closed until asked for
            out.append(f"<details><summary>Weight histograms ({len(hists)})</summary>")
            out.append('<div class="charts">')
            out += _figures(hists)
            out.append("</div></details>")
        out.append("</section>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
