"""The fast-memory plan (`convert --fast-memory SIZE`): every kernel operand in the core's local
memory (VCCM on VPX, DCCM / XY on EM) at the call, as MLI's documentation requires.

The fast buffer holds, in this order:

    [resident activations | staging area | look-up tables]

- Resident activations: the buffers that stay in fast memory for their whole lifetime, placed
  like the one-arena plan (`mlitool.mli.memory.arena.plan_arena`) but only among themselves.
- The other activation buffers live in a slow arena (planned the same way). Before a layer that
  touches one, its bytes are copied into the staging area (unless the layer only writes it
  whole), and after the layer, when the layer wrote it, copied back.
- Weights, biases and every other constant a layer reads stay in slow memory (`const`,
  `--section`) and are copied into the staging area before the layer (`mli_mov_tensor_sync`).
- The LUT kernels' tables.

The staging area is reused by every layer, so it is as large as the largest layer's staged
operands. Which buffers stay resident: all when that fits the budget; otherwise the largest are
moved to the slow arena one by one until the plan fits, then the smallest moved ones are brought
back while it still fits. Keeping nothing resident needs the least fast memory (each layer's
operands alone), so a model fits a budget at all exactly when that does.

A layer whose operands alone do not fit is tiled by output rows where it can be
(`mlitool.mli.memory.tiling`): into the fewest tiles whose operands fit, each tile's input rows (with
the halo) and output rows staged in turn, or viewed where the buffer is resident. A convolution
or fully connected layer whose weights are too large is also cut into slices of output channels
(neurons): each slice's weights and bias staged per call, the output a strided view of its
channels; the fewest calls win (rows x slices), row tiles first since slices restage the weights
once per row tile. A layer that cannot be tiled, or does not fit even in tiles of one row and one
channel, stops the plan (exit 4) naming the layer that needs the most, with its least bytes: the
smallest budget the model fits.

What each layer copies into the staging area, and the bytes that moves: `mlitool.mli.memory.staging`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlitool.errors import OptionError, UnsupportedError
from mlitool.mli.kernels import LUT_LENGTHS, luts_of
from mlitool.mli.memory.arena import ArenaPlan, Buffer, activation_buffers, plan_arena, root_of
from mlitool.mli.memory.staging import (
    LayerStaging,
    align_up,
    constant_bytes,
    layer_staging,
    staging_area_bytes,
)
from mlitool.mli.memory.tiling import channel_untileable_reason, untileable_reason
from mlitool.mli.types import MliLayer, MliModel

_SIZE = re.compile(r"([0-9]+)\s*([KkMm]?)")
MAX_FAST_BYTES = (1 << 32) - 1  # a uint32_t capacity addresses no more


def parse_size(value: object, where: str) -> int:
    """Bytes from an int or a string such as "65536", "64K", "1M" (K = 1024); OptionError
    naming `where` (the option or config key) otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise OptionError(f"{where} = {value!r}: give bytes, e.g. 65536, 64K or 1M")
    if isinstance(value, int):
        size = value
    else:
        m = _SIZE.fullmatch(value.strip())
        if m is None:
            raise OptionError(f"{where} {value!r}: give bytes, e.g. 65536, 64K or 1M")
        size = int(m.group(1)) << {"": 0, "k": 10, "m": 20}[m.group(2).lower()]
    if not 0 < size <= MAX_FAST_BYTES:
        raise OptionError(f"{where} {value!r}: give a size from 1 byte to 4G - 1")
    return size


@dataclass(frozen=True)
class FastPlan:
    budget: int
    align: int  # of the fast and slow buffers and every offset in them
    resident: ArenaPlan  # offsets from the fast buffer's start
    slow: ArenaPlan  # the slow arena
    staging_offset: int
    staging_bytes: int
    luts: dict[str, int]  # LUT kind -> offset in the fast buffer
    layers: tuple[LayerStaging, ...]  # per layer position (empty for layers without a call)
    fast_bytes: int
    lower_bound_moved: int  # constants once, each slow buffer once each way

    @property
    def slow_bytes(self) -> int:
        return self.slow.arena_bytes

    @property
    def bytes_moved(self) -> int:
        return sum(s.bytes_moved for s in self.layers)

    def home(self, root: str) -> tuple[str, int]:
        """Where an activation buffer lives between layers: ("fast" | "slow", offset)."""
        for where, plan in (("fast", self.resident), ("slow", self.slow)):
            for p in plan.placements:
                if p.buffer.name == root:
                    return where, p.offset
        raise KeyError(root)


def _tile_counts(model: MliModel, avail: int, align: int, budget: int, lut_bytes: int):
    """Layer position -> (row tiles, channel tiles), for every layer whose operands alone
    (everything else in slow memory) need more than `avail` bytes: the fewest calls that fit. UnsupportedError
    naming the layer that needs the most when one does not fit at all."""
    slow = {b.name for b in activation_buffers(model)}

    def need(layer: MliLayer, n: int, c: int = 1) -> int:
        return staging_area_bytes([layer_staging(model, layer, slow, 0, align, n, c)], 0, align)

    counts: dict[int, tuple[int, int]] = {}
    least: list[tuple[int, int, str]] = []  # (bytes at least, position, why no fewer)
    for pos, la in enumerate(model.layers):
        if need(la, 1) <= avail:
            continue
        by_rows = untileable_reason(model, la)
        by_chans = channel_untileable_reason(model, la)
        if by_rows is not None and by_chans is not None:
            least.append((need(la, 1), pos, f"it cannot be tiled: {by_rows}"))
            continue
        rows = 1 if by_rows else model.tensors[la.outputs[0]].shape[0]
        chans = 1 if by_chans else model.tensors[la.outputs[0]].shape[-1]
        best = None  # the fewest calls, row tiles first: they stage the weights once
        for c in range(1, chans + 1):
            if best is not None and c >= best[0] * best[1]:
                break
            if need(la, rows, c) > avail:
                continue
            n = next(n for n in range(1, rows + 1) if need(la, n, c) <= avail)
            if best is None or n * c < best[0] * best[1]:
                best = (n, c)
        if best is None:
            why = "even in tiles of one output row or channel"
            least.append((need(la, rows, chans), pos, why))
            continue
        counts[pos] = best
    if least:
        most, pos, why = max(least)
        la = model.layers[pos]
        raise UnsupportedError(
            f"{model.source}: {layer_label(pos, la)} needs at least "
            f"{most + lut_bytes} bytes of fast memory"
            + (f" ({lut_bytes} of them look-up tables)" if lut_bytes else "")
            + f", more than --fast-memory {budget}: {why}"
        )
    return counts


def layer_label(pos: int, layer: MliLayer) -> str:
    """ "layer 5 (ADD, TFLite op 4)", or for a layer lowering inserted next to its op's own
    (a fused activation's relu, a format change): "layer 5 (relu inserted after ADD, TFLite
    op 4)"."""
    if any(n.startswith("inserted") for n in layer.notes):
        where = "after" if layer.kind == "relu" else "for"
        return (
            f"layer {pos} ({layer.kind} inserted {where} {layer.op_type}, TFLite op {layer.index})"
        )
    return f"layer {pos} ({layer.op_type}, TFLite op {layer.index})"


def _align(model: MliModel, luts: list[str]) -> int:
    """The largest element size among the operands (2 for the int16 tables)."""
    sizes = [2] if luts else [1]
    for layer in model.layers:
        for n in layer.inputs + layer.outputs + [x for x in (layer.weights, layer.bias) if x]:
            sizes.append(model.tensors[n].el_type.dtype.itemsize)
        sizes += [model.tensors[n].el_type.dtype.itemsize for n in layer.params.values()]
    return max(sizes)


def plan_fast_memory(model: MliModel, budget: int, luts: list[str]) -> FastPlan:
    """The plan for a fast buffer of at most `budget` bytes (UnsupportedError, exit 4, when a
    layer's operands alone do not fit); `luts`: the table kinds the runtime creates."""
    align = _align(model, luts)
    lut_bytes = sum(align_up(2 * LUT_LENGTHS[k], align) for k in luts)
    buffers = activation_buffers(model)

    tiles = _tile_counts(model, budget - lut_bytes, align, budget, lut_bytes)

    def plan(resident: set[str]) -> tuple[int, ArenaPlan, list[LayerStaging]]:
        arena = plan_arena([b for b in buffers if b.name in resident], align)
        base = align_up(arena.arena_bytes, align)
        slow = {b.name for b in buffers} - resident
        stages = [
            layer_staging(model, la, slow, base, align, *tiles.get(pos, (1, 1)))
            for pos, la in enumerate(model.layers)
        ]
        return base + staging_area_bytes(stages, base, align) + lut_bytes, arena, stages

    resident = {b.name for b in buffers}
    by_size = sorted(buffers, key=lambda b: (-b.size, b.first, b.name))
    moved: list[Buffer] = []
    for b in by_size:  # the largest to the slow arena until the plan fits
        if plan(resident)[0] <= budget:
            break
        resident.discard(b.name)
        moved.append(b)
    for b in reversed(moved):  # the smallest moved back while it still fits
        if plan(resident | {b.name})[0] <= budget:
            resident.add(b.name)
    fast, arena, stages = plan(resident)
    base = align_up(arena.arena_bytes, align)
    staging = staging_area_bytes(stages, base, align)
    slow_bufs = [b for b in buffers if b.name not in resident]
    offsets, at = {}, base + staging
    for k in luts:
        offsets[k] = at
        at += align_up(2 * LUT_LENGTHS[k], align)
    consts = {
        s.name: constant_bytes(model, s.name)
        for st in stages
        for s in (*st.constants, *st.chan_slots)
    }
    inputs = {root_of(model, n) for n in model.inputs}
    read = {root_of(model, n) for la in model.layers if la.kernel for n in la.inputs}
    # A slow buffer is copied out once (unless the application writes it: an input) and in
    # once (if a kernel reads it).
    one_way = sum(b.size * ((b.name not in inputs) + (b.name in read)) for b in slow_bufs)
    return FastPlan(
        budget=budget,
        align=align,
        resident=arena,
        slow=plan_arena(slow_bufs, align),
        staging_offset=base,
        staging_bytes=staging,
        luts=offsets,
        layers=tuple(stages),
        fast_bytes=fast,
        lower_bound_moved=sum(consts.values()) + one_way,
    )


def model_luts(model: MliModel) -> list[str]:
    """The look-up table kinds the emitted runtime creates, in its order (`LUT_LENGTHS`')."""
    if not model.target.lut_kernels:
        return []
    return [k for k in LUT_LENGTHS if any(k in luts_of(la.kind) for la in model.layers)]


def plan_model(model: MliModel, budget: int) -> FastPlan:
    """The plan `convert --fast-memory` emits for `model` (its runtime's tables included): the
    one every command that shows the plan (convert, report, the footprint) reads."""
    return plan_fast_memory(model, budget, model_luts(model))


def plan_figures(plan: FastPlan, model: MliModel) -> dict:
    """The plan's figures as the manifest (`runtime.fast_memory`) and `report` give them:
    budget, fast and slow bytes, bytes moved per inference (per layer and in total) against
    the lower bound, tiles (kernel calls) per layer."""
    return {
        "budget": plan.budget,
        "fast_bytes": plan.fast_bytes,
        "slow_bytes": plan.slow_bytes,
        "staging": {"offset": plan.staging_offset, "bytes": plan.staging_bytes},
        "bytes_moved": plan.bytes_moved,
        "lower_bound_moved": plan.lower_bound_moved,
        "tiled_layers": sum(st.calls > 1 for st in plan.layers),
        "layers": [
            {
                "layer": pos,
                "constants_bytes": sum(s.bytes for s in (*st.constants, *st.chan_slots)),
                "bytes_moved": st.bytes_moved,
                "tiles": st.calls if la.kernel else 0,
            }
            for (pos, st), la in zip(enumerate(plan.layers), model.layers)
        ],
    }
