"""The manifest's `runtime.fast_memory`: the plan of a `convert --fast-memory` conversion (budget,
fast and slow bytes, staging, where each buffer lives, per-layer bytes moved and tiles)."""

from __future__ import annotations


def fast_memory_manifest(rt) -> dict:
    """`rt`: the `mlitool.emit.fast_runtime.FastRuntime` whose plan this is."""
    p, fs = rt.fplan, rt.fs
    name = {k: i.sym.name for k, i in rt.by_key.items()}
    return {
        "budget": p.budget,
        "fast_bytes": p.fast_bytes,
        "slow_bytes": p.slow_bytes,
        "align": p.align,
        "macros": {
            "fast_bytes": fs.fast_bytes,
            "slow_bytes": fs.slow_bytes,
            "align": rt.rt.arena_align,
            "check_operands": fs.check_operands,
        },
        "staging": {"offset": p.staging_offset, "bytes": p.staging_bytes},
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
        "layers": [
            {
                "layer": pos,
                "constants_bytes": sum(s.bytes for s in (*st.constants, *st.chan_slots)),
                "activations_staged": [name[s.name] for s in st.activations],
                "bytes_moved": st.bytes_moved,
                "tiles": st.calls if la.kernel else 0,
            }
            for (pos, st), la in zip(enumerate(p.layers), rt.model.layers)
        ],
        "bytes_moved": p.bytes_moved,
        "lower_bound_moved": p.lower_bound_moved,
        "tiled_layers": sum(st.calls > 1 for st in p.layers),
    }
