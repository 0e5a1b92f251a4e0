"""The report document: ordered sections, each a title, paragraphs, tables and charts of plain
values. Every renderer (terminal, JSON, CSV, Markdown, HTML) reads only this model, so all of them
show the same figures.

Values are `int`, `float`, `str`, `bool` or `None`; numpy scalars are turned into these when a
table or chart is built. Floats are shown with the column's (chart's) fixed number of decimals;
non-finite floats are written "inf", "-inf" and "nan" everywhere (JSON has no such numbers).
Ids (`[a-z0-9][a-z0-9_-]*`) name CSV files, JSON entries and the HTML charts (`data-chart`);
table ids and chart ids are each unique within a report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Union

import numpy as np

Value = Union[int, float, str, bool, None]

_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")
CHART_KINDS = ("bars", "stacked", "range", "histogram", "intervals")


def plain(v) -> Value:
    """A numpy or Python scalar as a plain Python value."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    raise TypeError(f"report values must be numbers, strings, booleans or None, not {type(v)}")


def slug(text: str) -> str:
    """A valid id made from free text (lowercase, runs of other characters become '-')."""
    s = re.sub(r"[^a-z0-9_]+", "-", str(text).lower()).strip("-_")
    return s or "x"


def _check_id(kind: str, value: str) -> None:
    if not _ID.fullmatch(value):
        raise ValueError(f"{kind} id {value!r} must match {_ID.pattern}")


def format_float(v: float, precision: int) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = f"{v:.{precision}f}"
    return s[1:] if s.startswith("-") and not s.strip("-0.") else s  # no "-0.000"


def format_value(v: Value, precision: int = 3, *, grouped: bool = False) -> str:
    """Text of a value for tables: None is empty, booleans are yes / no; `grouped` (for people,
    not files) writes integers with thousands separators."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return format_float(v, precision)
    if grouped and isinstance(v, int):
        return f"{v:,}"
    return str(v)


def json_value(v: Value, precision: int = 3) -> Value:
    """A value for JSON: floats rounded to `precision` decimals, non-finite ones as strings."""
    if isinstance(v, float):
        if not math.isfinite(v):
            return format_float(v, precision)
        r = round(v, precision)
        return 0.0 if r == 0 else r
    return v


@dataclass(frozen=True)
class Column:
    key: str  # machine name: JSON row key, CSV header
    label: str  # header people read
    unit: str = ""
    precision: int = 3  # decimals of float values
    terminal: bool = True  # shown in the terminal view (files always have every column)
    percent: bool = False  # a share (0..1) people read as a percentage; files keep the share
    html: bool | None = None  # shown in the HTML page (None: where the terminal shows it)

    @property
    def on_page(self) -> bool:
        return self.terminal if self.html is None else self.html

    def header(self) -> str:
        return f"{self.label} [{self.unit}]" if self.unit else self.label

    def text(self, v: Value) -> str:
        """A cell as people read it (terminal, Markdown, HTML): integers with separators,
        shares as percentages with one decimal, as verify prints them."""
        if self.percent and isinstance(v, float) and math.isfinite(v):
            return f"{100 * v:.1f}%"
        return format_value(v, self.precision, grouped=True)


@dataclass(frozen=True)
class Table:
    id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    note: str = ""

    def __post_init__(self) -> None:
        _check_id("table", self.id)
        cols = tuple(c if isinstance(c, Column) else Column(*c) for c in self.columns)
        keys = [c.key for c in cols]
        if len(set(keys)) != len(keys):
            raise ValueError(f"table {self.id}: duplicate column keys")
        rows = tuple(tuple(plain(v) for v in row) for row in self.rows)
        for row in rows:
            if len(row) != len(cols):
                raise ValueError(
                    f"table {self.id}: a row has {len(row)} values for {len(cols)} columns"
                )
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "rows", rows)

    def column(self, key: str) -> list[Value]:
        i = [c.key for c in self.columns].index(key)
        return [row[i] for row in self.rows]


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "values", tuple(None if v is None else float(plain(v)) for v in self.values)
        )


@dataclass(frozen=True)
class Chart:
    """kinds:
    "bars"      grouped bars: one bar per series for each category (e.g. SNR chained / isolated);
    "stacked"   one bar per category, the series stacked (e.g. ROM: weights, bias, ...);
    "range"     per category a min-max whisker with a median mark; series named min, median, max;
    "histogram" one series of counts over `bin_edges` (len(values) + 1 edges);
    "intervals" per category (a buffer) a rectangle over layers first..last and bytes
                offset..offset + size; series named first, last, offset, size. `groups`
                (optional) colours each by its group (the kind of layer that writes it:
                `mlitool.report.svg_arena.GROUP_COLOURS`), `lines` marks bytes on the y axis
                ((value, label): a lower bound), `layers` fixes the x axis (0: to the last
                buffer), so that two plans (fast, slow) share it.
    `lines`: horizontal reference lines (value, label), e.g. a threshold the user set;
    `notes`: per category, text shown beside its name in tooltips (e.g. the layer's C symbol).
    """

    id: str
    title: str
    kind: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    x_label: str = ""
    y_label: str = ""
    log_y: bool = False
    precision: int = 3
    bin_edges: tuple[float, ...] = ()
    groups: tuple[str, ...] = ()
    lines: tuple[tuple[float, str], ...] = ()
    layers: int = 0
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_id("chart", self.id)
        object.__setattr__(self, "groups", tuple(str(g) for g in self.groups))
        object.__setattr__(self, "lines", tuple((plain(v), str(t)) for v, t in self.lines))
        if self.groups and len(self.groups) != len(self.categories):
            raise ValueError(f"chart {self.id}: one group per category")
        if self.kind not in CHART_KINDS:
            raise ValueError(f"chart {self.id}: kind {self.kind!r} is not one of {CHART_KINDS}")
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        object.__setattr__(self, "bin_edges", tuple(float(plain(e)) for e in self.bin_edges))
        object.__setattr__(self, "lines", tuple((float(plain(v)), str(t)) for v, t in self.lines))
        object.__setattr__(self, "notes", tuple(str(t) for t in self.notes))
        n = len(self.categories)
        if self.notes and len(self.notes) != n:
            raise ValueError(f"chart {self.id}: {len(self.notes)} notes for {n} categories")
        for s in self.series:
            if len(s.values) != n:
                raise ValueError(
                    f"chart {self.id}: series {s.name!r} has {len(s.values)} values "
                    f"for {n} categories"
                )
        if self.kind == "range" and [s.name for s in self.series] != ["min", "median", "max"]:
            raise ValueError(f"chart {self.id}: a range chart has series min, median, max")
        if self.kind == "intervals" and [s.name for s in self.series] != [
            "first",
            "last",
            "offset",
            "size",
        ]:
            raise ValueError(
                f"chart {self.id}: an intervals chart has series first, last, offset, size"
            )
        if self.kind == "histogram" and (len(self.series) != 1 or len(self.bin_edges) != n + 1):
            raise ValueError(f"chart {self.id}: a histogram has one series and n + 1 bin edges")


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    text: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    charts: tuple[Chart, ...] = ()

    def __post_init__(self) -> None:
        _check_id("section", self.id)
        for name in ("text", "tables", "charts"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True)
class Report:
    title: str
    meta: tuple[tuple[str, Value], ...] = ()
    sections: tuple[Section, ...] = field(default_factory=tuple)
    # The model's warnings: the summary's text in the files; on stderr (grouped), not among the
    # terminal's paragraphs.
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        meta = self.meta.items() if isinstance(self.meta, dict) else self.meta
        object.__setattr__(self, "meta", tuple((str(k), plain(v)) for k, v in meta))
        object.__setattr__(self, "sections", tuple(self.sections))
        object.__setattr__(self, "warnings", tuple(self.warnings))
        for kind, ids in (
            ("section", [s.id for s in self.sections]),
            ("table", [t.id for s in self.sections for t in s.tables]),
            ("chart", [c.id for s in self.sections for c in s.charts]),
        ):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise ValueError(f"duplicate {kind} ids in the report: {', '.join(dup)}")

    def tables(self) -> Iterable[tuple[Section, Table]]:
        return ((s, t) for s in self.sections for t in s.tables)

    def charts(self) -> Iterable[tuple[Section, Chart]]:
        return ((s, c) for s in self.sections for c in s.charts)

    def table(self, table_id: str) -> Table:
        for _, t in self.tables():
            if t.id == table_id:
                return t
        raise KeyError(table_id)


def make_table(
    id: str, title: str, columns: Sequence, rows: Iterable[Sequence], note: str = ""
) -> Table:
    """`columns` as Column objects or (key, label[, unit[, precision]]) tuples."""
    return Table(id, title, tuple(columns), tuple(tuple(r) for r in rows), note)
