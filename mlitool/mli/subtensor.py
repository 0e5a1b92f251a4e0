"""Sub-tensors: MLI's zero-copy views of a tensor, with exactly MLI's arithmetic and checks.

Two helpers of the MLI library, reproduced on `MliTensor`:

* `point_to_subtensor` — `mli_hlp_point_to_subtensor` (MLI 1.x; deprecated in 2.x). Indexes the
  leading `coord_num` axes of a *contiguous* tensor: the data pointer advances by
  `sum_i start_coord[i] * dense_stride[i]`, the rank drops by `coord_num - 1`, the first output
  dimension is `first_out_dim_size`, the rest are copied; capacity = elements * element size.
* `create_subtensor` — `mli_hlp_create_subtensor` (MLI 2.x). Any box `offset[d] .. offset[d] +
  size[d]` of a tensor with arbitrary `mem_stride`: the pointer advances by
  `sum_d offset[d] * mem_stride[d]`, the strides are kept, leading size-1 dimensions are dropped
  down to `sub_tensor_rank`, capacity = parent capacity - bytes skipped, and per-axis SA
  parameter arrays advance by `offset[dim]` with `dim` renumbered.

A view is an `MliTensor` whose `buffer` names the root tensor (views of views resolve to the
root), `offset` is the element offset into the root, `mem_stride` the real strides, and `data`
(when the parent holds data) a numpy view of the parent's array — never a copy.

Conditions follow the library code of Release_1.1 / Release_2.0.2 (its `mli_chk_*` functions),
which differ from the prose in places: `coord_num <= rank` (the docs say `<`). Where the library
would build a silently broken tensor, we refuse instead and say so (see `SubtensorError` texts):
zero sizes, too few size-1 dimensions to reach `sub_tensor_rank`, a per-axis dimension dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import SubtensorError
from .types import ElType, MliTensor, row_major_strides

MLI_MAX_RANK = 4

# Element types mli_hlp_create_subtensor handles (others: MLI_STATUS_NOT_SUPPORTED in 2.0.2).
CREATE_SUBTENSOR_TYPES = (ElType.FX8, ElType.FX16, ElType.SA8, ElType.SA32)


def capacity_of(t: MliTensor) -> int:
    """Bytes the tensor's data container may address (`data.capacity` in MLI)."""
    return t.nbytes if t.capacity is None else int(t.capacity)


def root_buffer(t: MliTensor) -> str:
    """Name of the tensor that owns the memory `t` reads."""
    return t.buffer if t.buffer is not None else t.name


def _fail(fn: str, t: MliTensor, condition: str, detail: str) -> SubtensorError:
    return SubtensorError(f"{fn} on tensor '{t.name}': condition `{condition}` violated ({detail})")


def _check_valid_input(fn: str, t: MliTensor) -> None:
    """`mli_chk_tensor(in)`: rank, positive shape and strides, strides not overlapping, capacity,
    and for per-axis SA tensors the parameter arrays."""
    if not 1 <= t.rank <= MLI_MAX_RANK:
        raise _fail(fn, t, f"1 <= in.rank <= MLI_MAX_RANK ({MLI_MAX_RANK})", f"rank is {t.rank}")
    stride = list(t.mem_stride)
    for i, (d, s) in enumerate(zip(t.shape, stride)):
        if d <= 0:
            raise _fail(fn, t, f"in.shape[{i}] > 0", f"shape is {list(t.shape)}")
        if s <= 0:
            raise _fail(fn, t, f"in.mem_stride[{i}] > 0", f"mem_stride is {stride}")
    for i in range(t.rank - 1):
        if stride[i] < t.shape[i + 1] * stride[i + 1]:
            raise _fail(
                fn,
                t,
                f"in.mem_stride[{i}] >= in.shape[{i + 1}] * in.mem_stride[{i + 1}]",
                f"shape {list(t.shape)}, mem_stride {stride}",
            )
    if capacity_of(t) < t.nbytes:
        raise _fail(
            fn,
            t,
            "in.capacity >= bytes spanned by shape and mem_stride",
            f"capacity {capacity_of(t)} < {t.nbytes}",
        )
    if t.per_axis:
        if t.dim >= t.rank:
            raise _fail(fn, t, "in.el_params.sa.dim < in.rank", f"dim {t.dim}, rank {t.rank}")
        n = t.shape[t.dim]
        for field in ("zero_point", "scale", "scale_frac_bits"):
            arr = getattr(t, field)
            if arr is None or len(arr) < n:
                raise _fail(
                    fn,
                    t,
                    f"len(in.{field}) >= in.shape[dim]",
                    f"need {n}, have {None if arr is None else len(arr)}",
                )
        if not np.all(t.scale[:n] > 0):
            raise _fail(fn, t, "in.scale > 0", "a per-axis scale is not positive")


def _as_uints(fn: str, t: MliTensor, name: str, values: Sequence[int]) -> list[int]:
    out = [int(v) for v in values]
    if any(v < 0 for v in out):
        raise _fail(fn, t, f"cfg.{name}[i] >= 0 (uint32_t)", f"{name} is {out}")
    return out


def point_to_subtensor(
    t: MliTensor,
    start_coord: Sequence[int],
    coord_num: int,
    first_out_dim_size: int,
    *,
    name: str | None = None,
) -> MliTensor:
    """`mli_hlp_point_to_subtensor(t, {start_coord, coord_num, first_out_dim_size}, out)`.

    `t[c0, .., c(k-2), c(k-1) : c(k-1) + first_out_dim_size]` with k = coord_num, as a view.
    """
    fn = "mli_hlp_point_to_subtensor"
    _check_valid_input(fn, t)
    coord_num, first = int(coord_num), int(first_out_dim_size)
    if not 1 <= coord_num <= t.rank:
        # The library checks only coord_num <= rank; 0 would index start_coord[-1].
        raise _fail(fn, t, "1 <= cfg.coord_num <= in.rank", f"coord_num {coord_num}, rank {t.rank}")
    if len(start_coord) < coord_num:
        raise _fail(
            fn,
            t,
            "len(cfg.start_coord) >= cfg.coord_num",
            f"{len(start_coord)} coordinates for coord_num {coord_num}",
        )
    coords = _as_uints(fn, t, "start_coord", start_coord[:coord_num])
    for i, c in enumerate(coords):
        if c >= t.shape[i]:
            raise _fail(fn, t, f"cfg.start_coord[{i}] < in.shape[{i}]", f"{c} >= {t.shape[i]}")
    if not 1 <= first <= 255:
        # uint8_t field; 0 would give an empty (invalid) tensor.
        raise _fail(
            fn,
            t,
            "1 <= cfg.first_out_dim_size <= 255 (uint8_t, non-empty)",
            f"first_out_dim_size is {first}",
        )
    axis = coord_num - 1
    if coords[axis] + first > t.shape[axis]:
        raise _fail(
            fn,
            t,
            f"cfg.start_coord[{axis}] + cfg.first_out_dim_size <= in.shape[{axis}]",
            f"{coords[axis]} + {first} > {t.shape[axis]}",
        )
    dense = row_major_strides(t.shape)
    if tuple(t.mem_stride) != dense:
        raise _fail(
            fn,
            t,
            "memory layout of input tensor must be contiguous",
            f"mem_stride {list(t.mem_stride)} is not the dense {list(dense)}",
        )
    if t.el_type == ElType.FX4:
        raise _fail(fn, t, "element type addressable by a pointer", "FX4 packs two elements a byte")
    if t.per_axis and not (coord_num == 1 and (t.dim != 0 or coords[0] == 0)):
        # The library copies el_params unchanged: the per-axis arrays would not follow the slice
        # and `dim` would not follow the dropped axes.
        raise _fail(
            fn,
            t,
            "per-axis parameters unaffected by the view (coord_num == 1 and "
            "(dim != 0 or start_coord[0] == 0))",
            f"dim {t.dim}, start_coord {coords}; the library copies el_params unchanged",
        )

    shape = (first,) + t.shape[coord_num:]
    offset = sum(c * s for c, s in zip(coords, dense))
    params = {}
    if t.per_axis and t.dim == 0:
        # Same pointers as the library; the arrays just end at the view's first dimension.
        params = {f: getattr(t, f)[:first] for f in ("zero_point", "scale", "scale_frac_bits")}
    data = None
    if t.data is not None:
        index = tuple(coords[:axis]) + (slice(coords[axis], coords[axis] + first),)
        data = t.data[index]
    label = ",".join([str(c) for c in coords[:axis]] + [f"{coords[axis]}:{coords[axis] + first}"])
    view = _derive(
        t,
        name or f"{t.name}[{label}]",
        shape,
        row_major_strides(shape),
        offset,
        data,
        capacity=int(np.prod(shape)) * t.el_type.dtype.itemsize,
    )
    view.layout = t.layout if coord_num == 1 else ""
    for field, arr in params.items():
        setattr(view, field, arr)
    view.notes.append(
        f"{fn}(start_coord={coords}, coord_num={coord_num}, "
        f"first_out_dim_size={first}) of '{t.name}'"
    )
    return view


def create_subtensor(
    t: MliTensor,
    offset: Sequence[int],
    size: Sequence[int],
    sub_tensor_rank: int,
    *,
    name: str | None = None,
) -> MliTensor:
    """`mli_hlp_create_subtensor(t, {offset, size, sub_tensor_rank}, out)`.

    The box `t[offset[d] : offset[d] + size[d]]` as a view keeping `t`'s strides, with leading
    size-1 dimensions removed until the rank is `sub_tensor_rank`.
    """
    fn = "mli_hlp_create_subtensor"
    _check_valid_input(fn, t)
    rank = int(sub_tensor_rank)
    if len(offset) != t.rank or len(size) != t.rank:
        raise _fail(
            fn,
            t,
            "len(cfg.offset) == len(cfg.size) == in.rank",
            f"{len(offset)} offsets, {len(size)} sizes, rank {t.rank}",
        )
    offs = _as_uints(fn, t, "offset", offset)
    sizes = _as_uints(fn, t, "size", size)
    if not 1 <= rank <= t.rank:
        raise _fail(
            fn, t, "1 <= cfg.sub_tensor_rank <= in.rank", f"sub_tensor_rank {rank}, rank {t.rank}"
        )
    for i, (o, s, d) in enumerate(zip(offs, sizes, t.shape)):
        if o >= d:
            raise _fail(fn, t, f"cfg.offset[{i}] < in.shape[{i}]", f"{o} >= {d}")
        if o + s > d:
            raise _fail(
                fn, t, f"cfg.offset[{i}] + cfg.size[{i}] <= in.shape[{i}]", f"{o} + {s} > {d}"
            )
        if s == 0:
            # Not checked by the library, but the result would be an invalid (empty) tensor.
            raise _fail(fn, t, f"cfg.size[{i}] > 0", "an empty sub-tensor is not a valid tensor")
    if t.el_type not in CREATE_SUBTENSOR_TYPES:
        raise _fail(
            fn,
            t,
            "el_type in {FX_8, FX_16, SA_8, SA_32}",
            f"{t.el_type.mli2_name} returns MLI_STATUS_NOT_SUPPORTED",
        )

    # Walk the input axes like the library: skip size-1 axes while more must go.
    keep: list[int] = []
    skip = t.rank - rank
    for i, s in enumerate(sizes):
        if skip > 0 and s == 1:
            skip -= 1
            continue
        keep.append(i)
    if skip > 0:
        # The library would write all remaining axes yet set rank = sub_tensor_rank, silently
        # cutting trailing dimensions off.
        raise _fail(
            fn,
            t,
            "in.rank - cfg.sub_tensor_rank <= number of size-1 dimensions",
            f"size {sizes} cannot be reduced to rank {rank}",
        )
    if t.per_axis and t.dim not in keep:
        # The library then sets dim = -1 without moving the parameter pointers: the per-tensor
        # fields would hold pointers, not values.
        raise _fail(
            fn,
            t,
            "per-axis quantization dimension kept in the sub-tensor",
            f"dim {t.dim} has size 1 and is dropped to reach rank {rank}",
        )

    stride = tuple(t.mem_stride)
    buf_offset = sum(o * s for o, s in zip(offs, stride))
    shape = tuple(sizes[i] for i in keep)
    data = None
    if t.data is not None:
        box = t.data[tuple(slice(o, o + s) for o, s in zip(offs, sizes))]
        data = np.squeeze(box, axis=tuple(i for i in range(t.rank) if i not in keep))
    label = ",".join(f"{o}:{o + s}" for o, s in zip(offs, sizes))
    view = _derive(
        t,
        name or f"{t.name}[{label}]",
        shape,
        tuple(stride[i] for i in keep),
        buf_offset,
        data,
        capacity=capacity_of(t) - buf_offset * t.el_type.dtype.itemsize,
    )
    view.layout = t.layout if rank == t.rank else ""
    if t.per_axis:
        a = offs[t.dim]
        n = sizes[t.dim]
        view.dim = keep.index(t.dim)
        view.zero_point = t.zero_point[a : a + n]
        view.scale = t.scale[a : a + n]
        view.scale_frac_bits = t.scale_frac_bits[a : a + n]
        view.param_offset = t.param_offset + a
    view.notes.append(f"{fn}(offset={offs}, size={sizes}, sub_tensor_rank={rank}) of '{t.name}'")
    return view


def _derive(
    t: MliTensor,
    name: str,
    shape: tuple[int, ...],
    mem_stride: tuple[int, ...],
    offset: int,
    data: np.ndarray | None,
    capacity: int,
) -> MliTensor:
    """A view of `t`: same element type and parameters, memory of `t`'s root buffer."""
    return MliTensor(
        name=name,
        role=t.role,
        shape=shape,
        el_type=t.el_type,
        data=data,
        frac_bits=t.frac_bits,
        zero_point=t.zero_point,
        scale=t.scale,
        scale_frac_bits=t.scale_frac_bits,
        dim=t.dim,
        mem_stride=mem_stride,
        buffer=root_buffer(t),
        offset=t.offset + offset,
        capacity=capacity,
        param_offset=t.param_offset,
    )


def view_data(flat: np.ndarray, t: MliTensor, *, writeable: bool = False) -> np.ndarray:
    """The values `t` reads from the flat buffer `flat` (its root's memory): a strided numpy view
    of shape `t.shape` starting at `t.offset` with `t.mem_stride`. Read-only unless `writeable`
    (so a kernel can write its output through a view)."""
    if flat.ndim != 1:
        raise SubtensorError(
            f"view of tensor '{t.name}': the buffer must be flat, got shape {flat.shape}"
        )
    shape = tuple(t.shape)
    stride = tuple(int(s) for s in t.mem_stride)
    last = (
        t.offset + sum((d - 1) * s for d, s in zip(shape, stride)) if all(shape) else t.offset - 1
    )
    if t.offset < 0 or last >= flat.size:
        raise SubtensorError(
            f"view of tensor '{t.name}': elements {t.offset}..{last} lie outside "
            f"its buffer '{root_buffer(t)}' of {flat.size} elements"
        )
    step = flat.strides[0]
    return np.lib.stride_tricks.as_strided(
        flat[t.offset :], shape=shape, strides=tuple(s * step for s in stride), writeable=writeable
    )
