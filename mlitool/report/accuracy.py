"""Report sections from executed figures: accuracy (the `verify` document) and per-layer
sensitivity (`mlitool.report.sensitivity`).

Rows are per TFLite op (what verify measures and what config overrides name), labelled with the
position and kind of the op's main MLI layer, so they line up with the memory and quantization
sections (which are per MLI layer).
"""

from __future__ import annotations

from typing import Any

from mlitool.mli.ops import WEIGHTED_KINDS
from mlitool.mli.types import MliModel
from mlitool.report.build import REMEDY_NOTE, LayerAccuracy, accuracy_section, remedy
from mlitool.report.document import Chart, Column, Section, Series, make_table
from mlitool.report.layer_names import layer_label
from mlitool.report.sensitivity import LayerSensitivity


def _num(v) -> float | int | None:
    """A verify figure back as a number ("inf" / "-inf" / "nan" strings included)."""
    if v is None or isinstance(v, (int, float)):
        return v
    return float(v)


def main_layers(model: MliModel) -> dict[int, tuple[int, str]]:
    """TFLite op index -> (position, kind) of its main MLI layer: the first that does its
    weighted work (a MAC kernel, an LSTM cell), else the first that is not an inserted convert
    or copy (an LSTM's state reset), else its first layer."""

    def rank(kind: str) -> int:
        return 0 if kind in WEIGHTED_KINDS else 2 if kind in ("convert", "copy") else 1

    out: dict[int, tuple[int, str]] = {}
    for pos, layer in enumerate(model.layers):
        have = out.get(layer.index)
        if have is None or rank(layer.kind) < rank(have[1]):
            out[layer.index] = (pos, layer.kind)
    return out


def accuracy_rows(doc: dict[str, Any], model: MliModel) -> list[LayerAccuracy]:
    main = main_layers(model)
    rows = []
    for entry in doc["layers"]:
        pos, kind = main.get(entry["op"], (None, ""))
        accu = entry.get("reduced_accumulator")
        rows.append(
            LayerAccuracy(
                position=pos,
                kind=kind,
                snr_chained_db=_num(entry["chained"]["snr_db"]),
                snr_isolated_db=_num(entry["isolated"]["snr_db"]),
                max_abs_lsb=entry["chained"].get("max_lsb"),
                reduced_accu_lsb=accu["max_lsb"] if accu else None,
                op_index=entry["op"],
                op_type=entry["type"],
            )
        )
    return rows


def accuracy_from_verify(
    doc: dict[str, Any], model: MliModel, flag_snr: float | None = None
) -> Section:
    """Per-layer table and charts (`build.accuracy_section`) with the thresholds drawn (SNR:
    --min-snr, else the flag threshold `flag_snr`; LSB: --max-lsb), output metrics with top-1
    agreement, and the layers the reduced accumulator costs more than its limit."""
    ra = doc["reduced_accumulator"]
    th = doc["thresholds"]
    snr_line = lsb_line = None
    if th["min_snr"] is not None:
        snr_line = (th["min_snr"], f"--min-snr {th['min_snr']:g} dB")
    elif flag_snr is not None:
        snr_line = (flag_snr, f"--min-snr-flag {flag_snr:g} dB")
    if th["max_lsb"] is not None:
        lsb_line = (th["max_lsb"], f"--max-lsb {th['max_lsb']:g}")
    base = accuracy_section(
        accuracy_rows(doc, model), ra["limit_lsb"], snr_line=snr_line, lsb_line=lsb_line
    )
    outputs = make_table(
        "accuracy-outputs",
        "Model outputs",
        [
            ("tensor", "Output"),
            ("snr_db", "SNR vs float", "dB", 2),
            ("max_abs_err", "Max abs error", "", 6),
            ("rmse", "RMSE", "", 6),
            ("cosine", "Cosine", "", 6),
            Column("tflite_differing", "Differing from tflite", precision=4, percent=True),
            ("tflite_max_lsb", "Max diff. from tflite", "LSB"),
            Column("top1_float", "Top-1 agreement vs float", precision=4, percent=True),
            Column("top1_tflite", "Top-1 agreement vs tflite", precision=4, percent=True),
        ],
        [
            (
                o["tensor"],
                _num(o["vs_float"]["snr_db"]),
                o["vs_float"]["max_abs_err"],
                o["vs_float"]["rmse"],
                o["vs_float"]["cosine"],
                o.get("vs_tflite", {}).get("differing_share"),
                o.get("vs_tflite", {}).get("max_lsb"),
                o.get("top1", {}).get("vs_float"),
                o.get("top1", {}).get("vs_tflite"),
            )
            for o in doc["outputs"]
        ],
        note="Whole model in MLI arithmetic against the float model (and against tflite mode, "
        "the TFLite integer reference, for int8 models). Top-1: share of samples whose "
        "largest class agrees (one vector of class scores)."
        + "".join(
            f" No top-1 for {o['tensor']}: {o['top1_blank']}."
            for o in doc["outputs"]
            if o.get("top1_blank")
        )
        + (
            f" No tflite reference: {doc['references']['tflite_refusal']}."
            if doc["references"].get("tflite_refusal")
            else ""
        ),
    )
    main = main_layers(model)
    named = [
        LayerAccuracy(
            main.get(e["op"], (None, ""))[0],
            main.get(e["op"], (None, ""))[1],
            None,
            None,
            None,
            e["max_lsb"],
            e["op"],
            e["type"],
        )
        for e in ra["layers"]
    ]
    accu = make_table(
        "reduced-accumulator",
        f"Layers the reduced accumulator costs more than {ra['limit_lsb']} LSB",
        [
            ("layer", "Layer"),
            ("op_index", "TFLite op"),
            ("op_type", "Op"),
            ("cost_lsb", "Cost", "LSB"),
            ("differing_share", "Differing elements", "", 4),
            ("remedy", "Remedy"),
        ],
        [
            (r.position, r.op_index, r.op_type, r.reduced_accu_lsb, e["differing_share"], remedy(r))
            for r, e in zip(named, ra["layers"])
        ],
        note=f"{ra['compared']}; {ra['layers_checked']} SA8 MAC layer(s) checked, worst "
        f"{ra['worst']} LSB. {REMEDY_NOTE}",
    )
    inputs = doc["inputs"]
    source = inputs.get("note") or f"inputs from {inputs['source']}"
    text = (
        f"{inputs['samples']} sample(s); {source}.",
        f"MLI arithmetic: {doc['arith']['build']}.",
    )
    return Section(base.id, base.title, text, base.tables + (outputs, accu), base.charts)


def sensitivity_section(rows: list[LayerSensitivity], doc: dict[str, Any] | None = None) -> Section:
    """One row per MAC layer: model output SNR with only that layer in MLI arithmetic."""
    isolated = {e["op"]: _num(e["isolated"]["snr_db"]) for e in (doc or {}).get("layers", [])}
    order = sorted(range(len(rows)), key=lambda k: (rows[k].output_snr_db, rows[k].position))
    rank = {k: r + 1 for r, k in enumerate(order)}
    has_top1 = any(r.top1 is not None for r in rows)
    cols = [
        ("layer", "Layer"),
        ("op_index", "TFLite op"),
        ("op_type", "Op"),
        ("kind", "Kind"),
        ("output_snr_db", "Output SNR, only this layer in MLI", "dB", 2),
    ]
    cols += [Column("top1", "Top-1 agreement", precision=4, percent=True)] if has_top1 else []
    cols += [("layer_snr_db", "Layer SNR isolated", "dB", 2), ("rank", "Rank")]
    table_rows = []
    for k, r in enumerate(rows):
        row = [r.position, r.op_index, r.op_type, r.kind, r.output_snr_db]
        row += [r.top1] if has_top1 else []
        table_rows.append((*row, isolated.get(r.op_index), rank[k]))
    table = make_table(
        "sensitivity",
        "Per-layer sensitivity",
        cols,
        table_rows,
        note="Every layer float except this one, which runs in MLI arithmetic (its float input "
        "encoded into its MLI input tensor, its output decoded back); SNR of the model "
        "outputs against the all-float model. Rank 1 = most sensitive: the first layer to "
        "keep in a wider format (fx16).",
    )
    worst = [rows[k] for k in order[:3]]
    text = ()
    if worst:
        text = (
            "Most sensitive: "
            + "; ".join(
                f"layer {r.position} (TFLite op {r.op_index}, {r.op_type}) {r.output_snr_db:.2f} dB"
                for r in worst
            )
            + ".",
        )
    chart = Chart(
        "sensitivity",
        "Output SNR with only one layer in MLI arithmetic",
        "bars",
        tuple(layer_label(r.position, r.kind) for r in rows),
        (Series("only this layer in MLI", tuple(r.output_snr_db for r in rows)),),
        x_label="layer",
        y_label="output SNR [dB]",
        precision=2,
    )
    return Section("sensitivity", "Per-layer sensitivity", text, (table,), (chart,))


__all__ = ["accuracy_rows", "accuracy_from_verify", "sensitivity_section", "main_layers"]
