"""RAM, ROM and MACs of a converted model, and the one summary line that gives them first on
`convert`, `verify` and `report` (one definition of each figure, used by every command).

RAM: the activation arena the emitted header defines (`NAME_ARENA_BYTES`; with --fast-memory the
fast and slow buffers, `NAME_FAST_BYTES` + `NAME_SLOW_BYTES`). ROM: `memory.rom_bytes`
(constant data + per-axis arrays + const tensor and config structs, report's "ROM total").
MACs: the TFLite graph's, as `inspect` counts them.
"""

from __future__ import annotations

from typing import Any

from mlitool import ir
from mlitool.mli.types import MliModel


def footprint(graph: ir.Graph, mli: MliModel, fast_memory: int | None = None) -> dict[str, Any]:
    """{"ram_bytes", "rom_bytes", "macs", "arena": {...}}: the arena as the runtime binds it."""
    from mlitool.footprint.memory import rom_bytes
    from mlitool.inspect.opstats import graph_totals

    if fast_memory is None:
        from mlitool.mli.memory.arena import model_arena

        arena = {"arena_bytes": model_arena(mli).arena_bytes}
    else:
        from mlitool.mli.memory.placement import plan_model

        plan = plan_model(mli, fast_memory)
        arena = {"fast_bytes": plan.fast_bytes, "slow_bytes": plan.slow_bytes}
    return {
        "ram_bytes": sum(arena.values()),
        "arena": arena,
        "rom_bytes": rom_bytes(mli),
        "macs": graph_totals(graph)["macs"],
    }


def footprint_text(fp: dict[str, Any]) -> str:
    """ "RAM 64,512 B (arena), ROM 251,244 B (data+structs), 7,489,664 MACs"."""
    arena = fp["arena"]
    where = (
        "arena"
        if "arena_bytes" in arena
        else f"fast {arena['fast_bytes']:,} + slow {arena['slow_bytes']:,}"
    )
    return (
        f"RAM {fp['ram_bytes']:,} B ({where}), ROM {fp['rom_bytes']:,} B (data+structs), "
        f"{fp['macs']:,} MACs"
    )


def accuracy_text(doc: dict[str, Any]) -> str:
    """Verify's answer at the outputs (its document `doc`): the worst output SNR against float,
    the largest LSB difference against tflite mode, the lowest top-1 agreement, and the
    accuracy against --labels."""
    outs = doc["outputs"]
    snrs = [_num(o["vs_float"]["snr_db"]) for o in outs if o["vs_float"]["snr_db"] is not None]
    parts = [f"output SNR {min(snrs):.2f} dB vs float" if snrs else "output SNR -"]
    lsbs = [o["vs_tflite"]["max_lsb"] for o in outs if "vs_tflite" in o]
    if lsbs:
        parts.append(f"max {max(lsbs)} LSB vs tflite")
    tops = [o["top1"] for o in outs if "top1" in o]
    if tops:
        agree = f"top-1 agreement {100 * min(t['vs_float'] for t in tops):.1f}% float"
        if all("vs_tflite" in t for t in tops):
            agree += f", {100 * min(t['vs_tflite'] for t in tops):.1f}% tflite"
        parts.append(agree)
    text = ", ".join(parts)
    if "labels" in doc:
        acc, d = doc["labels"]["accuracy"], doc["labels"]["top1_drop_mli_vs_float"]
        text += (
            f", labels: top-1 {100 * acc['mli']['top1']:.1f}% (float "
            f"{100 * acc['float']['top1']:.1f}%, drop {100 * d['drop']:.1f} points, 95% CI "
            f"{100 * d['ci95'][0]:.1f} to {100 * d['ci95'][1]:.1f})"
        )
    return text


def _num(v) -> float:
    return float(v) if isinstance(v, str) else v  # "inf" (identical outputs) as JSON writes it
