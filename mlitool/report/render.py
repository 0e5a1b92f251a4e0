"""Renderers of a `Report`: terminal (rich), JSON, CSV, Markdown; HTML lives in `html.py`.

All outputs are deterministic: the same report gives byte-identical text. Files are written
atomically (`mlitool.plumbing.fsio`): a crash leaves either the old file or the complete new one.

JSON document (`render_json`; keys sorted, two-space indent, ASCII):
    {"schema": "mlitool-report", "schema_version": 1, "title": str,
     "meta": {key: value},
     "sections": [{"id": str, "title": str, "text": [str],
                   "tables": [{"id", "title", "note",
                               "columns": [{"key", "label", "unit", "precision"}],
                               "rows": [{column key: value}]}],
                   "charts": [{"id", "title", "kind", "x_label", "y_label", "log_y",
                               "categories": [str], "series": [{"name", "values": [number]}],
                               "bin_edges": [number], "lines": [{"value", "label"}],
                               "notes": [str]}]}]}
    "intervals" charts (arena plans) also have "groups": [str] (per category: the kind of
    layer that writes the buffer, "staging", "tables") and "layers" (the x axis' extent; 0: to
    the last buffer); their "lines" mark the lower bound of the arena.
Values are numbers, strings, booleans or null; floats are rounded to the column's (chart's)
precision; non-finite floats are the strings "inf", "-inf", "nan".

CSV (`render_csv`): one file per table, `<section id>__<table id>.csv`, header = column keys,
floats with the column's precision, empty cell for null, yes / no for booleans.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from pathlib import Path
from typing import Any

from mlitool.plumbing.fsio import make_dirs, write_file_atomically, write_files_atomically
from mlitool.report.document import Chart, Report, Table, format_value, json_value

SCHEMA = "mlitool-report"
SCHEMA_VERSION = 1


# --- JSON --------------------------------------------------------------------------------------


def _table_json(t: Table) -> dict[str, Any]:
    return {
        "id": t.id,
        "title": t.title,
        "note": t.note,
        "columns": [
            {"key": c.key, "label": c.label, "unit": c.unit, "precision": c.precision}
            for c in t.columns
        ],
        "rows": [
            {c.key: json_value(v, c.precision) for c, v in zip(t.columns, row)} for row in t.rows
        ],
    }


def _chart_json(c: Chart) -> dict[str, Any]:
    p = c.precision
    return {
        "id": c.id,
        "title": c.title,
        "kind": c.kind,
        "x_label": c.x_label,
        "y_label": c.y_label,
        "log_y": c.log_y,
        "categories": list(c.categories),
        "series": [
            {"name": s.name, "values": [json_value(v, p) for v in s.values]} for s in c.series
        ],
        "bin_edges": [json_value(e, p) for e in c.bin_edges],
        "lines": [{"value": json_value(v, p), "label": t} for v, t in c.lines],
        "notes": list(c.notes),
        **({"groups": list(c.groups), "layers": c.layers} if c.kind == "intervals" else {}),
    }


def to_json_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "title": report.title,
        "meta": {k: json_value(v) for k, v in report.meta},
        "sections": [
            {
                "id": s.id,
                "title": s.title,
                "text": list(s.text),
                "tables": [_table_json(t) for t in s.tables],
                "charts": [_chart_json(c) for c in s.charts],
            }
            for s in report.sections
        ],
    }


def render_json(report: Report) -> str:
    return (
        json.dumps(
            to_json_dict(report), sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False
        )
        + "\n"
    )


# --- CSV ---------------------------------------------------------------------------------------


def csv_files(report: Report) -> dict[str, str]:
    """File name -> CSV text, one per table."""
    files = {}
    for section, t in report.tables():
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([c.key for c in t.columns])
        for row in t.rows:
            w.writerow([format_value(v, c.precision) for c, v in zip(t.columns, row)])
        files[f"{section.id}__{t.id}.csv"] = buf.getvalue()
    return files


def render_csv(report: Report, directory: str | Path) -> list[Path]:
    """Write the CSV files into `directory` (created if missing); returns their paths."""
    d = make_dirs(directory)
    return write_files_atomically({d / name: text for name, text in csv_files(report).items()})


# --- Markdown ----------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Inline Markdown text: HTML-escaped, table pipes and emphasis characters neutralised."""
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\")
    for ch in "|*_`[]#":
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def _md_table(t: Table) -> list[str]:
    lines = [f"### {_md(t.title)}", ""]
    if t.note:
        lines += [_md(t.note), ""]
    lines.append("| " + " | ".join(_md(c.header()) for c in t.columns) + " |")
    lines.append(
        "|" + "|".join("---:" if _numeric(t, i) else "---" for i in range(len(t.columns))) + "|"
    )
    for row in t.rows:
        lines.append("| " + " | ".join(_md(c.text(v)) for c, v in zip(t.columns, row)) + " |")
    return lines + [""]


def _numeric(t: Table, i: int) -> bool:
    vals = [r[i] for r in t.rows if r[i] is not None]
    return bool(vals) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)


def render_markdown(report: Report) -> str:
    lines = [f"# {_md(report.title)}", ""]
    lines += [f"- **{_md(k)}**: {_md(format_value(v))}" for k, v in report.meta]
    lines.append("")
    for s in report.sections:
        lines += [f"## {_md(s.title)}", ""]
        for para in s.text:
            lines += [_md(para), ""]
        for t in s.tables:
            lines += _md_table(t)
        for c in s.charts:
            lines += [f"*Chart: {_md(c.title)}* (drawn in the HTML report; data in the JSON)", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- terminal ----------------------------------------------------------------------------------


def render_terminal(report: Report, console=None) -> None:
    """Print the report with rich tables (text is never read as rich markup). Columns marked
    `terminal=False` are left out (the files have them); tables fit the console's width
    (`mlitool.plumbing.console.table`)."""
    from rich.text import Text

    from mlitool.plumbing.console import stdout_console, table

    console = console or stdout_console()
    console.print(Text(report.title, style="bold"))
    for k, v in report.meta:  # a long value wraps under itself, not at the margin
        line = textwrap.fill(
            f"{k}: {format_value(v, grouped=True)}",
            width=max(console.width - 1, 40),
            initial_indent="  ",
            subsequent_indent="    ",
            break_on_hyphens=False,
        )
        console.print(Text(line))
    for s in report.sections:
        console.print()
        console.rule(Text(s.title, style="bold"))
        for para in s.text:
            if para not in report.warnings:  # those go to stderr (mlitool.cli)
                console.print(Text(para))
        for t in s.tables:
            shown = [i for i, c in enumerate(t.columns) if c.terminal]
            rows = [[t.columns[i].text(row[i]) for i in shown] for row in t.rows]
            console.print(
                table(
                    t.title,
                    [t.columns[i].header() for i in shown],
                    rows,
                    width=console.width,
                    caption=t.note or None,
                    right=[_numeric(t, i) for i in shown],
                )
            )
        for c in s.charts:
            console.print(Text(f"chart: {c.title} (see the HTML report)", style="dim"))


def terminal_text(report: Report, width: int = 120) -> str:
    """The terminal rendering as plain text (no colours), e.g. for tests and logs."""
    from rich.console import Console

    buf = io.StringIO()
    render_terminal(
        report,
        Console(
            file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False
        ),
    )
    return buf.getvalue()


# --- files -------------------------------------------------------------------------------------


def write_json(report: Report, path: str | Path) -> Path:
    return write_file_atomically(path, render_json(report))


def write_markdown(report: Report, path: str | Path) -> Path:
    return write_file_atomically(path, render_markdown(report))


def write_html(report: Report, path: str | Path) -> Path:
    from mlitool.report.html import render_html

    return write_file_atomically(path, render_html(report))
