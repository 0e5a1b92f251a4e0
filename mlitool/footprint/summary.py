"""RAM, ROM and MACs of a converted model, and the one summary line that gives them first on
`convert`, `verify` and `report` (one definition of each figure, used by every command).

The image the model links into (`mlitool.footprint.image` says where each part comes from):
ROM = constants (`memory.rom_bytes`: constant data, per-axis arrays, const tensor and
config structs, report's "ROM total") + the const look-up tables + model code (NAME_init,
NAME_run, fallback kernels) + the .data image of the writable tensor structs + the MLI kernel
code the model links. RAM = the activation arena the emitted header defines
(`NAME_ARENA_BYTES`; with --fast-memory the fast and slow buffers, `NAME_FAST_BYTES` +
`NAME_SLOW_BYTES`) + the writable structs + .bss (recurrent scratch, the runtime's flags; with
--fast-memory the tables' structs). MACs: the TFLite graph's, as `inspect` counts them.
"""

from __future__ import annotations

from typing import Any

from mlitool import ir
from mlitool.mli.types import MliModel


def footprint(
    graph: ir.Graph, mli: MliModel, fast_memory: int | None = None, specialize: bool = True
) -> dict[str, Any]:
    """{"ram_bytes", "rom_bytes", "ram": {...}, "rom": {...}, "arena": {...}, "macs",
    "mli_functions", "mli_code_table"}: each part named, the arena as the runtime binds it;
    `specialize`: the C calls the kernel-size specializations (convert's default)."""
    from mlitool.inspect.opstats import graph_totals

    parts = image_parts(mli, fast_memory, specialize)
    return {
        "ram_bytes": sum(parts["ram"].values()),
        "rom_bytes": sum(parts["rom"].values()),
        **parts,
        "macs": graph_totals(graph)["macs"],
    }


def image_parts(
    mli: MliModel, fast_memory: int | None = None, specialize: bool = True
) -> dict[str, Any]:
    """{"rom": {...}, "ram": {...}, "arena": {...}, "mli_functions", "mli_code_table"}: the parts
    of the linked image (`mlitool.footprint.image`), as the footprint, the manifest and `report` name them."""
    from mlitool.footprint import image
    from mlitool.footprint.memory import rom_bytes

    plan = None
    if fast_memory is None:
        from mlitool.mli.memory.arena import model_arena

        arena = {"arena_bytes": model_arena(mli).arena_bytes}
    else:
        from mlitool.mli.memory.placement import plan_model

        plan = plan_model(mli, fast_memory)
        arena = {"fast_bytes": plan.fast_bytes, "slow_bytes": plan.slow_bytes}
    functions = image.mli_functions(mli, plan, specialize)
    mli_code = image.mli_code_bytes(functions)
    structs = image.writable_struct_bytes(mli)
    table = image.code_table()
    return {
        "rom": {
            "constants": rom_bytes(mli),
            "lut_tables": image.lut_table_bytes(mli, fast_memory),
            "model_code": image.model_code_bytes(mli, plan),
            "writable_structs": structs,
            "mli_code": mli_code or 0,
        },
        "ram": {**arena, "writable_structs": structs, "bss": image.bss_bytes(mli, plan)},
        "arena": arena,
        "mli_functions": functions,
        "mli_code_table": None
        if mli_code is None
        else f"{image.TABLE}: {table['target']}, {table['toolchain']}",
    }


def footprint_text(fp: dict[str, Any]) -> str:
    """ "RAM 67,076 B (arena 64,512 + structs 2,560 + bss 4), ROM 265,218 B (constants 240,812
    + tables 748 + code 1,582 + structs 2,560 + MLI 19,516), 7,489,664 MACs"."""
    ram, rom = fp["ram"], fp["rom"]
    where = (
        f"arena {ram['arena_bytes']:,}"
        if "arena_bytes" in ram
        else f"fast {ram['fast_bytes']:,} + slow {ram['slow_bytes']:,}"
    )
    mli = f"MLI {rom['mli_code']:,}" if fp.get("mli_code_table") else "MLI code not counted"
    return (
        f"RAM {fp['ram_bytes']:,} B ({where} + structs {ram['writable_structs']:,} + bss "
        f"{ram['bss']:,}), ROM {fp['rom_bytes']:,} B (constants {rom['constants']:,}"
        + (f" + tables {rom['lut_tables']:,}" if rom.get("lut_tables") else "")
        + f" + code "
        f"{rom['model_code']:,} + structs {rom['writable_structs']:,} + {mli}), "
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
