"""What one layer of the fast-memory plan (`mlitool.mli.memory.placement`) copies into the staging
area: a slot per constant it reads and per slow activation buffer it touches (or per row tile
and channel slice of a tiled layer), their offsets, and the bytes those copies move."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mlitool.mli.memory.arena import root_of
from mlitool.mli.memory.tiling import Tile, channel_bytes, channel_tiles, row_bytes, row_tiles
from mlitool.mli.types import MliLayer, MliModel


@dataclass(frozen=True)
class Staged:
    """One operand copied into the staging area for a layer."""

    name: str  # constant tensor key, or activation root buffer
    offset: int  # in the fast buffer
    bytes: int
    copy_in: bool  # activations: copied in before the layer (constants always are)
    copy_out: bool  # activations: copied back after the layer


@dataclass(frozen=True)
class LayerStaging:
    constants: tuple[Staged, ...]
    activations: tuple[Staged, ...]
    # A layer tiled by output rows: its tiles, and the slots its inputs' and output's tiles
    # are staged in (None: the tile views the resident buffer); the bytes those copies move.
    tiles: tuple[Tile, ...] = ()
    tile_ins: tuple[Staged | None, ...] = ()
    tile_out: Staged | None = None
    tiles_moved: int = 0
    # A layer tiled by output channels too: (first channel, channels) per slice, the slots
    # of its weight and bias slices (staged once per slice per row tile), the bytes they move.
    chans: tuple[tuple[int, int], ...] = ()
    chan_slots: tuple[Staged, ...] = ()
    chans_moved: int = 0

    @property
    def slots(self) -> tuple[Staged, ...]:
        tiled = tuple(s for s in (*self.tile_ins, self.tile_out) if s is not None)
        return self.constants + self.chan_slots + self.activations + tiled

    @property
    def calls(self) -> int:
        return max(len(self.tiles), 1) * max(len(self.chans), 1)

    @property
    def bytes_moved(self) -> int:
        acts = sum(s.bytes * (s.copy_in + s.copy_out) for s in self.activations)
        moved = acts + self.tiles_moved + self.chans_moved
        return sum(s.bytes for s in self.constants) + moved


def align_up(x: int, align: int) -> int:
    return (x + align - 1) // align * align


def layer_constants(model: MliModel, layer: MliLayer) -> list[str]:
    """The constants a layer's call reads through a data pointer (inputs, weights, bias,
    parameters; rank-0 ones hold their value in the tensor struct), each once."""
    names = layer.inputs + [n for n in (layer.weights, layer.bias) if n]
    names += list(layer.params.values())
    out: list[str] = []
    for n in names:
        t = model.tensors[n]
        if t.role.is_constant and t.rank > 0 and n not in out:
            out.append(n)
    return out


def constant_bytes(model: MliModel, name: str) -> int:
    """Bytes of a constant staged densely (what mli_mov_tensor_sync writes)."""
    t = model.tensors[name]
    return t.size * t.el_type.dtype.itemsize


def _written_in_place(layer: MliLayer) -> list[str]:
    """Inputs a kernel updates in place: the LSTM cell's state."""
    return [layer.inputs[2]] if layer.kind == "lstm_cell" else []


def layer_staging(
    model: MliModel,
    layer: MliLayer,
    slow: set[str],
    base: int,
    align: int,
    tiles: int = 1,
    chans: int = 1,
) -> LayerStaging:
    if not layer.kernel:
        return LayerStaging((), ())
    sliced = [n for n in (layer.weights, layer.bias) if n] if chans > 1 else []
    offset, consts, acts = base, [], []
    for n in layer_constants(model, layer):
        if n in sliced:
            continue
        size = constant_bytes(model, n)
        consts.append(Staged(n, offset, size, True, False))
        offset = align_up(offset + size, align)
    chan_part: dict = {}
    if chans > 1:
        slices = channel_tiles(model, layer, chans)
        widest = max(c for _, c in slices)
        slots = []
        for n in sliced:
            slots.append(Staged(n, offset, widest * channel_bytes(model, n), True, False))
            offset = align_up(offset + slots[-1].bytes, align)
        moved = tiles * sum(constant_bytes(model, n) for n in sliced)
        chan_part = dict(chans=slices, chan_slots=tuple(slots), chans_moved=moved)
    if tiles > 1:
        st = _tile_staging(model, layer, slow, offset, align, tiles, tuple(consts))
        return dataclasses.replace(st, **chan_part)
    read = {root_of(model, n) for n in layer.inputs}
    written = {root_of(model, n) for n in layer.outputs + _written_in_place(layer)}
    partly = {root_of(model, n) for n in layer.outputs if root_of(model, n) != n}
    roots = dict.fromkeys(root_of(model, n) for n in layer.inputs + layer.outputs)
    for r in roots:
        if r not in slow or model.tensors[r].role.is_constant:
            continue
        size = model.tensors[r].nbytes
        acts.append(Staged(r, offset, size, r in read or r in partly, r in written))
        offset = align_up(offset + size, align)
    return LayerStaging(tuple(consts), tuple(acts), **chan_part)


def _tile_staging(
    model: MliModel,
    layer: MliLayer,
    slow: set[str],
    offset: int,
    align: int,
    n: int,
    consts: tuple[Staged, ...],
) -> LayerStaging:
    """A layer in `n` row tiles: one slot for each input's largest tile and one for the
    output's, each only when that buffer lives in the slow arena."""
    tiles = row_tiles(model, layer, n)
    slots, moved = [], 0
    in_rows, out_rows = [t.in_rows for t in tiles], [t.out_rows for t in tiles]
    for name, rows, is_in in [(x, in_rows, True) for x in layer.inputs] + [
        (layer.outputs[0], out_rows, False)
    ]:
        root = root_of(model, name)
        if root not in slow:
            slots.append(None)
            continue
        size = max(rows) * row_bytes(model, name)
        slots.append(Staged(root, offset, size, is_in, not is_in))
        offset = align_up(offset + size, align)
        moved += sum(rows) * row_bytes(model, name)  # the halo rows twice
    return LayerStaging(consts, (), tiles, tuple(slots[:-1]), slots[-1], moved)


def staging_area_bytes(stages: list[LayerStaging], base: int, align: int) -> int:
    ends = [align_up(s.offset + s.bytes, align) for st in stages for s in st.slots]
    return max(ends, default=base) - base
