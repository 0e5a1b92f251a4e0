"""The manifest's `runtime.fast_memory`: the plan of a `convert --fast-memory` conversion (budget,
fast and slow bytes, staging, where each buffer lives, per-layer bytes moved and tiles)."""

from __future__ import annotations

from mlitool.mli.placement import plan_figures


def fast_memory_manifest(rt) -> dict:
    """`rt`: the `mlitool.emit.fast_runtime.FastRuntime` whose plan this is."""
    p, fs = rt.fplan, rt.fs
    name = {k: i.sym.name for k, i in rt.by_key.items()}
    figures = plan_figures(p, rt.model)
    for row, st in zip(figures["layers"], p.layers):
        row["activations_staged"] = [name[s.name] for s in st.activations]
    return {
        **figures,
        "align": p.align,
        "macros": {
            "fast_bytes": fs.fast_bytes,
            "slow_bytes": fs.slow_bytes,
            "align": rt.rt.arena_align,
            "check_operands": fs.check_operands,
        },
        "luts": dict(p.luts),
        "buffers": [
            {
                "tensor": name[b.name],
                "name": b.name,
                "memory": rt.fplan.home(b.name)[0],
                "offset": rt.fplan.home(b.name)[1],
                "bytes": b.size,
                "first_layer": b.first,
                "last_layer": b.last,
            }
            for b in rt._buffers()
        ],
    }
