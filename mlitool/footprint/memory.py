"""Memory of an `MliModel` on the target: ROM (constants, parameter arrays, structs, configs) and
RAM (activation buffers placed in one arena by their lifetimes).

ROM, per layer (each constant counted once, at the first layer that uses it):
  weights / bias / params — data bytes of constant tensors that own their memory (a view of a
  constant adds nothing); per-axis arrays — zero points, scales and scale frac bits of every
  per-axis tensor struct (C types per target, `Target.per_axis_bytes`; zero points that are all
  0 share one array, counted at the first layer that uses it: `mlitool.mli.zero_points`); tensor structs — one
  `const mli_tensor` per constant tensor; config — the layer's `const` config struct.
  The original `.tflite` weight bytes (constant tensor bytes in the IR graph) and the float32 size
  (parameters x 4) come along for comparison.

RAM: the activation arena exactly as the emitted runtime binds it (`mlitool.mli.memory.arena`: buffers,
lifetimes, greedy-by-size placement). Activation `mli_tensor` structs are not `const` (the
runtime sets data pointers, some kernels rewrite output parameters): they are RAM, reported
beside the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlitool import ir
from mlitool.footprint.cstructs import cfg_struct_bytes, tensor_struct_bytes
from mlitool.inspect.opstats import is_parameter, tensor_bytes
from mlitool.mli import zero_points
from mlitool.mli.memory.arena import ArenaPlan, Buffer, model_arena
from mlitool.mli.types import MliModel, Role

# --- ROM -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerRom:
    position: int
    index: int  # TFLite op index
    kind: str
    weights: int
    bias: int
    params: int  # data of other constants (slopes, ...)
    per_axis: int  # per-axis zero point / scale / frac-bit arrays
    structs: int  # const mli_tensor structs
    config: int  # const config struct
    tflite_bytes: int  # the original constants' bytes in the .tflite (None-free: 0 if unknown)
    float32_bytes: int  # parameters x 4

    @property
    def total(self) -> int:
        return self.weights + self.bias + self.params + self.per_axis + self.structs + self.config


@dataclass(frozen=True)
class MemoryReport:
    mli_version: str
    tensor_struct_bytes: int
    layers: tuple[LayerRom, ...]
    rom_total: int
    tflite_weight_bytes: int  # all constant tensors of the IR graph
    float32_bytes: int  # IR parameters x 4
    buffers: tuple[Buffer, ...]
    arena: ArenaPlan
    activation_structs: int  # bytes of the non-const mli_tensor structs
    static_ram: int  # the runtime's look-up tables and recurrent scratch
    ram_total: int  # arena + activation structs + static RAM

    def rom_totals(self) -> dict[str, int]:
        keys = ("weights", "bias", "params", "per_axis", "structs", "config")
        return {k: sum(getattr(layer, k) for layer in self.layers) for k in keys}


def _per_axis_bytes(model: MliModel, name: str) -> int:
    """Its own per-axis arrays: zero points that are all 0 are in the shared array instead."""
    t = model.tensors[name]
    if not t.per_axis:
        return 0
    zp, scale, frac = model.target.per_axis_bytes
    return len(t.scale) * (scale + frac + (0 if zero_points.shares_zeros(model, t) else zp))


def _shared_zero_point_bytes(model: MliModel) -> int:
    """The shared array of zero points (`mlitool.mli.zero_points`), counted once."""
    return model.target.per_axis_bytes[0] * zero_points.shared_length(model)


def _ir_tensor(graph: ir.Graph | None, model: MliModel, name: str) -> ir.Tensor | None:
    idx = model.tensors[name].source_index
    if graph is None or idx is None or not 0 <= idx < len(graph.tensors):
        return None
    return graph.tensors[idx]


def rom_by_layer(model: MliModel, graph: ir.Graph | None = None) -> list[LayerRom]:
    struct = tensor_struct_bytes(model.target)
    seen: set[str] = set()
    seen_ir: set[int] = set()
    rows = []
    shared_zeros = _shared_zero_point_bytes(model)  # at the first layer that uses it
    for pos, layer in enumerate(model.layers):
        by_role = {"weights": 0, "bias": 0, "params": 0}
        per_axis = structs = tfl = f32 = 0
        names = [n for n in (layer.weights, layer.bias, *layer.params.values()) if n]
        names += [n for n in layer.inputs if model.tensors[n].role.is_constant]
        for name in dict.fromkeys(names):
            t = model.tensors[name]
            if name in seen or not t.role.is_constant:
                continue
            seen.add(name)
            structs += struct
            per_axis += _per_axis_bytes(model, name)
            if shared_zeros and zero_points.shares_zeros(model, t):
                per_axis, shared_zeros = per_axis + shared_zeros, 0
            if t.buffer is None and t.rank > 0:  # rank 0: the value sits inline in the struct
                key = {Role.WEIGHTS: "weights", Role.BIAS: "bias"}.get(t.role, "params")
                by_role[key] += t.nbytes
            src = _ir_tensor(graph, model, name)
            if src is not None and src.index not in seen_ir and src.is_constant:
                seen_ir.add(src.index)
                tfl += tensor_bytes(src)
                f32 += 4 * src.size if is_parameter(src) else 0
        rows.append(
            LayerRom(
                pos,
                layer.index,
                layer.kind,
                by_role["weights"],
                by_role["bias"],
                by_role["params"],
                per_axis,
                structs,
                cfg_struct_bytes(model.target, layer.cfg_type),
                tfl,
                f32,
            )
        )
    return rows


def rom_bytes(model: MliModel, layers: list[LayerRom] | None = None) -> int:
    """The ROM of a converted model, the one figure `convert`, `report` ("ROM total") and every
    summary line give: the data of constants that own their memory (weights, bias, other
    parameters), their per-axis arrays, one `const mli_tensor` per constant and each layer's
    `const` config struct. (`layers`: `rom_by_layer(model)` when already computed.)"""
    layers = rom_by_layer(model) if layers is None else layers
    struct = tensor_struct_bytes(model.target)
    # constants no layer names (none in practice) still take ROM: count them into the total
    used = {
        n
        for layer in model.layers
        for n in (layer.weights, layer.bias, *layer.params.values(), *layer.inputs)
        if n
    }
    stray = [n for n, t in model.tensors.items() if t.role.is_constant and n not in used]
    stray_bytes = sum(
        struct
        + _per_axis_bytes(model, n)
        + (
            model.tensors[n].nbytes
            if model.tensors[n].buffer is None and model.tensors[n].rank > 0
            else 0
        )
        for n in stray
    )
    if stray and not any(
        zero_points.shares_zeros(model, t) for n, t in model.tensors.items() if n in used
    ):
        stray_bytes += _shared_zero_point_bytes(model)  # only strays use it
    return sum(layer.total for layer in layers) + stray_bytes


def memory_report(
    model: MliModel, graph: ir.Graph | None = None, align: int | None = None
) -> MemoryReport:
    """ROM per layer and total, and the RAM arena plan, of `model` (lowered from `graph`).
    `align` None: the runtime's own alignment, so the plan is the one the C runtime binds."""
    layers = rom_by_layer(model, graph)
    plan = model_arena(model, align)
    struct = tensor_struct_bytes(model.target)
    act_structs = struct * sum(1 for t in model.tensors.values() if not t.role.is_constant)
    tfl = f32 = 0
    if graph is not None:
        consts = [t for t in graph.tensors if t.is_constant]
        tfl = sum(tensor_bytes(t) for t in consts)
        f32 = sum(4 * t.size for t in consts if is_parameter(t))
    return MemoryReport(
        mli_version=model.mli_version,
        tensor_struct_bytes=struct,
        layers=tuple(layers),
        rom_total=rom_bytes(model, layers),
        tflite_weight_bytes=tfl,
        float32_bytes=f32,
        buffers=tuple(p.buffer for p in plan.placements),
        arena=plan,
        activation_structs=act_structs,
        static_ram=static_ram_bytes(model),
        ram_total=plan.arena_bytes + act_structs + static_ram_bytes(model),
    )


def static_ram_bytes(model: MliModel) -> int:
    """RAM outside the arena that the emitted runtime keeps: the scratch arrays of recurrent
    cells' configs (the look-up tables MLI 2.x kernels take are const data)."""
    return sum(layer.cfg.get("scratch_bytes", 0) for layer in model.layers)
