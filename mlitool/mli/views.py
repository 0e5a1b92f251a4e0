"""Where a slice or a concatenation can be a zero-copy view, and the geometry of the slices.

SPLIT, SPLIT_V, SLICE, STRIDED_SLICE and CONCATENATION move data only. Lowering turns each piece
into a view of one buffer (`mlitool.mli.subtensor.create_subtensor`) when the kernels on both
sides can address it, and into a copy (`mli_mov_tensor_sync`) otherwise. The rules here come from
the tensor checks of MLI Release_2.0.2 (`mli_check.cc`):

* every 2.x kernel needs the innermost `mem_stride` to be 1 (a unit-step slice keeps it);
* fully connected and the recurrent kernels need a contiguous input, and fully connected, argmax
  and the recurrent kernels a contiguous output (`mem_stride` exactly row-major);
* MLI 1.x kernels ignore `mem_stride` (1.0 has none): only contiguous views;
* a RESHAPE/SQUEEZE view of a strided tensor would need other strides: its input must be
  contiguous; model outputs are dense buffers the application reads (mlitool's own rule).

Public: `is_dense`, `needs_dense_input`, `needs_dense_output`, `Box`, `split_boxes`,
`slice_box`, `strided_slice_box`, `mov_cfg`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.mli.kinds import KINDS
from mlitool.mli.target import Target
from mlitool.mli.types import MliTensor, row_major_strides


def is_dense(t: MliTensor) -> bool:
    """MLI's `check_layout_is_contiguous`: strides exactly row-major for the shape."""
    return tuple(int(s) for s in t.mem_stride) == row_major_strides(t.shape)


def needs_dense_input(kind: str, target: Target) -> bool:
    """The `kind` kernel reads only contiguous inputs (its kinds table entry's `dense_input`)."""
    entry = KINDS.get(kind)
    return not target.strided_views or (entry is not None and entry.dense_input)


def needs_dense_output(kind: str, target: Target) -> bool:
    """The `kind` kernel writes only contiguous outputs (its kinds table entry's `dense_output`)."""
    entry = KINDS.get(kind)
    return not target.strided_views or (entry is not None and entry.dense_output)


@dataclass(frozen=True)
class Box:
    """One slice in TFLite coordinates: element `begin[d] + i * step[d]` for i < size[d];
    `out_shape` is the TFLite shape of the result (shrunk axes removed)."""

    begin: tuple[int, ...]
    size: tuple[int, ...]
    step: tuple[int, ...]
    out_shape: tuple[int, ...]

    @property
    def unit_steps(self) -> bool:
        return all(s == 1 for s in self.step)


def split_boxes(shape: tuple[int, ...], axis: int, sizes: list[int]) -> list[Box]:
    """SPLIT / SPLIT_V: consecutive pieces of `sizes` along `axis` (a -1 takes the rest)."""
    axis %= len(shape)
    sizes = list(sizes)
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = shape[axis] - (sum(sizes) + 1)
    if sum(sizes) != shape[axis] or any(s <= 0 for s in sizes):
        raise UnsupportedError(
            f"split sizes {sizes} do not cover dimension {axis} "
            f"({shape[axis]}) with non-empty pieces"
        )
    boxes, start = [], 0
    for s in sizes:
        begin = [0] * len(shape)
        size = list(shape)
        begin[axis], size[axis] = start, s
        boxes.append(Box(tuple(begin), tuple(size), (1,) * len(shape), tuple(size)))
        start += s
    return boxes


def slice_box(shape: tuple[int, ...], begin: list[int], size: list[int]) -> Box:
    """SLICE: `size[d] == -1` means to the end of the dimension."""
    b = [int(v) for v in begin]
    s = [shape[d] - b[d] if int(v) < 0 else int(v) for d, v in enumerate(size)]
    return Box(tuple(b), tuple(s), (1,) * len(shape), tuple(s))


def strided_slice_box(
    shape: tuple[int, ...], begin: list[int], end: list[int], strides: list[int], options: dict
) -> Box:
    """STRIDED_SLICE with Python slice semantics (as the executors and TFLite compute it)."""
    if options.get("ellipsis_mask", 0) or options.get("new_axis_mask", 0):
        raise UnsupportedError("STRIDED_SLICE with ellipsis_mask or new_axis_mask")
    bm, em = options.get("begin_mask", 0), options.get("end_mask", 0)
    sm = options.get("shrink_axis_mask", 0)
    begins, sizes, steps, out_shape = [], [], [], []
    for d, dim in enumerate(shape):
        b, e, s = int(begin[d]), int(end[d]), int(strides[d])
        if options.get("offset", False):
            e = b + e
        if s <= 0:
            raise UnsupportedError(
                f"STRIDED_SLICE stride {s} on axis {d} (MLI copies and views step forward only)"
            )
        if sm >> d & 1:
            sl = slice(b, b + 1 if b != -1 else None, 1)
        else:
            sl = slice(None if bm >> d & 1 else b, None if em >> d & 1 else e, s)
        start, _, step = sl.indices(dim)
        n = len(range(*sl.indices(dim)))
        if n <= 0:
            raise UnsupportedError(f"STRIDED_SLICE selects nothing on axis {d}")
        begins.append(start)
        sizes.append(n)
        steps.append(step)
        if not sm >> d & 1:
            out_shape.append(n)
    return Box(tuple(begins), tuple(sizes), tuple(steps), tuple(out_shape))


def mov_cfg(offset: list[int], size: list[int], step: list[int]) -> dict:
    """`mli_mov_cfg_t` fields of a copy of the box `offset`/`size`/`step` into a whole tensor:
    `size` is the source extent (MLI writes ceil(size / step) elements per axis); a zero
    `dst_mem_stride` makes MLI keep the destination tensor's own strides."""
    rank = len(offset)
    src_size = [(n - 1) * s + 1 for n, s in zip(size, step)]
    pad = [0] * (4 - rank)
    return {
        "offset": list(offset) + pad,
        "size": src_size + pad,
        "sub_sample_step": list(step) + [1] * (4 - rank),
        "dst_offset": [0] * 4,
        "dst_mem_stride": [0] * 4,
        "perm_dim": list(range(4)),
        "padding_pre": [0] * 4,
        "padding_post": [0] * 4,
    }


def mov_source_box(cfg: dict, rank: int) -> tuple[tuple, ...]:
    """numpy index of the elements a `mov_cfg` copy reads (for the executor)."""
    return tuple(
        slice(int(o), int(o) + int(n), int(s))
        for o, n, s in zip(cfg["offset"][:rank], cfg["size"][:rank], cfg["sub_sample_step"][:rank])
    )


def flat_index(t: MliTensor, root_size: int) -> np.ndarray:
    """Element indices into the root buffer that `t` reads, in `t`'s shape (via `view_data`)."""
    from mlitool.mli.subtensor import view_data

    return np.array(view_data(np.arange(root_size, dtype=np.int64), t))
