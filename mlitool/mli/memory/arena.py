"""The activation arena: every activation buffer of an `MliModel` placed in one block of RAM.

One planner for everything that needs the placement: the C runtime binds each buffer at its
offset (`mlitool.emit.runtime`), `report` shows the same plan, and both call `model_arena`.

Every activation buffer (a view counts once, through its root buffer) lives from the layer
that first writes it to the last layer that reads it, inclusive (positions in `model.layers`;
model inputs live from the start, model outputs to the end). Two buffers whose lifetimes overlap
must not overlap in memory; a layer's inputs and outputs are alive together, so no kernel runs
in place. The placement is TFLite Micro's "greedy by size" idea: the largest buffers first
(ties: earlier first use, then name), each at the lowest offset where it fits between the
buffers already placed that are alive at the same time. Offsets are multiples of the arena
alignment: the largest element size among the buffers, so that every buffer is naturally
aligned for its element type when the arena is (all that C and MLI's pointer checks ask).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool.errors import OptionError
from mlitool.mli.types import MliModel


@dataclass(frozen=True)
class Buffer:
    name: str  # root tensor name
    size: int  # bytes
    first: int  # first layer position it is alive at
    last: int  # last layer position it is alive at (inclusive)

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
    placements: tuple[Placement, ...]  # in buffer order (first use, then name)
    arena_bytes: int  # peak: max(offset + aligned size)
    unshared_bytes: int  # sum of (aligned) sizes: every buffer on its own
    lower_bound: int  # max over time of the bytes alive together
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
    """Max over every layer position of the aligned bytes alive together (no placement beats
    it)."""
    if not buffers:
        return 0
    first, last = np.array([b.first for b in buffers]), np.array([b.last for b in buffers])
    size = np.array([_align_up(b.size, align) for b in buffers], np.int64)
    t = np.arange(last.max() + 1)
    return int((size @ ((first[:, None] <= t) & (t <= last[:, None]))).max())


def plan_arena(buffers: list[Buffer], align: int = 1) -> ArenaPlan:
    """Greedy-by-size placement (see module docstring); offsets are multiples of `align`."""
    if align < 1 or align & (align - 1):
        raise OptionError(f"arena alignment {align}: use a power of two")
    order = sorted(buffers, key=lambda b: (-b.size, b.first, b.name))
    placed: list[Placement] = []
    for buf in order:
        size = _align_up(buf.size, align)
        busy = sorted(
            (p.offset, _align_up(p.end, align)) for p in placed if p.buffer.overlaps_in_time(buf)
        )
        offset = 0
        for lo, hi in busy:  # first gap (in offset order) that holds the buffer
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


def model_arena(model: MliModel, align: int | None = None) -> ArenaPlan:
    """The arena plan of `model`: what the emitted runtime binds and `report` shows. The arena
    (and every offset in it) is aligned to the largest activation element unless `align` says
    otherwise."""
    buffers = activation_buffers(model)
    if align is None:
        align = max((model.tensors[b.name].el_type.dtype.itemsize for b in buffers), default=1)
    return plan_arena(buffers, align)
