"""Memory of an `MliModel` on the target: ROM (constants, parameter arrays, structs, configs) and
RAM (activation buffers placed in one arena by their lifetimes).

ROM, per layer (each constant counted once, at the first layer that uses it):
  weights / bias / params — data bytes of constant tensors that own their memory (a view of a
  constant adds nothing); per-axis arrays — zero points, scales and scale frac bits of every
  per-axis tensor struct (C types per target, `cstructs.PER_AXIS_BYTES`); tensor structs — one
  `const mli_tensor` per constant tensor; config — the layer's `const` config struct.
  The original `.tflite` weight bytes (constant tensor bytes in the IR graph) and the float32 size
  (parameters x 4) come along for comparison.

RAM: every activation buffer (a view counts once, through its root buffer) lives from the layer
that first writes it to the last layer that reads it, inclusive (positions in `model.layers`;
model inputs live from the start, model outputs to the end). Two buffers whose lifetimes overlap
must not overlap in memory; a layer's inputs and outputs are alive together, so no kernel runs
in place. The placement is TFLite Micro's "greedy by size" idea: the largest buffers first
(ties: earlier first use, then name), each at the lowest offset where it fits between the
buffers already placed that are alive at the same time. Activation `mli_tensor` structs are not
`const` (the application sets data pointers, some kernels rewrite output parameters): they are
RAM, reported beside the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlitool import ir
from mlitool.errors import OptionError
from mlitool.mli.types import MliModel, Role
from mlitool.inspect.opstats import is_parameter, tensor_bytes
from mlitool.report.cstructs import PER_AXIS_BYTES, cfg_struct_bytes, tensor_struct_bytes


# --- RAM: buffers and their lifetimes --------------------------------------------------------

@dataclass(frozen=True)
class Buffer:
    name: str           # root tensor name
    size: int           # bytes
    first: int          # first layer position it is alive at
    last: int           # last layer position it is alive at (inclusive)

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Placement:
    buffer: Buffer
    offset: int

    @property
    def end(self) -> int:
        return self.offset + self.buffer.size


@dataclass(frozen=True)
class ArenaPlan:
    placements: tuple[Placement, ...]   # in buffer order (first use, then name)
    arena_bytes: int                    # peak: max(offset + aligned size)
    unshared_bytes: int                 # sum of (aligned) sizes: every buffer on its own
    lower_bound: int                    # max over time of the bytes alive together
    align: int


def root_of(model: MliModel, name: str) -> str:
    seen = {name}
    t = model.tensors[name]
    while t.buffer is not None:
        if t.buffer in seen or t.buffer not in model.tensors:
            raise ValueError(f"{model.source}: tensor '{name}' views a missing or circular buffer")
        seen.add(t.buffer)
        name, t = t.buffer, model.tensors[t.buffer]
    return name


def activation_buffers(model: MliModel) -> list[Buffer]:
    """Root activation buffers with their lifetimes, ordered by first use, then name."""
    end = max(len(model.layers) - 1, 0)
    first: dict[str, int] = {}
    last: dict[str, int] = {}

    def touch(name: str, pos: int, writes: bool) -> None:
        root = root_of(model, name)
        if model.tensors[root].role.is_constant:
            return
        if writes:
            first[root] = min(first.get(root, pos), pos)
        last[root] = max(last.get(root, pos), pos)

    for pos, layer in enumerate(model.layers):
        for name in layer.inputs:
            touch(name, pos, writes=False)
        for name in layer.outputs:
            touch(name, pos, writes=True)
    for name in model.inputs:
        root = root_of(model, name)
        first[root] = 0
        last.setdefault(root, 0)
    for name in model.outputs:
        root = root_of(model, name)
        last[root] = end
        first.setdefault(root, end)
    bufs = [Buffer(r, model.tensors[r].nbytes, first.get(r, 0), last[r]) for r in last]
    return sorted(bufs, key=lambda b: (b.first, b.name))


def _align_up(x: int, align: int) -> int:
    return (x + align - 1) // align * align


def live_lower_bound(buffers: list[Buffer], align: int = 1) -> int:
    """Max over layer positions of the aligned bytes alive together (no placement beats it)."""
    times = {b.first for b in buffers}      # the live set only grows at a first use
    return max((sum(_align_up(b.size, align) for b in buffers if b.first <= t <= b.last)
                for t in times), default=0)


def plan_arena(buffers: list[Buffer], align: int = 1) -> ArenaPlan:
    """Greedy-by-size placement (see module docstring); offsets are multiples of `align`."""
    if align < 1 or align & (align - 1):
        raise OptionError(f"arena alignment {align}: use a power of two")
    order = sorted(buffers, key=lambda b: (-b.size, b.first, b.name))
    placed: list[Placement] = []
    for buf in order:
        size = _align_up(buf.size, align)
        busy = sorted((p.offset, _align_up(p.end, align)) for p in placed
                      if p.buffer.overlaps_in_time(buf))
        offset = 0
        for lo, hi in busy:                 # first gap (in offset order) that holds the buffer
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        placed.append(Placement(buf, offset))
    by_name = {p.buffer.name: p for p in placed}
    ordered = tuple(by_name[b.name] for b in sorted(buffers, key=lambda b: (b.first, b.name)))
    return ArenaPlan(
        placements=ordered,
        arena_bytes=max((_align_up(p.end, align) for p in placed), default=0),
        unshared_bytes=sum(_align_up(b.size, align) for b in buffers),
        lower_bound=live_lower_bound(buffers, align),
        align=align,
    )


# --- ROM -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerRom:
    position: int
    index: int              # TFLite op index
    kind: str
    weights: int
    bias: int
    params: int             # data of other constants (slopes, ...)
    per_axis: int           # per-axis zero point / scale / frac-bit arrays
    structs: int            # const mli_tensor structs
    config: int             # const config struct
    tflite_bytes: int       # the original constants' bytes in the .tflite (None-free: 0 if unknown)
    float32_bytes: int      # parameters x 4

    @property
    def total(self) -> int:
        return self.weights + self.bias + self.params + self.per_axis + self.structs + self.config


@dataclass(frozen=True)
class MemoryReport:
    target: str
    tensor_struct_bytes: int
    layers: tuple[LayerRom, ...]
    rom_total: int
    tflite_weight_bytes: int        # all constant tensors of the IR graph
    float32_bytes: int              # IR parameters x 4
    buffers: tuple[Buffer, ...]
    arena: ArenaPlan
    activation_structs: int         # bytes of the non-const mli_tensor structs
    ram_total: int                  # arena + activation structs

    def rom_totals(self) -> dict[str, int]:
        keys = ("weights", "bias", "params", "per_axis", "structs", "config")
        return {k: sum(getattr(layer, k) for layer in self.layers) for k in keys}


def _per_axis_bytes(model: MliModel, name: str) -> int:
    t = model.tensors[name]
    if not t.per_axis:
        return 0
    return len(t.scale) * sum(PER_AXIS_BYTES[model.mli_version])


def _ir_tensor(graph: ir.Graph | None, model: MliModel, name: str) -> ir.Tensor | None:
    idx = model.tensors[name].source_index
    if graph is None or idx is None or not 0 <= idx < len(graph.tensors):
        return None
    return graph.tensors[idx]


def rom_by_layer(model: MliModel, graph: ir.Graph | None = None) -> list[LayerRom]:
    struct = tensor_struct_bytes(model.mli_version)
    seen: set[str] = set()
    seen_ir: set[int] = set()
    rows = []
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
            if t.buffer is None and t.rank > 0:   # rank 0: the value sits inline in the struct
                key = {Role.WEIGHTS: "weights", Role.BIAS: "bias"}.get(t.role, "params")
                by_role[key] += t.nbytes
            src = _ir_tensor(graph, model, name)
            if src is not None and src.index not in seen_ir and src.is_constant:
                seen_ir.add(src.index)
                tfl += tensor_bytes(src)
                f32 += 4 * src.size if is_parameter(src) else 0
        rows.append(LayerRom(pos, layer.index, layer.kind, by_role["weights"], by_role["bias"],
                             by_role["params"], per_axis, structs,
                             cfg_struct_bytes(model.mli_version, layer.cfg_type), tfl, f32))
    return rows


def memory_report(model: MliModel, graph: ir.Graph | None = None, align: int = 1
                  ) -> MemoryReport:
    """ROM per layer and total, and the RAM arena plan, of `model` (lowered from `graph`)."""
    layers = rom_by_layer(model, graph)
    buffers = activation_buffers(model)
    plan = plan_arena(buffers, align)
    struct = tensor_struct_bytes(model.mli_version)
    # constants no layer names (none in practice) still take ROM: count them into the total
    used = {n for layer in model.layers
            for n in (layer.weights, layer.bias, *layer.params.values(), *layer.inputs) if n}
    stray = [n for n, t in model.tensors.items() if t.role.is_constant and n not in used]
    stray_bytes = sum(struct + _per_axis_bytes(model, n)
                      + (model.tensors[n].nbytes if model.tensors[n].buffer is None
                         and model.tensors[n].rank > 0 else 0) for n in stray)
    act_structs = struct * sum(1 for t in model.tensors.values() if not t.role.is_constant)
    tfl = f32 = 0
    if graph is not None:
        consts = [t for t in graph.tensors if t.is_constant]
        tfl = sum(tensor_bytes(t) for t in consts)
        f32 = sum(4 * t.size for t in consts if is_parameter(t))
    return MemoryReport(
        target=model.mli_version,
        tensor_struct_bytes=struct,
        layers=tuple(layers),
        rom_total=sum(layer.total for layer in layers) + stray_bytes,
        tflite_weight_bytes=tfl,
        float32_bytes=f32,
        buffers=tuple(buffers),
        arena=plan,
        activation_structs=act_structs,
        ram_total=plan.arena_bytes + act_structs,
    )
