"""tune's JSON document, from the search's record."""

from __future__ import annotations

import dataclasses
from typing import Any

from mlitool.tune import goal as G
from mlitool.tune import mixes as X


def document(
    model_path, graph, s, opts, steps, chosen, mix, choices, all_fx16, search, warnings, job
) -> dict[str, Any]:
    """The search's record as tune's JSON document: the settings, every step (the Pareto
    table), the chosen mix with the step and gain of each layer's format, the verdict."""
    from mlitool.execute.mli.presets import describe
    from mlitool.verify.document import _input_note

    t = opts.targets
    arith = job["arith"]
    figs = steps[chosen]
    reasons = G.failed(figs, t)
    counts = {f: 0 for f in X.FORMATS}
    for i in choices:
        counts[mix.get(i, "sa8")] += 1
    layers = []
    for i in sorted(mix):  # each with the step that gave it its format
        st, c = [(x, c) for x in steps[1 : chosen + 1] for c in x["change"] if c["op"] == i][-1]
        layers.append({**c, "format": mix[i], "step": st["step"], "gain": st["gain"]})
    return {
        "model": str(model_path),
        "config": s.config,
        "mli": s.target.version,
        "arith": {
            "round_mode": arith.round_mode,
            "full_accu": arith.full_accu,
            "build": describe(arith),
        },
        "inputs": {**_input_note(opts, graph), "samples": job["samples"]},
        "labels": None if opts.labels is None else str(opts.labels),
        "targets": dataclasses.asdict(t),
        "fast_memory": s.fast_memory,
        "candidates": {str(i): list(f) for i, f in choices.items()},
        "steps": steps,
        "all_fx16": all_fx16,
        "chosen": {
            "step": chosen,
            "formats": counts,
            "layers": layers,
            **{k: figs[k] for k in ("snr_db", "max_lsb", "accuracy", "ram_bytes", "rom_bytes")},
        },
        "met": not reasons,
        "failed": reasons,
        "search": search,
        "warnings": warnings,
    }
