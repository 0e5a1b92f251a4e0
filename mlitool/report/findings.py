"""What the report's verdict rests on: the quantization flags split into findings (they change
what the deployed C computes: REVIEW) and notes (informational), each naming its tensor as TFLite
and the generated C call it.

The rule: a flag is a finding when it is a property of the C itself (a constant whose values
the C holds differently from the model: low SNR, clipped values, channels requantization zeroed;
parameters at the limit of their C field) or when it was seen on the user's own inputs
(--input). It is a note when the C computes exactly what the model does (weight channels the
model itself has at zero: trained to zero; the output range a kernel fixes, e.g. softmax's
[0, 255/256], which cannot hold 1.0 in TFLite either) or when it was seen only on random inputs,
which reach values real data may never produce (activation saturation and low SNR without
--input).
"""

from __future__ import annotations

from pathlib import Path

from mlitool.mli.ops import OUTPUT_PARAMS, FixedParams
from mlitool.mli.types import MliModel
from mlitool.report.document import Section, make_table
from mlitool.report.layer_names import layer_label

_ACTIVATIONS = ("input", "output", "activation")


def classify(stats, snr_threshold_db: float, random_inputs: bool) -> tuple[list, list]:
    """(findings, notes): (LayerTensorStats, text) per flagged tensor, in model order."""
    findings, notes = [], []
    for ls in stats:
        if ls.kind == "view":  # computes nothing: the layer writing its buffer is listed
            continue
        s = ls.stats
        deployed, info = [], []
        observed = s.role in _ACTIVATIONS  # figures from the executed samples
        where = "on random inputs only" if random_inputs else "on your --input"
        fixed = observed and isinstance(OUTPUT_PARAMS.get(ls.kind), FixedParams)
        if fixed:  # the kernel's own output range: informational, wherever seen
            where += f" (the range {ls.kind} fixes, in TFLite too)"
        info_only = random_inputs or fixed
        if "low_snr" in s.flags:
            text = f"quantization SNR {s.snr_db:.2f} dB < {snr_threshold_db:g} dB"
            if observed:
                (info if info_only else deployed).append(f"{text} {where}")
            else:
                deployed.append(f"{text}: the C's {s.role} differ from the model's")
        if "saturation" in s.flags:
            if observed:
                text = f"{s.saturated:,} value(s) beyond the range {where}"
                (info if info_only else deployed).append(
                    text + ("" if info_only else ": the C clips them")
                )
            else:
                deployed.append(f"{s.saturated:,} {s.role} value(s) clipped in the C")
        if "frac_bits_limit" in s.flags:
            deployed.append("frac bits at the limit of their C field")
        if "zero_channel" in s.flags:
            trained = s.zero_channels - s.zeroed_channels
            if s.zeroed_channels:
                deployed.append(f"{s.zeroed_channels} channel(s) zeroed by requantization")
            if trained:
                info.append(f"{trained} channel(s) all zero in the model too (trained to zero)")
        if deployed:
            findings.append((ls, "; ".join(deployed)))
        if info:
            notes.append((ls, "; ".join(info)))
    return findings, notes


def c_symbols(model: MliModel) -> dict[str, str]:
    """MLI tensor name -> its mli_tensor's C name, as `convert` (default --name) writes it."""
    from mlitool.emit.symbols import make_symbols
    from mlitool.errors import OptionError

    try:
        syms = make_symbols(model, Path(model.source).stem, runtime=True)
    except OptionError:  # a file name convert needs --name for
        syms = make_symbols(model, "model", runtime=True)
    return {k: v.name for k, v in syms.tensors.items()}


def findings_section(
    model: MliModel, stats, snr_threshold_db: float, random_inputs: bool
) -> Section:
    """Tables `findings` and `notes` (one row per tensor)."""
    findings, notes = classify(stats, snr_threshold_db, random_inputs)
    symbols = c_symbols(model)
    # what and the C name first: at 80 columns the long fused TFLite names wrap last
    cols = [
        ("layer", "Layer"),
        ("c_symbol", "C symbol"),
        ("what", "What"),
        ("tensor", "TFLite tensor"),
    ]

    def rows(items):
        return [
            (layer_label(ls.position, ls.kind), symbols.get(ls.stats.name, ""), text, ls.stats.name)
            for ls, text in items
        ]

    text = (
        f"{len(findings)} finding(s) change what the deployed C computes (REVIEW them)"
        if findings
        else "No finding changes what the deployed C computes"
    ) + (f"; {len(notes)} note(s), informational." if notes else ".")
    return Section(
        "findings",
        "Findings and notes",
        (text,),
        (
            make_table(
                "findings",
                "Findings",
                cols,
                rows(findings),
                note="They change what the deployed C computes: REVIEW them (constants the C "
                "holds differently from the model, parameters at the limit of their C field, "
                "values clipped on your --input).",
            ),
            make_table(
                "notes",
                "Notes",
                cols,
                rows(notes),
                note="Informational: the C computes what the model does (weight channels "
                "trained to zero), or seen only on random inputs (give --input with real data).",
            ),
        ),
    )
