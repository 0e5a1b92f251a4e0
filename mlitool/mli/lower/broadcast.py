"""Element-wise ops whose activation operands broadcast: one kernel call per slice.

MLI 2.0.2's element-wise kernels take equal shapes or a one-element operand, and a view cannot
repeat a tensor (a zero mem_stride is rejected). A `[1,1,1,C] x [1,H,W,C]` product
(squeeze-and-excite) is therefore H*W calls, each over a `[C]` slice of both operands and of the
output; a `[1,H,W,1] x [1,H,W,C]` product is H*W calls with a one-element slice of the first
operand (MLI's scalar operand). The slices are views (`SliceCalls`): the runtime moves their data
pointers, the executor gathers the same slices, so both run the same calls.
"""

from __future__ import annotations

import math

from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import MliTensor, SliceCalls

FULL, REPEATED, ANY = "full", "repeated", "any"


def aligned(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """`shape` with leading ones up to `rank` (numpy's broadcast alignment)."""
    return (1,) * (rank - len(shape)) + tuple(shape)


def _kind(dim: int, full: int) -> str:
    if full == 1:
        return ANY
    return FULL if dim == full else REPEATED


def slice_rank(out_shape: tuple[int, ...], in_shapes: list[tuple[int, ...]]) -> int:
    """How many trailing output dimensions each call covers: the most for which every input is
    either whole (same extent as the output) or one element over all of them, and some input
    is whole."""
    rank = len(out_shape)
    ins = [aligned(s, rank) for s in in_shapes]
    best = 0
    for size in range(1, rank + 1):
        tails = [{_kind(s[d], out_shape[d]) for d in range(rank - size, rank)} - {ANY} for s in ins]
        if any(len(t) > 1 for t in tails) or all(REPEATED in t for t in tails):
            break
        best = size
    return best


def _slice_fields(src: MliTensor, out_shape: tuple[int, ...], dims: int) -> dict:
    """The per-call view of `src`: its slice over the trailing output dimensions, or one element
    where it repeats over all of them."""
    rank = len(out_shape)
    shape = aligned(src.shape, rank)
    strides = list(src.mem_stride)
    while len(strides) < rank:  # leading ones: the stride a size-1 axis would have
        strides.insert(0, (strides[0] * shape[rank - len(strides)]) if strides else 1)
    tail = shape[dims:]
    if all(t == 1 for t in tail) and any(o > 1 for o in out_shape[dims:]):
        tail, tail_strides = (1,), (1,)
    else:
        tail_strides = tuple(strides[dims:])
    return {
        "shape": tail,
        "mem_stride": tail_strides,
        "buffer": src.buffer or src.name,
        "offset": src.offset,
        "capacity": None,
        "notes": [f"per-call slice of {src.name}"],
    }


def over_slices(b: Builder, ins: list[str], out: str) -> tuple[SliceCalls, str] | None:
    """The calls of an element-wise layer whose activation inputs broadcast (None when MLI
    takes the operands as they are) and a note saying how many; registers the slice views."""
    out_t = b.tensors[out]
    shapes = [b.tensors[n].shape for n in ins]
    if all(s == out_t.shape or math.prod(s) == 1 for s in shapes):
        return None
    dims = len(out_t.shape) - slice_rank(out_t.shape, shapes)
    views = [
        b.derived(b.tensors[n], f"{n}_slice", **_slice_fields(b.tensors[n], out_t.shape, dims)).name
        for n in ins + [out]
    ]
    count = math.prod(out_t.shape[:dims])
    size = math.prod(out_t.shape[dims:])
    note = (
        f"broadcast: {count} kernel calls, one per index of the output's first {dims} "
        f"dimension(s), each over {size} element(s) (MLI's element-wise kernels take equal "
        "shapes or a scalar)"
    )
    return SliceCalls(dims=dims, views=tuple(views)), note
