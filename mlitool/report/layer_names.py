"""How a layer is named in every per-layer chart and table of a report: its label
(`layer_label`, "3: conv2d") and the C symbol of the tensor it writes (a table column, the
charts' tooltips)."""

from __future__ import annotations

import re
from dataclasses import replace

from mlitool.mli.types import MliModel
from mlitool.report.document import Chart, Column, Report, Table


def layer_label(pos: int, kind: str) -> str:
    return f"{pos}: {kind}"


_LABEL = re.compile(r"(\d+): ")  # a layer_label


def layer_symbols(model: MliModel, name: str, fast: bool = False) -> list[str]:
    """Per MLI layer, the C symbol of the tensor it writes, as `convert` names it by default
    (`NAME_L3_conv_out`; `mlitool.emit.symbols`, the runtime's names reserved as convert does)."""
    from mlitool.emit.symbols import make_symbols

    syms = make_symbols(model, name, runtime=True, fast=fast)
    return [syms.tensors[la.outputs[0]].name if la.outputs else "" for la in model.layers]


def _symbol_column(t: Table, symbols: list[str]) -> Table:
    """`t` with a "C symbol" column after its TFLite op type (else its layer) column, when its
    rows are layers (not tensors); the terminal has no room for it (files and pages have)."""
    keys = [c.key for c in t.columns]
    pos = next((keys.index(k) for k in ("layer", "position") if k in keys), None)
    if pos is None or "tensor" in keys:
        return t
    at = next((keys.index(k) + 1 for k in ("op_type", "kind") if k in keys), pos + 1)
    col = Column("c_symbol", "C symbol", terminal=False, html=True)

    def sym(p) -> str | None:
        return symbols[p] if isinstance(p, int) and 0 <= p < len(symbols) else None

    rows = tuple((*r[:at], sym(r[pos]), *r[at:]) for r in t.rows)
    return replace(t, columns=(*t.columns[:at], col, *t.columns[at:]), rows=rows)


def _symbol_notes(c: Chart, symbols: list[str]) -> Chart:
    found = [_LABEL.match(cat) for cat in c.categories]
    if not found or not all(found) or c.notes:
        return c
    return replace(c, notes=tuple(symbols[int(m.group(1))] for m in found))


def with_symbols(report: Report, symbols: list[str]) -> Report:
    """Every per-layer table and chart with the layer's C symbol beside it: a column in the
    tables, the tooltips of the charts."""
    sections = tuple(
        replace(
            s,
            tables=tuple(_symbol_column(t, symbols) for t in s.tables),
            charts=tuple(_symbol_notes(c, symbols) for c in s.charts),
        )
        for s in report.sections
    )
    return replace(report, sections=sections)
