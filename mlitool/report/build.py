"""Turns an `MliModel` (and the IR graph it came from) into the report document.

Sections: summary, memory (ROM per layer, arena placement), quantization (per-tensor statistics,
risk flags, scale spread, weight histograms) and, once the executor provides the figures,
accuracy (`accuracy_section`: per-layer SNR chained / isolated and the reduced-accumulator cost).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.mli.ops import MAC_KINDS
from mlitool.mli.types import MliModel, Role
from mlitool.report.document import Chart, Column, Report, Section, Series, Table, make_table
from mlitool.report.memory import MemoryReport, memory_report
from mlitool.report.quant_stats import (
    DEFAULT_SNR_THRESHOLD_DB,
    ActivationObservation,
    TensorStats,
    activation_stats,
    in_mli_layout,
    int_range,
    real_values,
    tensor_stats,
)

_QUANT_DIM_OP = {
    "conv2d": "CONV_2D",
    "group_conv2d": "CONV_2D",
    "transpose_conv2d": "CONV_2D",
    "depthwise_conv2d": "DEPTHWISE_CONV_2D",
    "fully_connected": "FULLY_CONNECTED",
}
HIST_BINS = 32


def layer_label(pos: int, kind: str) -> str:
    return f"{pos}: {kind}"


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
    rows += [
        ("MLI layers", len(model.layers)),
        ("kernel calls", calls),
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


# --- quantization ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerTensorStats:
    position: int
    kind: str
    stats: TensorStats
    data: np.ndarray | None  # integers (constants), for histograms


def quant_stats(
    model: MliModel,
    graph: ir.Graph | None = None,
    snr_threshold_db: float = DEFAULT_SNR_THRESHOLD_DB,
    activations: dict[str, ActivationObservation] | None = None,
) -> list[LayerTensorStats]:
    """Statistics of every constant of every layer (real values from `graph`) and of every
    activation a layer writes (parameters only, unless `activations` holds what executed
    samples showed for it)."""
    from mlitool.mli.quant import mli_quant_dim

    out, seen = [], set()
    for pos, layer in enumerate(model.layers):
        consts = [n for n in (layer.weights, layer.bias, *layer.params.values()) if n]
        for name in [*consts, *layer.outputs]:
            t = model.tensors[name]
            if name in seen or not (t.el_type.is_sa or t.el_type.is_fx):
                continue
            seen.add(name)
            real = None
            if (
                t.data is not None
                and graph is not None
                and t.source_index is not None
                and 0 <= t.source_index < len(graph.tensors)
            ):
                src = real_values(graph.tensors[t.source_index])
                real = in_mli_layout(src, t) if src is not None else None
            axis = None
            if t.role == Role.WEIGHTS and not t.per_axis and layer.kind in _QUANT_DIM_OP:
                axis = mli_quant_dim(_QUANT_DIM_OP[layer.kind], model.target, model.layout)
            if activations is not None and name in activations:
                stats = activation_stats(
                    t, activations[name], target=model.target, snr_threshold_db=snr_threshold_db
                )
            else:
                stats = tensor_stats(
                    t,
                    real,
                    target=model.target,
                    channel_axis=axis,
                    snr_threshold_db=snr_threshold_db,
                )
            out.append(LayerTensorStats(pos, layer.kind, stats, t.data))
    return out


_Q_COLS = [
    ("layer", "Layer"),
    ("tensor", "Tensor"),
    ("role", "Role"),
    ("el_type", "Type"),
    ("shape", "Shape"),
    ("channels", "Channels", "", 3, False),
    ("int_min", "Int min", "", 3, False),
    ("int_max", "Int max", "", 3, False),
    ("real_min", "Real min", "", 6),
    ("real_max", "Real max", "", 6),
    ("scale_min", "Scale min", "", 9, False),
    ("scale_median", "Scale median", "", 9, False),
    ("scale_max", "Scale max", "", 9, False),
    ("frac_min", "Frac bits min"),
    ("frac_median", "Frac bits median", "", 1),
    ("frac_max", "Frac bits max"),
    ("snr_db", "Quantization SNR", "dB", 2),
    ("saturated", "Saturated"),
    ("at_limits", "At qmin/qmax", "", 3, False),
    ("unused_range", "Unused range", "", 3),
    ("zero_channels", "Zero channels", "", 3, False),
    ("flags", "Risk flags"),
]


def quant_section(
    stats: list[LayerTensorStats], snr_threshold_db: float = DEFAULT_SNR_THRESHOLD_DB
) -> Section:
    rows = []
    for ls in stats:
        s = ls.stats
        rows.append(
            (
                ls.position,
                s.name,
                s.role,
                s.el_type,
                "x".join(map(str, s.shape)) or "scalar",
                s.channels,
                s.int_min,
                s.int_max,
                s.real_min,
                s.real_max,
                s.scale_min,
                s.scale_median,
                s.scale_max,
                s.frac_min,
                s.frac_median,
                s.frac_max,
                s.snr_db,
                s.saturated,
                s.at_limits,
                s.unused_range,
                s.zero_channels,
                ", ".join(s.flags),
            )
        )
    table = make_table(
        "quant-tensors",
        "Quantization per tensor",
        _Q_COLS,
        rows,
        note="Constants: real range, SNR and saturation of the real (TFLite) "
        "values against the dequantized MLI values. Activations (when the "
        "report ran samples): the float model's values over the samples "
        "(real range) against their quantization with the tensor's "
        "parameters (integer range, SNR, saturated and unused range). "
        f"Flags: low_snr (< {snr_threshold_db:g} dB), saturation, "
        "frac_bits_limit, zero_channel.",
    )
    risky = make_table(
        "quant-risks",
        "Risky tensors",
        [
            ("layer", "Layer"),
            ("kind", "Kind"),
            ("tensor", "Tensor"),
            ("flags", "Risk flags"),
            ("snr_db", "Quantization SNR", "dB", 2),
            ("saturated", "Saturated"),
            ("zero_channels", "Zero channels"),
        ],
        [
            (
                ls.position,
                ls.kind,
                ls.stats.name,
                ", ".join(ls.stats.flags),
                ls.stats.snr_db,
                ls.stats.saturated,
                ls.stats.zero_channels,
            )
            for ls in stats
            if ls.stats.flags
        ],
    )
    weights = [ls for ls in stats if ls.stats.role == "weights" and ls.kind in MAC_KINDS]
    charts = [
        Chart(
            "scale-spread",
            "Per-channel weight scales (min / median / max)",
            "range",
            tuple(layer_label(ls.position, ls.kind) for ls in weights),
            (
                Series("min", tuple(ls.stats.scale_min for ls in weights)),
                Series("median", tuple(ls.stats.scale_median for ls in weights)),
                Series("max", tuple(ls.stats.scale_max for ls in weights)),
            ),
            x_label="layer",
            y_label="real scale of one step",
            log_y=True,
            precision=9,
        )
    ]
    for ls in weights:
        if ls.data is None or ls.data.size == 0:
            continue
        counts, edges = weight_histogram(ls.data, ls.stats)
        charts.append(
            Chart(
                f"weights-hist-{ls.position}",
                f"Weights of layer {layer_label(ls.position, ls.kind)} ({ls.stats.el_type})",
                "histogram",
                tuple(f"bin {i}" for i in range(len(counts))),
                (Series("count", tuple(int(c) for c in counts)),),
                x_label="integer value",
                y_label="elements",
                bin_edges=tuple(float(e) for e in edges),
                precision=0,
            )
        )
    return Section("quantization", "Quantization", (), (table, risky), tuple(charts))


def weight_histogram(data: np.ndarray, stats: TensorStats) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the integer weights in HIST_BINS equal bins over the 8-bit container range
    (over the data's own range for wider types)."""
    from mlitool.mli.types import ElType

    el = ElType[stats.el_type]
    lo, hi = int_range(el) if el.bits <= 8 else (int(data.min()), int(data.max()))
    edges = np.linspace(lo, hi + 1, HIST_BINS + 1)
    counts, _ = np.histogram(data.reshape(-1), bins=edges)
    return counts, edges


# --- accuracy (figures from the executor) -------------------------------------------------------


@dataclass(frozen=True)
class LayerAccuracy:
    position: int
    kind: str
    snr_chained_db: float | None  # whole network quantized up to this layer
    snr_isolated_db: float | None  # this layer fed float-exact quantized inputs
    max_abs_lsb: int | None = None
    reduced_accu_lsb: int | None = None  # FULL_ACCU off vs on, isolated (issue 6 item 3)
    op_index: int | None = None  # the TFLite op (what config overrides name)
    op_type: str = ""


REMEDY = "fx16 for this layer, rescaled weights, or a FULL_ACCU build"
REMEDY_NOTE = (
    "Remedies: run the layer in fx16 (a config override: [[tool.mlitool.layer]] "
    'index = TFLite op, format = "fx16"), rescale its weights, or build MLI with '
    "FULL_ACCU=ON (--target em)."
)


def remedy(row: LayerAccuracy) -> str:
    if row.op_index is None:
        return REMEDY
    return f"fx16 (op {row.op_index}), rescaled weights or FULL_ACCU"


def accuracy_section(rows: list[LayerAccuracy], max_reduced_lsb: int = 1) -> Section:
    table = make_table(
        "accuracy-layers",
        "Per-layer accuracy",
        [
            ("layer", "Layer"),
            ("op_index", "TFLite op"),
            ("op_type", "Op"),
            ("kind", "Kind"),
            ("snr_chained_db", "SNR chained", "dB", 2),
            ("snr_isolated_db", "SNR isolated", "dB", 2),
            ("max_abs_lsb", "Max error", "LSB"),
            ("reduced_accu_lsb", "Reduced accumulator cost", "LSB"),
            ("remedy", "Remedy", "", 3, False),
        ],
        [
            (
                r.position,
                r.op_index,
                r.op_type,
                r.kind,
                r.snr_chained_db,
                r.snr_isolated_db,
                r.max_abs_lsb,
                r.reduced_accu_lsb,
                remedy(r)
                if r.reduced_accu_lsb is not None and r.reduced_accu_lsb > max_reduced_lsb
                else "",
            )
            for r in rows
        ],
        note=f"SNR against the float model: chained = the whole network in MLI arithmetic up to "
        f"this layer, isolated = this layer alone fed the float values. Max error: chained "
        f"MLI output against tflite mode (int8 models). Reduced accumulator cost: largest "
        f"output difference with FULL_ACCU off against on, layer isolated; above "
        f"{max_reduced_lsb} LSB the layer is named with a remedy. {REMEDY_NOTE}",
    )
    chart = Chart(
        "snr-layers",
        "SNR per layer: chained vs isolated",
        "bars",
        tuple(layer_label(r.position, r.kind) for r in rows),
        (
            Series("chained", tuple(r.snr_chained_db for r in rows)),
            Series("isolated", tuple(r.snr_isolated_db for r in rows)),
        ),
        x_label="layer",
        y_label="SNR [dB]",
        precision=2,
    )
    return Section("accuracy", "Accuracy", (), (table,), (chart,))


# --- the whole report ---------------------------------------------------------------------------


def build_report(
    model: MliModel,
    graph: ir.Graph | None = None,
    *,
    align: int | None = None,
    snr_threshold_db: float = DEFAULT_SNR_THRESHOLD_DB,
    accuracy: list[LayerAccuracy] | None = None,
    title: str | None = None,
    activations: dict[str, ActivationObservation] | None = None,
) -> Report:
    from mlitool import __version__

    mem = memory_report(model, graph, align)
    sections = [
        summary_section(model, graph),
        memory_section(model, mem),
        quant_section(quant_stats(model, graph, snr_threshold_db, activations), snr_threshold_db),
    ]
    if accuracy is not None:
        sections.append(accuracy_section(accuracy))
    name = os.path.basename(model.source) or "model"
    return Report(
        title or f"mlitool report: {name}",
        (
            ("generator", f"mlitool {__version__}"),
            ("model", name),
            ("target", f"MLI {model.mli_version}"),
            ("format", model.format),
        ),
        tuple(sections),
        tuple(model.warnings),
    )


def table_rows(table: Table) -> list[dict]:
    """Rows as dicts keyed by column key (for tests and callers)."""
    return [dict(zip((c.key for c in table.columns), row)) for row in table.rows]


__all__ = [
    "build_report",
    "summary_section",
    "memory_section",
    "quant_stats",
    "quant_section",
    "accuracy_section",
    "LayerAccuracy",
    "remedy",
    "REMEDY_NOTE",
    "LayerTensorStats",
    "weight_histogram",
    "table_rows",
    "Column",
]
