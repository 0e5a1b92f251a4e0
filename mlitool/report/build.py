"""Turns an `MliModel` (and the IR graph it came from) into the report document.

Sections: summary and memory (`mlitool.report.sections`: ROM per layer, arena placement),
quantization (`mlitool.report.quant_section`: per-tensor statistics, risk flags, scale spread,
weight histograms) and, once the executor provides the figures, accuracy (`accuracy_section`,
here: per-layer SNR chained / isolated and the reduced-accumulator cost).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mlitool import ir
from mlitool.footprint.memory import memory_report
from mlitool.mli.memory.placement import FastPlan
from mlitool.mli.types import MliModel
from mlitool.report.document import Chart, Column, Report, Section, Series, Table, make_table
from mlitool.report.layer_names import layer_label
from mlitool.report.quant_section import quant_section, quant_stats
from mlitool.report.quant_stats import DEFAULT_SNR_THRESHOLD_DB, ActivationObservation
from mlitool.report.sections import memory_section, summary_section

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


def accuracy_section(
    rows: list[LayerAccuracy],
    max_reduced_lsb: int = 1,
    snr_line: tuple[float, str] | None = None,
    lsb_line: tuple[float, str] | None = None,
) -> Section:
    """Per-layer table, SNR chart (with `snr_line`, a threshold, drawn) and, where tflite mode
    gives LSB figures (int8 models), the LSB chart (with `lsb_line`)."""
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
        lines=(snr_line,) if snr_line else (),
    )
    charts = [chart]
    if any(r.max_abs_lsb is not None for r in rows):
        charts.append(
            Chart(
                "lsb-layers",
                "Max error per layer against tflite mode",
                "bars",
                chart.categories,
                (Series("chained", tuple(r.max_abs_lsb for r in rows)),),
                x_label="layer",
                y_label="max error [LSB]",
                precision=0,
                lines=(lsb_line,) if lsb_line else (),
            )
        )
    return Section("accuracy", "Accuracy", (), (table,), tuple(charts))


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
    fast: FastPlan | None = None,
    random_inputs: bool = True,
) -> Report:
    """`activations`: what the samples showed (`random_inputs`: they were random, not the
    user's --input), for the quantization figures and the findings; `fast`: the plan of
    `convert --fast-memory` (the memory section shows it)."""
    from mlitool import __version__
    from mlitool.report.findings import findings_section

    mem = memory_report(model, graph, align)
    stats = quant_stats(model, graph, snr_threshold_db, activations)
    sections = [
        summary_section(model, graph),
        findings_section(model, stats, snr_threshold_db, random_inputs),
        memory_section(model, mem, fast),
        quant_section(stats, snr_threshold_db),
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
    "table_rows",
    "Column",
]
