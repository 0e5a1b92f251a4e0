"""Report sections read from the lowered model alone: the summary (with the lowering decisions)
and memory (ROM per layer, arena placement, the fast-memory plan's figures)."""

from __future__ import annotations

import os

from mlitool import ir
from mlitool.footprint.memory import MemoryReport
from mlitool.mli.memory.placement import FastPlan, plan_figures
from mlitool.mli.types import MliModel
from mlitool.report.arena_charts import arena_charts
from mlitool.report.document import Chart, Section, Series, make_table
from mlitool.report.layer_names import layer_label

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
    fallbacks = [layer for layer in model.layers if layer.kind == "fallback"]
    rows += [
        ("MLI layers", len(model.layers)),
        ("kernel calls", calls),
        (
            "fallback C layers",
            f"{len(fallbacks)} ({', '.join(sorted({la.op_type for la in fallbacks}))})"
            if fallbacks
            else 0,
        ),
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


def fast_memory_tables(model: MliModel, plan: FastPlan):
    """The plan's figures (`mlitool.mli.memory.placement.plan_figures`, as the manifest gives them)
    and its bytes moved and tiles per layer."""
    fig = plan_figures(plan, model)
    items = [
        ("budget", "budget (--fast-memory)", fig["budget"]),
        ("fast_bytes", "fast buffer (NAME_FAST_BYTES)", fig["fast_bytes"]),
        ("slow_bytes", "slow arena (NAME_SLOW_BYTES)", fig["slow_bytes"]),
        ("resident_bytes", "resident activations (in the fast buffer)", plan.resident.arena_bytes),
        ("staging_bytes", "staging area (in the fast buffer)", fig["staging"]["bytes"]),
        ("bytes_moved", "bytes moved per inference", fig["bytes_moved"]),
        ("lower_bound_moved", "lower bound of the bytes moved", fig["lower_bound_moved"]),
        ("tiled_layers", "layers in more than one call", fig["tiled_layers"]),
    ]
    totals = make_table(
        "fast-memory",
        "Fast memory plan",
        [("figure", "Figure"), ("item", "Item"), ("value", "Value")],
        items,
        note="Every kernel operand lies in the fast buffer at the call: resident activations, "
        "the staging area the layers copy their constants and slow activations into "
        "(mli_mov_tensor_sync), the look-up tables. Lower bound of the bytes moved: every "
        "constant once, each slow activation buffer once each way.",
    )
    layers = make_table(
        "fast-memory-layers",
        "Fast memory: bytes moved and tiles per layer",
        [
            ("position", "Layer"),
            ("op_index", "TFLite op"),
            ("kind", "Kind"),
            ("tiles", "Calls"),
            ("constants_bytes", "Constants staged", "B"),
            ("bytes_moved", "Bytes moved", "B"),
        ],
        [
            (row["layer"], la.index, la.kind, row["tiles"], row["constants_bytes"])
            + (row["bytes_moved"],)
            for row, la in zip(fig["layers"], model.layers)
        ],
        note="Calls: 1 for a layer whose operands fit whole, more for one tiled by output rows "
        "and/or sliced by output channels, 0 for one without a kernel call. Bytes moved: "
        "constants staged (per row tile when sliced), activations copied in and out.",
    )
    return totals, layers


def memory_section(model: MliModel, mem: MemoryReport, fast: FastPlan | None = None) -> Section:
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
    arena, ram = _arena_table(mem, fast), _ram_table(model, mem, fast)
    linked = _image_table(model, fast)
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
    plans = arena_charts(model, mem.arena, fast)
    tables = (rom, totals, compare, arena, ram, linked)
    if fast is not None:
        tables += fast_memory_tables(model, fast)
    return Section("memory", "Memory", (), tables, (*plans, chart))


def _arena_table(mem: MemoryReport, fast: FastPlan | None):
    note = (
        "A buffer lives from the layer that writes it to the last layer that reads it (inputs "
        "from the start, outputs to the end); views share their buffer. Greedy-by-size placement"
    )
    cols = [
        ("buffer", "Buffer"),
        ("bytes", "Bytes", "B"),
        ("first", "First layer"),
        ("last", "Last layer"),
        ("offset", "Offset", "B"),
        ("end", "End", "B"),
    ]
    if fast is None:
        rows = [
            (p.buffer.name, p.buffer.size, p.buffer.first, p.buffer.last, p.offset, p.end)
            for p in mem.arena.placements
        ]
        return make_table("arena", "Activation arena placement", cols, rows, note=note + ".")
    placed = [("fast", p) for p in fast.resident.placements]
    placed += [("slow", p) for p in fast.slow.placements]
    placed.sort(key=lambda wp: (wp[1].buffer.first, wp[1].buffer.name))
    rows = [
        (p.buffer.name, where, p.buffer.size, p.buffer.first, p.buffer.last, p.offset, p.end)
        for where, p in placed
    ]
    return make_table(
        "arena",
        "Activation placement: fast buffer and slow arena",
        [cols[0], ("memory", "Memory"), *cols[1:]],
        rows,
        note=note + ", in the fast buffer (resident) and in the slow arena (copied into the "
        "staging area around the layers that use them); offsets from each one's start.",
    )


def _image_table(model: MliModel, fast: FastPlan | None):
    """The footprint's parts: the image the model links into on ARC HS (`mlitool.footprint.image`)."""
    from mlitool.footprint.summary import image_parts

    parts = image_parts(model, None if fast is None else fast.budget)
    rom, ram = parts["rom"], parts["ram"]
    where = (
        [("RAM: arena", ram["arena_bytes"])]
        if "arena_bytes" in ram
        else [("RAM: fast buffer", ram["fast_bytes"]), ("RAM: slow arena", ram["slow_bytes"])]
    )
    rows = [
        ("ROM: constants", rom["constants"]),
        ("ROM: look-up tables (const)", rom["lut_tables"]),
        ("ROM: model code (estimated)", rom["model_code"]),
        ("ROM: writable struct image (.data)", rom["writable_structs"]),
        ("ROM: MLI kernel code", rom["mli_code"] if parts["mli_code_table"] else None),
        ("ROM total (the footprint)", sum(rom.values())),
        *where,
        ("RAM: writable structs (.data)", ram["writable_structs"]),
        ("RAM: .bss (scratch, flags)", ram["bss"]),
        ("RAM total (the footprint)", sum(ram.values())),
    ]
    kernels = ", ".join(parts["mli_functions"]) or "none"
    table = parts["mli_code_table"] or "no measured table for this MLI version: not counted"
    return make_table(
        "image",
        "Linked image (the footprint)",
        [("item", "Item"), ("bytes", "Bytes", "B")],
        rows,
        note=f"MLI functions linked: {kernels}. MLI kernel code from {table}.",
    )


def _ram_table(model: MliModel, mem: MemoryReport, fast: FastPlan | None):
    cols = [("item", "Item"), ("bytes", "Bytes", "B")]
    if fast is None:
        rows = [
            ("arena (shared placement)", mem.arena.arena_bytes),
            ("lower bound (most bytes alive at once)", mem.arena.lower_bound),
            ("no sharing (sum of buffers)", mem.arena.unshared_bytes),
            ("activation tensor structs", mem.activation_structs),
            ("static RAM (LSTM scratch)", mem.static_ram),
            ("RAM total", mem.ram_total),
            ("alignment", mem.arena.align),
        ]
        return make_table("ram-totals", "RAM totals", cols, rows)
    scratch = sum(layer.cfg.get("scratch_bytes", 0) for layer in model.layers)
    total = fast.fast_bytes + fast.slow_bytes + mem.activation_structs + scratch
    rows = [
        ("fast buffer (activations, staging, tables)", fast.fast_bytes),
        ("slow arena", fast.slow_bytes),
        ("slow arena lower bound (most bytes alive at once)", fast.slow.lower_bound),
        ("activation tensor structs", mem.activation_structs),
        ("static RAM (LSTM scratch)", scratch),
        ("RAM total", total),
        ("alignment", fast.align),
    ]
    return make_table("ram-totals", "RAM totals", cols, rows)
