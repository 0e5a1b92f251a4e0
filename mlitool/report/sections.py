"""Report sections read from the lowered model alone: the summary (with the lowering decisions)
and memory (ROM per layer, arena placement); `layer_label`, the label of a layer in every
per-layer chart and table."""

from __future__ import annotations

import os
import re
from dataclasses import replace

from mlitool import ir
from mlitool.mli.types import MliModel
from mlitool.report.document import Chart, Column, Report, Section, Series, Table, make_table
from mlitool.report.memory import MemoryReport


def layer_label(pos: int, kind: str) -> str:
    return f"{pos}: {kind}"


_LABEL = re.compile(r"(\d+): ")  # a layer_label


# --- C symbols ---------------------------------------------------------------------------------


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


# --- summary -----------------------------------------------------------------------------------


def summary_section(model: MliModel, graph: ir.Graph | None = None) -> Section:
    rows: list[tuple] = [
        ("source", os.path.basename(model.source)),
        ("MLI target", model.mli_version),
        ("format", model.format),
        ("layout", model.layout),
    ]
    if graph is not None:
        from mlitool.inspect.model_style import detect_style
        from mlitool.inspect.opstats import graph_totals

        totals = graph_totals(graph)
        rows += [
            ("style", detect_style(graph).label),
            ("TFLite ops", len(graph.ops)),
            ("parameters", totals["params"]),
            ("MACs", totals["macs"]),
        ]
    calls = sum(1 for layer in model.layers if layer.kernel)
    fallbacks = [layer for layer in model.layers if layer.kind == "fallback"]
    rows += [
        ("MLI layers", len(model.layers)),
        ("kernel calls", calls),
        (
            "fallback C layers",
            f"{len(fallbacks)} ({', '.join(sorted({la.op_type for la in fallbacks}))})"
            if fallbacks
            else 0,
        ),
        ("tensors", len(model.tensors)),
        ("warnings", len(model.warnings)),
    ]
    table = make_table("summary", "Model", [("item", "Item"), ("value", "Value")], rows)
    return Section("summary", "Summary", tuple(model.warnings), (table, decisions_table(model)))


def decisions_table(model: MliModel):
    """What lowering decided and why, one row per note: inserted converts and copies, views,
    rewritten pooling windows, fixed output parameters, saturation."""
    rows = [
        (pos, layer.index, layer.op_type, layer.kind, layer.kernel or "(no call)", note)
        for pos, layer in enumerate(model.layers)
        for note in layer.notes
    ]
    return make_table(
        "lowering-notes",
        "Lowering decisions",
        [
            ("position", "Layer"),
            ("op_index", "TFLite op"),
            ("op_type", "Op"),
            ("kind", "Kind"),
            ("kernel", "MLI kernel"),
            ("note", "Why"),
        ],
        rows,
        note="Views cost no RAM; copies and converts are listed with their reason.",
    )


# --- memory ------------------------------------------------------------------------------------

_ROM_PARTS = (
    ("weights", "weights"),
    ("bias", "bias"),
    ("params", "other constants"),
    ("per_axis", "per-axis arrays"),
    ("structs", "tensor structs"),
    ("config", "config structs"),
)


def memory_section(model: MliModel, mem: MemoryReport) -> Section:
    b = ("B",)
    rom_cols = [("position", "Layer"), ("op_index", "TFLite op"), ("kind", "Kind")]
    rom_cols += [(k, label, "B") for k, label in _ROM_PARTS]
    rom_cols += [
        ("total", "ROM", "B"),
        ("tflite_bytes", ".tflite constants", "B"),
        ("float32_bytes", "float32", "B"),
    ]
    rom = make_table(
        "rom-layers",
        "ROM per layer",
        rom_cols,
        [
            (
                r.position,
                r.index,
                r.kind,
                r.weights,
                r.bias,
                r.params,
                r.per_axis,
                r.structs,
                r.config,
                r.total,
                r.tflite_bytes,
                r.float32_bytes,
            )
            for r in mem.layers
        ],
        note=f"sizeof(mli_tensor) = {mem.tensor_struct_bytes} B on a 32-bit ARC "
        f"target (MLI {mem.mli_version}); each constant counted at its first layer.",
    )
    tot = mem.rom_totals()
    ratio = mem.rom_total / mem.tflite_weight_bytes if mem.tflite_weight_bytes else None
    totals = make_table(
        "rom-totals",
        "ROM totals",
        [("item", "Item"), ("bytes", "Bytes", *b)],
        [
            *((label, tot[k]) for k, label in _ROM_PARTS),
            ("ROM total", mem.rom_total),
            (".tflite constants", mem.tflite_weight_bytes),
            ("float32 parameters", mem.float32_bytes),
        ],
    )
    compare = make_table(
        "rom-compare",
        "ROM against the original model",
        [("item", "Item"), ("ratio", "Ratio", "", 3)],
        [
            ("ROM / .tflite constants", ratio),
            ("ROM / float32", mem.rom_total / mem.float32_bytes if mem.float32_bytes else None),
        ],
    )
    names = {p.buffer.name: p for p in mem.arena.placements}
    arena = make_table(
        "arena",
        "Activation arena placement",
        [
            ("buffer", "Buffer"),
            ("bytes", "Bytes", "B"),
            ("first", "First layer"),
            ("last", "Last layer"),
            ("offset", "Offset", "B"),
            ("end", "End", "B"),
        ],
        [
            (n, p.buffer.size, p.buffer.first, p.buffer.last, p.offset, p.end)
            for n, p in names.items()
        ],
        note="A buffer lives from the layer that writes it to the last layer "
        "that reads it (inputs from the start, outputs to the end); views "
        "share their buffer. Greedy-by-size placement.",
    )
    ram = make_table(
        "ram-totals",
        "RAM totals",
        [("item", "Item"), ("bytes", "Bytes", "B")],
        [
            ("arena (shared placement)", mem.arena.arena_bytes),
            ("lower bound (most bytes alive at once)", mem.arena.lower_bound),
            ("no sharing (sum of buffers)", mem.arena.unshared_bytes),
            ("activation tensor structs", mem.activation_structs),
            ("static RAM (tables, LSTM scratch)", mem.static_ram),
            ("RAM total", mem.ram_total),
            ("alignment", mem.arena.align),
        ],
    )
    chart = Chart(
        "memory-breakdown",
        "ROM per layer by kind of data",
        "stacked",
        tuple(layer_label(r.position, r.kind) for r in mem.layers),
        tuple(Series(label, tuple(getattr(r, k) for r in mem.layers)) for k, label in _ROM_PARTS),
        x_label="layer",
        y_label="bytes",
        precision=0,
    )
    placed = list(names.values())
    plan = Chart(
        "arena-plan",
        f"Activation arena: {mem.arena.arena_bytes:,} bytes over the layers",
        "intervals",
        tuple(names),
        (
            Series("first", tuple(p.buffer.first for p in placed)),
            Series("last", tuple(p.buffer.last for p in placed)),
            Series("offset", tuple(p.offset for p in placed)),
            Series("size", tuple(p.buffer.size for p in placed)),
        ),
        x_label="layer (from the one that writes a buffer to the last that reads it)",
        y_label="arena offset [bytes]",
        precision=0,
    )
    return Section("memory", "Memory", (), (rom, totals, compare, arena, ram), (plan, chart))
