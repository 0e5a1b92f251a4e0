"""Element-wise ops whose activation operands broadcast: one kernel call per slice.

MLI 2.0.2's element-wise kernels take equal shapes or a one-element operand (a scalar), and a
view cannot repeat a tensor (a zero mem_stride is rejected); a non-scalar operand's innermost
mem_stride must be 1. The calls loop over whichever index set makes fewer of them:
- the leading output dimensions, each call over the trailing ones: `[1,H,W,1] x [1,H,W,C]` is
  H*W calls over C elements with a one-element slice of the first operand;
- the trailing output dimensions, each call over a strided view of the leading ones with a
  trailing dimension of 1 (innermost stride 1): squeeze-and-excite `[1,H,W,C] x [1,1,1,C]` is C
  calls over `[H*W, 1]` (mem_stride `[C, 1]`) with the channel's value as the scalar, where the
  leading form is H*W calls over C elements.
The slices are views (`SliceCalls`): the runtime moves their data pointers, the executor
gathers the same slices, so both run the same calls.
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


def _full_strides(t: MliTensor, rank: int) -> tuple[tuple[int, ...], list[int]]:
    """`t`'s shape and memory strides aligned to `rank` (leading ones)."""
    shape = aligned(t.shape, rank)
    strides = list(t.mem_stride)
    while len(strides) < rank:  # leading ones: the stride a size-1 axis would have
        strides.insert(0, (strides[0] * shape[rank - len(strides)]) if strides else 1)
    return shape, strides


def _slice_fields(src: MliTensor, out_shape: tuple[int, ...], dims: int) -> dict:
    """The per-call view of `src`: its slice over the trailing output dimensions, or one element
    where it repeats over all of them."""
    shape, strides = _full_strides(src, len(out_shape))
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


def _views_leading(b: Builder, ins: list[str], out: str, dims: int) -> list[str]:
    out_shape = b.tensors[out].shape
    return [
        b.derived(b.tensors[n], f"{n}_slice", **_slice_fields(b.tensors[n], out_shape, dims)).name
        for n in ins + [out]
    ]


def trailing_split(out_shape: tuple[int, ...], in_shapes: list[tuple[int, ...]]) -> int | None:
    """The most leading output dimensions (fewest calls over the trailing ones) a call can
    cover: every input whole over them or one element over all of them, some input whole, more
    than one element per call. None when no split works."""
    rank = len(out_shape)
    ins = [aligned(s, rank) for s in in_shapes]
    for split in range(rank - 1, 0, -1):
        if math.prod(out_shape[:split]) == 1:
            return None
        heads = [{_kind(s[d], out_shape[d]) for d in range(split)} - {ANY} for s in ins]
        if any(len(h) > 1 for h in heads) or all(REPEATED in h for h in heads):
            continue
        return split
    return None


def _groups(tensors: list[MliTensor], out_shape: tuple[int, ...], split: int) -> list[list[int]]:
    """The leading output dimensions over 1 in runs that every tensor's memory strides let a
    view merge into one dimension (the outer stride is the inner extent times its stride)."""
    rank = len(out_shape)
    strides = [_full_strides(t, rank)[1] for t in tensors]
    groups: list[list[int]] = []
    for d in (d for d in range(split) if out_shape[d] > 1):
        if groups and all(st[groups[-1][-1]] == out_shape[d] * st[d] for st in strides):
            groups[-1].append(d)
        else:
            groups.append([d])
    return groups


def _views_trailing(b: Builder, ins: list[str], out: str, split: int) -> list[str] | None:
    """Per-call views over the first `split` output dimensions: a whole operand as `[n..., 1]`
    (its strides, innermost 1), a repeated one as one element; None above MLI's rank 4."""
    out_shape = b.tensors[out].shape
    rank = len(out_shape)
    tensors = [b.tensors[n] for n in ins + [out]]
    whole = {t.name for t in tensors if aligned(t.shape, rank)[:split] == tuple(out_shape[:split])}
    groups = _groups([t for t in tensors if t.name in whole], out_shape, split)
    if len(groups) + 1 > 4:
        return None
    views = []
    for t in tensors:
        if t.name in whole:
            _, strides = _full_strides(t, rank)
            shape = tuple(math.prod(out_shape[d] for d in g) for g in groups) + (1,)
            stride = tuple(strides[g[-1]] for g in groups) + (1,)
        else:
            shape, stride = (1,), (1,)
        views.append(
            b.derived(
                t,
                f"{t.name}_slice",
                shape=shape,
                mem_stride=stride,
                buffer=t.buffer or t.name,
                offset=t.offset,
                capacity=None,
                notes=[f"per-call slice of {t.name}"],
            ).name
        )
    return views


def over_slices(b: Builder, ins: list[str], out: str) -> tuple[SliceCalls, str] | None:
    """The calls of an element-wise layer whose activation inputs broadcast (None when MLI
    takes the operands as they are) and a note saying how many; registers the slice views.
    The loops run over the leading or the trailing output dimensions, whichever are fewer
    calls (the leading ones on a tie)."""
    out_t = b.tensors[out]
    shapes = [b.tensors[n].shape for n in ins]
    if all(s == out_t.shape or math.prod(s) == 1 for s in shapes):
        return None
    rank = len(out_t.shape)
    dims = rank - slice_rank(out_t.shape, shapes)
    split = trailing_split(out_t.shape, shapes)
    if split is not None and math.prod(out_t.shape[split:]) < math.prod(out_t.shape[:dims]):
        views = _views_trailing(b, ins, out, split)
        if views is not None:
            count = math.prod(out_t.shape[split:])
            scalar = any(b.tensors[v].shape == (1,) for v in views[:-1])
            note = (
                f"broadcast: {count} kernel calls, one per index of the output's last "
                f"{rank - split} dimension(s), each over a strided view of "
                f"{math.prod(out_t.shape[:split])} element(s)"
                + (" with the repeated operand's value as MLI's scalar" if scalar else "")
                + " (MLI's element-wise kernels take equal shapes or a scalar, innermost "
                "mem_stride 1: the view's last dimension is 1)"
            )
            return SliceCalls(loops=tuple(range(split, rank)), views=tuple(views)), note
    views = _views_leading(b, ins, out, dims)
    count = math.prod(out_t.shape[:dims])
    size = math.prod(out_t.shape[dims:])
    note = (
        f"broadcast: {count} kernel calls, one per index of the output's first {dims} "
        f"dimension(s), each over {size} element(s) (MLI's element-wise kernels take equal "
        "shapes or a scalar)"
    )
    return SliceCalls(loops=tuple(range(dims)), views=tuple(views)), note
