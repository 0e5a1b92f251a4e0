"""The quantization section of the report: per-tensor statistics of every layer's constants and
activations (`quant_stats`), risk flags, the spread of per-channel weight scales and weight
histograms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.mli.ops import MAC_KINDS
from mlitool.mli.types import MliModel, Role
from mlitool.report.document import Chart, Section, Series, make_table
from mlitool.report.layer_names import layer_label
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
