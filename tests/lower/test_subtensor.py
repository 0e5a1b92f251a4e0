"""Sub-tensor views: MLI's point-to-subtensor (1.x) and create-subtensor (2.x) arithmetic and checks.

Expected offsets, shapes and capacities are computed by hand from the MLI formulas; expected
values come from plain numpy indexing of the parent's dense values, or from explicit index
arithmetic `offset + sum(i_d * stride_d)` (independent of `as_strided`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlitool.errors import MlitoolError, SubtensorError
from mlitool.mli.subtensor import (
    capacity_of,
    create_subtensor,
    point_to_subtensor,
    root_buffer,
    view_data,
)
from mlitool.mli.types import ElType, MliTensor, Role


def fmap(shape=(8, 4, 16), el=ElType.FX16, name="x") -> MliTensor:
    data = np.arange(int(np.prod(shape)), dtype=el.dtype).reshape(shape)
    return MliTensor(name, Role.WEIGHTS, shape, el, layout="CHW", data=data, frac_bits=3)


def gathered(flat: np.ndarray, t: MliTensor) -> np.ndarray:
    """What a tensor reads, by explicit index arithmetic (no stride tricks)."""
    idx = np.full(t.shape, t.offset, dtype=np.int64)
    for axis, (d, s) in enumerate(zip(t.shape, t.mem_stride)):
        shape = [1] * t.rank
        shape[axis] = d
        idx = idx + (np.arange(d) * s).reshape(shape)
    return flat[idx]


def sa_per_axis(shape, dim, name="w") -> MliTensor:
    n = shape[dim]
    data = (np.arange(int(np.prod(shape))) % 251 - 125).astype(np.int8).reshape(shape)
    return MliTensor(
        name,
        Role.WEIGHTS,
        shape,
        ElType.SA8,
        data=data,
        zero_point=np.arange(n, dtype=np.int16) * 3 - 5,
        scale=np.arange(n, dtype=np.int16) + 100,
        scale_frac_bits=np.arange(n, dtype=np.int8) + 10,
        dim=dim,
    )


# ---------------------------------------------------------------- the seed document's examples


def test_seed_channels_2_to_3():
    x = fmap()
    v = point_to_subtensor(x, [2], 1, 2)
    assert v.shape == (2, 4, 16) and v.rank == 3
    assert v.offset == 2 * 64
    assert v.mem_stride == (64, 16, 1)
    assert v.capacity == 2 * 4 * 16 * 2  # elements * sizeof(int16_t)
    assert v.buffer == "x" and v.frac_bits == 3 and v.layout == "CHW"
    np.testing.assert_array_equal(v.data, x.data[2:4])
    assert np.shares_memory(v.data, x.data)
    np.testing.assert_array_equal(
        view_data(x.data.ravel(), v), np.arange(128, 256).reshape(2, 4, 16)
    )


def test_seed_row_2_of_channel_3():
    x = fmap()
    v = point_to_subtensor(x, [3, 2], 2, 1)
    assert v.shape == (1, 16)
    assert v.offset == 3 * 64 + 2 * 16
    assert v.mem_stride == (16, 1)
    assert v.capacity == 16 * 2
    np.testing.assert_array_equal(v.data, x.data[3][2:3])
    np.testing.assert_array_equal(view_data(x.data.ravel(), v), [np.arange(224, 240)])


def test_seed_examples_with_create_subtensor():
    x = fmap()
    ch = create_subtensor(x, [2, 0, 0], [2, 4, 16], 3)
    assert (ch.shape, ch.offset, ch.mem_stride) == ((2, 4, 16), 128, (64, 16, 1))
    assert ch.capacity == 1024 - 128 * 2  # parent capacity minus skipped bytes
    row = create_subtensor(x, [3, 2, 0], [1, 1, 16], 2)
    assert (row.shape, row.offset, row.mem_stride) == ((1, 16), 224, (16, 1))
    assert row.capacity == 1024 - 224 * 2
    np.testing.assert_array_equal(row.data, x.data[3][2:3])
    assert np.shares_memory(row.data, x.data)


# ---------------------------------------------------------------- boundaries


def test_point_to_subtensor_boundaries():
    x = fmap()
    last = point_to_subtensor(x, [7], 1, 1)
    assert (last.shape, last.offset, last.capacity) == ((1, 4, 16), 448, 128)
    whole = point_to_subtensor(x, [0], 1, 8)
    assert (whole.shape, whole.offset, whole.capacity) == ((8, 4, 16), 0, 1024)
    # coord_num == rank is accepted by the library (its docs say "<", its check is "<=").
    elem = point_to_subtensor(x, [7, 3, 15], 3, 1)
    assert (elem.shape, elem.offset, elem.capacity, elem.rank) == ((1,), 511, 2, 1)
    np.testing.assert_array_equal(elem.data, [511])
    tail = point_to_subtensor(x, [5, 1, 10], 3, 6)
    assert (tail.shape, tail.offset) == ((6,), 5 * 64 + 16 + 10)
    np.testing.assert_array_equal(tail.data, np.arange(346, 352))


def test_create_subtensor_full_tensor_is_identity():
    x = fmap()
    v = create_subtensor(x, [0, 0, 0], [8, 4, 16], 3)
    assert (v.shape, v.offset, v.mem_stride, v.capacity) == (x.shape, 0, x.mem_stride, 1024)
    np.testing.assert_array_equal(v.data, x.data)


@pytest.mark.parametrize(
    "size, rank, shape, stride",
    [
        ([1, 1, 13], 1, (13,), (1,)),
        ([1, 1, 13], 2, (1, 13), (16, 1)),
        ([1, 1, 13], 3, (1, 1, 13), (64, 16, 1)),
        ([1, 2, 1], 1, (2,), (16,)),
        ([1, 2, 1], 2, (2, 1), (16, 1)),  # the first size-1 dims go first
        ([2, 1, 13], 2, (2, 13), (64, 1)),  # an inner size-1 dim goes when it is the first
        ([1, 1, 1], 1, (1,), (1,)),
    ],
)
def test_size_one_dims_dropped_down_to_rank(size, rank, shape, stride):
    x = fmap()
    v = create_subtensor(x, [5, 2, 3], size, rank)
    assert v.shape == shape and v.mem_stride == stride and v.rank == rank
    assert v.offset == 5 * 64 + 2 * 16 + 3
    box = x.data[5 : 5 + size[0], 2 : 2 + size[1], 3 : 3 + size[2]]
    np.testing.assert_array_equal(v.data, box.reshape(shape))
    np.testing.assert_array_equal(view_data(x.data.ravel(), v), box.reshape(shape))
    assert v.layout == ("CHW" if rank == 3 else "")


def test_capacity_per_element_type():
    for el, size in [(ElType.FX8, 1), (ElType.FX16, 2), (ElType.SA8, 1), (ElType.SA32, 4)]:
        x = fmap((4, 5), el)
        if el.is_sa:
            x.zero_point, x.scale, x.scale_frac_bits = (
                np.zeros(1, np.int16),
                np.ones(1, np.int16),
                np.zeros(1, np.int8),
            )
        assert create_subtensor(x, [1, 2], [2, 3], 2).capacity == (20 - 7) * size
        assert point_to_subtensor(x, [1, 2], 2, 3).capacity == 3 * size


# ---------------------------------------------------------------- violations


@pytest.mark.parametrize(
    "start, num, first, condition",
    [
        ([], 0, 1, "1 <= cfg.coord_num <= in.rank"),
        ([0, 0, 0, 0], 4, 1, "1 <= cfg.coord_num <= in.rank"),
        ([1], 2, 1, "len(cfg.start_coord) >= cfg.coord_num"),
        ([8], 1, 1, "cfg.start_coord[0] < in.shape[0]"),
        ([0, 4], 2, 1, "cfg.start_coord[1] < in.shape[1]"),
        ([0, 0, 16], 3, 1, "cfg.start_coord[2] < in.shape[2]"),
        ([-1], 1, 1, "cfg.start_coord[i] >= 0"),
        ([7], 1, 2, "cfg.start_coord[0] + cfg.first_out_dim_size <= in.shape[0]"),
        ([3, 2], 2, 3, "cfg.start_coord[1] + cfg.first_out_dim_size <= in.shape[1]"),
        ([0], 1, 0, "1 <= cfg.first_out_dim_size <= 255"),
        ([0, 0, 0], 3, 256, "1 <= cfg.first_out_dim_size <= 255"),
    ],
)
def test_point_to_subtensor_violations(start, num, first, condition):
    with pytest.raises(SubtensorError, match=r"mli_hlp_point_to_subtensor on tensor 'x'") as err:
        point_to_subtensor(fmap(), start, num, first)
    assert condition in str(err.value)
    assert isinstance(err.value, MlitoolError)


def test_point_to_subtensor_needs_contiguous_input():
    strided = create_subtensor(fmap(), [0, 0, 0], [8, 4, 8], 3)
    with pytest.raises(SubtensorError, match="contiguous"):
        point_to_subtensor(strided, [1], 1, 2)


def test_point_to_subtensor_rejects_fx4_and_moved_per_axis_params():
    with pytest.raises(SubtensorError, match="FX4"):
        point_to_subtensor(fmap((4, 4), ElType.FX4), [1], 1, 1)
    w = sa_per_axis((4, 6), dim=0)
    for start, num, first in [([1], 1, 2), ([0, 1], 2, 3)]:
        with pytest.raises(SubtensorError, match="per-axis parameters unaffected"):
            point_to_subtensor(w, start, num, first)
    # Slicing the leading axis from 0 keeps the parameters aligned: allowed, params unchanged.
    v = point_to_subtensor(w, [0], 1, 2)
    assert v.dim == 0 and v.param_offset == 0
    np.testing.assert_array_equal(v.scale, [100, 101])
    assert np.shares_memory(v.scale, w.scale)
    # Slicing another axis than dim leaves dim's index and arrays valid.
    w1 = sa_per_axis((4, 6), dim=1)
    v = point_to_subtensor(w1, [2], 1, 2)
    assert v.dim == 1 and v.scale is w1.scale and v.offset == 12


@pytest.mark.parametrize(
    "offset, size, rank, condition",
    [
        ([0, 0], [1, 1], 1, "len(cfg.offset) == len(cfg.size) == in.rank"),
        ([0, 0, 0], [1, 1, 1, 1], 1, "len(cfg.offset) == len(cfg.size) == in.rank"),
        ([0, 0, 0], [1, 1, 1], 0, "1 <= cfg.sub_tensor_rank <= in.rank"),
        ([0, 0, 0], [1, 1, 1], 4, "1 <= cfg.sub_tensor_rank <= in.rank"),
        ([8, 0, 0], [0, 4, 16], 3, "cfg.offset[0] < in.shape[0]"),
        ([0, 0, 16], [1, 1, 0], 3, "cfg.offset[2] < in.shape[2]"),
        ([0, 3, 0], [1, 2, 16], 3, "cfg.offset[1] + cfg.size[1] <= in.shape[1]"),
        ([6, 0, 0], [3, 4, 16], 3, "cfg.offset[0] + cfg.size[0] <= in.shape[0]"),
        ([0, 0, 0], [2, 0, 16], 3, "cfg.size[1] > 0"),
        ([0, -1, 0], [1, 1, 1], 3, "cfg.offset[i] >= 0"),
        ([0, 0, 0], [2, 1, 16], 1, "in.rank - cfg.sub_tensor_rank <= number of size-1 dimensions"),
        ([0, 0, 0], [2, 4, 16], 2, "in.rank - cfg.sub_tensor_rank <= number of size-1 dimensions"),
    ],
)
def test_create_subtensor_violations(offset, size, rank, condition):
    with pytest.raises(SubtensorError, match=r"mli_hlp_create_subtensor on tensor 'x'") as err:
        create_subtensor(fmap(), offset, size, rank)
    assert condition in str(err.value)


@pytest.mark.parametrize("el", [ElType.FP32, ElType.FP16, ElType.FX4])
def test_create_subtensor_unsupported_element_types(el):
    with pytest.raises(SubtensorError, match="MLI_STATUS_NOT_SUPPORTED"):
        create_subtensor(fmap((4, 4), el), [0, 0], [2, 2], 2)


@pytest.mark.parametrize(
    "make, condition",
    [
        (
            lambda: MliTensor("x", Role.ACTIVATION, (4, 4), ElType.FX8, mem_stride=(3, 1)),
            "in.mem_stride[0] >= in.shape[1] * in.mem_stride[1]",
        ),
        (
            lambda: MliTensor("x", Role.ACTIVATION, (4, 4), ElType.FX8, mem_stride=(4, 0)),
            "in.mem_stride[1] > 0",
        ),
        (lambda: MliTensor("x", Role.ACTIVATION, (4, 0), ElType.FX8), "in.shape[1] > 0"),
        (
            lambda: MliTensor("x", Role.ACTIVATION, (2, 2, 2, 2, 2), ElType.FX8),
            "in.rank <= MLI_MAX_RANK",
        ),
        (
            lambda: MliTensor("x", Role.ACTIVATION, (4, 4), ElType.FX16, capacity=31),
            "in.capacity >= bytes spanned",
        ),
        (
            lambda: MliTensor(
                "x",
                Role.ACTIVATION,
                (4, 4),
                ElType.SA8,
                dim=1,
                zero_point=np.zeros(4, np.int16),
                scale=np.ones(3, np.int16),
                scale_frac_bits=np.zeros(4, np.int8),
            ),
            "len(in.scale) >= in.shape[dim]",
        ),
        (
            lambda: MliTensor(
                "x",
                Role.ACTIVATION,
                (4, 4),
                ElType.SA8,
                dim=1,
                zero_point=np.zeros(4, np.int16),
                scale=np.array([1, 1, 0, 1], np.int16),
                scale_frac_bits=np.zeros(4, np.int8),
            ),
            "in.scale > 0",
        ),
        (
            lambda: MliTensor(
                "x",
                Role.ACTIVATION,
                (4, 4),
                ElType.SA8,
                dim=2,
                zero_point=np.zeros(4, np.int16),
                scale=np.ones(4, np.int16),
                scale_frac_bits=np.zeros(4, np.int8),
            ),
            "in.el_params.sa.dim < in.rank",
        ),
    ],
)
def test_invalid_input_tensor(make, condition):
    for call in (
        lambda t: create_subtensor(t, [0, 0], [1, 1], 2),
        lambda t: point_to_subtensor(t, [0], 1, 1),
    ):
        with pytest.raises(SubtensorError) as err:
            call(make())
        assert condition in str(err.value)


# ---------------------------------------------------------------- per-axis parameters


def test_per_axis_params_advanced_and_dim_kept():
    w = sa_per_axis((3, 3, 4, 8), dim=3)  # HWCN weights, per output channel
    v = create_subtensor(w, [0, 0, 0, 2], [3, 3, 4, 3], 4)
    assert v.dim == 3 and v.param_offset == 2
    np.testing.assert_array_equal(v.scale, [102, 103, 104])
    np.testing.assert_array_equal(v.zero_point, [1, 4, 7])
    np.testing.assert_array_equal(v.scale_frac_bits, [12, 13, 14])
    assert np.shares_memory(v.scale, w.scale)
    assert v.offset == 2 and v.mem_stride == (96, 32, 8, 1)
    np.testing.assert_array_equal(v.data, w.data[..., 2:5])


def test_per_axis_dim_remapped_when_leading_dims_drop():
    w = sa_per_axis((4, 6), dim=1)
    v = create_subtensor(w, [2, 1], [1, 4], 1)
    assert v.shape == (4,) and v.dim == 0 and v.param_offset == 1
    assert v.offset == 2 * 6 + 1
    np.testing.assert_array_equal(v.scale, [101, 102, 103, 104])
    np.testing.assert_array_equal(v.data, w.data[2, 1:5])
    w3 = sa_per_axis((1, 1, 5), dim=2)
    v3 = create_subtensor(w3, [0, 0, 3], [1, 1, 2], 1)
    assert v3.dim == 0 and list(v3.scale) == [103, 104]


def test_per_axis_dim_not_sliced_keeps_params():
    w = sa_per_axis((4, 6), dim=1)
    v = create_subtensor(w, [1, 0], [2, 6], 2)
    assert v.dim == 1 and v.param_offset == 0
    np.testing.assert_array_equal(v.scale, w.scale)


def test_per_axis_dim_dropped_is_refused():
    # MLI 2.0.2 would set dim = -1 but leave the pointers: the per-tensor values would be garbage.
    w = sa_per_axis((4, 6), dim=0)
    with pytest.raises(SubtensorError, match="per-axis quantization dimension kept"):
        create_subtensor(w, [2, 1], [1, 4], 1)
    # Kept (rank not reduced) it is fine: one channel's parameters.
    v = create_subtensor(w, [2, 1], [1, 4], 2)
    assert v.dim == 0 and list(v.scale) == [102] and v.param_offset == 2


def test_per_tensor_sa_params_shared():
    x = fmap((4, 6), ElType.SA8)
    x.zero_point, x.scale, x.scale_frac_bits = (
        np.array([-3], np.int16),
        np.array([77], np.int16),
        np.array([9], np.int8),
    )
    v = create_subtensor(x, [1, 2], [1, 3], 1)
    assert v.dim == -1 and v.scale is x.scale and v.zero_point is x.zero_point
    assert v.param_offset == 0


def test_per_axis_view_of_view_accumulates_param_offset():
    w = sa_per_axis((2, 10), dim=1)
    v1 = create_subtensor(w, [0, 3], [2, 6], 2)
    v2 = create_subtensor(v1, [1, 2], [1, 3], 1)
    assert v2.dim == 0 and v2.param_offset == 5 and v2.offset == 10 + 5 and v2.buffer == "w"
    np.testing.assert_array_equal(v2.scale, [105, 106, 107])
    np.testing.assert_array_equal(v2.data, w.data[1, 5:8])


# ---------------------------------------------------------------- views of views, strided parents


def test_views_of_views_resolve_to_root():
    x = fmap()
    ch = point_to_subtensor(x, [2], 1, 2)
    row = point_to_subtensor(ch, [1, 2], 2, 1)
    assert row.buffer == "x" and root_buffer(row) == "x"
    assert row.offset == 128 + 64 + 32 and row.shape == (1, 16)
    np.testing.assert_array_equal(row.data, x.data[3, 2:3])
    box = create_subtensor(ch, [1, 1, 4], [1, 2, 8], 2)
    assert box.offset == 128 + 64 + 16 + 4 and box.mem_stride == (16, 1)
    assert box.capacity == capacity_of(ch) - (64 + 16 + 4) * 2
    np.testing.assert_array_equal(box.data, x.data[3, 1:3, 4:12])
    np.testing.assert_array_equal(view_data(x.data.ravel(), box), x.data[3, 1:3, 4:12])


def test_strided_parent_with_holes():
    root = fmap((6, 5, 7), ElType.FX8, name="r")
    flat = root.data.ravel()
    p = create_subtensor(root, [1, 1, 2], [4, 3, 4], 3)  # holes: strides (35, 7, 1), shape 4x3x4
    assert p.mem_stride == (35, 7, 1) and p.offset == 35 + 7 + 2
    dense_p = root.data[1:5, 1:4, 2:6]
    np.testing.assert_array_equal(gathered(flat, p), dense_p)
    v = create_subtensor(p, [2, 0, 1], [2, 3, 2], 3)
    assert v.offset == p.offset + 2 * 35 + 1 and v.mem_stride == (35, 7, 1)
    np.testing.assert_array_equal(view_data(flat, v), dense_p[2:4, :, 1:3])
    np.testing.assert_array_equal(gathered(flat, v), dense_p[2:4, :, 1:3])
    np.testing.assert_array_equal(v.data, dense_p[2:4, :, 1:3])


def test_explicit_mem_stride_parent_without_data():
    # An activation laid out with padding: shape 3x4, rows 10 apart, elements 2 apart.
    flat = np.arange(40, dtype=np.int16) * 7 - 100
    t = MliTensor("a", Role.ACTIVATION, (3, 4), ElType.FX16, mem_stride=(10, 2), capacity=80)
    dense = flat[np.arange(3)[:, None] * 10 + np.arange(4) * 2]
    v = create_subtensor(t, [1, 1], [2, 2], 2)
    assert v.data is None and v.buffer == "a" and v.offset == 12 and v.capacity == 80 - 24
    np.testing.assert_array_equal(view_data(flat, v), dense[1:3, 1:3])
    col = create_subtensor(t, [0, 3], [3, 1], 1)
    assert col.shape == (3,) and col.mem_stride == (10,)
    np.testing.assert_array_equal(view_data(flat, col), dense[:, 3])


# ---------------------------------------------------------------- view_data


def test_view_data_bounds_and_flags():
    flat = np.arange(20, dtype=np.int8)
    t = MliTensor("b", Role.ACTIVATION, (2, 3), ElType.FX8, mem_stride=(8, 2), offset=5)
    np.testing.assert_array_equal(view_data(flat, t), [[5, 7, 9], [13, 15, 17]])
    assert not view_data(flat, t).flags.writeable
    out = view_data(flat, t, writeable=True)
    out[...] = -1
    assert (flat[[5, 7, 9, 13, 15, 17]] == -1).all() and flat[6] == 6
    t.offset = 8  # last element 8 + 8 + 4 = 20: one past the end
    with pytest.raises(SubtensorError, match="outside its buffer 'b'"):
        view_data(flat, t)
    with pytest.raises(SubtensorError, match="must be flat"):
        view_data(flat.reshape(4, 5), t)
    # Non-contiguous flat buffers are stepped correctly.
    wide = np.arange(40, dtype=np.int8)[::2]
    t.offset = 0
    np.testing.assert_array_equal(view_data(wide, t), gathered(np.ascontiguousarray(wide), t))


# ---------------------------------------------------------------- properties


@st.composite
def strided_case(draw):
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    pad = [draw(st.integers(0, 3)) for _ in range(rank)]  # holes between rows of each axis
    root_shape = [d + p for d, p in zip(shape, pad)]
    start = [draw(st.integers(0, p)) for p in pad]
    offset = [draw(st.integers(0, d - 1)) for d in shape]
    size = [draw(st.integers(1, d - o)) for d, o in zip(shape, offset)]
    ones = sum(s == 1 for s in size)
    sub_rank = draw(st.integers(max(1, rank - ones), rank))
    el = draw(st.sampled_from([ElType.FX8, ElType.FX16, ElType.SA32]))
    return root_shape, start, shape, offset, size, sub_rank, el


def expected_box(dense, offset, size, sub_rank):
    box = dense[tuple(slice(o, o + s) for o, s in zip(offset, size))]
    drop, skip = [], dense.ndim - sub_rank
    for i, s in enumerate(size):
        if skip > 0 and s == 1:
            drop.append(i)
            skip -= 1
    return box.reshape([s for i, s in enumerate(size) if i not in drop])


@settings(max_examples=200, deadline=None)
@given(strided_case())
def test_create_subtensor_reads_numpy_slice(case):
    root_shape, start, shape, offset, size, sub_rank, el = case
    root = fmap(tuple(root_shape), el, name="root")
    if el.is_sa:
        root.zero_point, root.scale, root.scale_frac_bits = (
            np.zeros(1, np.int16),
            np.ones(1, np.int16),
            np.zeros(1, np.int8),
        )
    flat = root.data.ravel()
    parent = create_subtensor(root, start, shape, len(shape))  # a parent with holes
    dense_parent = root.data[tuple(slice(a, a + d) for a, d in zip(start, shape))]
    v = create_subtensor(parent, offset, size, sub_rank)
    want = expected_box(dense_parent, offset, size, sub_rank)
    assert v.rank == sub_rank and v.buffer == "root"
    np.testing.assert_array_equal(view_data(flat, v), want)
    np.testing.assert_array_equal(gathered(flat, v), want)
    np.testing.assert_array_equal(v.data, want)
    assert np.shares_memory(v.data, root.data)
    itemsize = el.dtype.itemsize
    assert v.capacity == root.data.nbytes - v.offset * itemsize
    assert v.capacity >= v.nbytes  # the view stays valid


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_point_to_subtensor_reads_numpy_index(data):
    rank = data.draw(st.integers(1, 4))
    shape = [data.draw(st.integers(1, 5)) for _ in range(rank)]
    num = data.draw(st.integers(1, rank))
    coords = [data.draw(st.integers(0, d - 1)) for d in shape[:num]]
    first = data.draw(st.integers(1, shape[num - 1] - coords[-1]))
    x = fmap(tuple(shape), ElType.FX16)
    v = point_to_subtensor(x, coords, num, first)
    want = x.data[tuple(coords[:-1])][coords[-1] : coords[-1] + first]
    assert v.shape == want.shape and v.rank == rank - num + 1
    assert v.capacity == want.size * 2
    np.testing.assert_array_equal(view_data(x.data.ravel(), v), want)
    np.testing.assert_array_equal(v.data, want)
