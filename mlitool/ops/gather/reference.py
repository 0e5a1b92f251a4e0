"""Kernels of the index gathers, one for both executor modes (they move elements): GATHER, TILE,
RESIZE_NEAREST_NEIGHBOR, REVERSE_V2."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.geometry import nearest_sources


def _ints(c: Call, i) -> list[int]:
    return [int(v) for v in np.asarray(c.const(i)).reshape(-1)]


def _axis(c: Call, axis: int, rank: int) -> int:
    """`axis` of a rank-`rank` tensor as an axis of the batched array (sample axis first)."""
    if not -rank <= axis < rank:
        raise UnsupportedError(f"{c.op.label}: axis {axis} is outside rank {rank}")
    return axis % rank + 1


def gather(c: Call):
    """output[p, i, q] = params[p, indices[i], q], with `batch_dims` leading axes shared by
    params and indices (the sample axis is one more of them)."""
    params, idx = c.x(0), np.asarray(c.x(1)).astype(np.int64)
    rank = len(c.tin(0).shape)
    ax = _axis(c, int(c.opt("axis", 0)), rank) - 1
    bd = int(c.opt("batch_dims", 0) or 0)
    bd += (
        len(c.tin(1).shape) if bd < 0 else 0
    )  # TFLite: a negative one counts from the indices' rank
    dim = params.shape[ax + 1]
    if idx.size and (idx.min() < 0 or idx.max() >= dim):
        raise UnsupportedError(f"{c.op.label}: an index is outside [0, {dim})")
    lead = params.shape[: bd + 1]  # the shared batch axes, sample axis included
    nb = int(np.prod(lead))
    p = params.reshape(nb, int(np.prod(params.shape[bd + 1 : ax + 1])), dim, -1)
    i = np.broadcast_to(idx, lead + idx.shape[bd + 1 :]).reshape(nb, -1)
    out = p[np.arange(nb)[:, None, None], np.arange(p.shape[1])[None, :, None], i[:, None, :]]
    want = params.shape[: ax + 1] + idx.shape[bd + 1 :] + params.shape[ax + 2 :]
    return [np.ascontiguousarray(out).reshape(want)]


def tile(c: Call):
    reps = _ints(c, 1)
    if any(r < 0 for r in reps):
        raise UnsupportedError(f"{c.op.label}: negative multiples {reps}")
    return [np.tile(c.x(0), [1, *reps])]


def resize_nearest_neighbor(c: Call):
    x = c.x(0)
    if x.ndim != 5:
        raise UnsupportedError(f"{c.op.label}: input of rank {x.ndim - 1}, expected 4")
    oh, ow = _ints(c, 1)
    align, half = bool(c.opt("align_corners", False)), bool(c.opt("half_pixel_centers", False))
    rows = nearest_sources(oh, x.shape[2], align, half)
    cols = nearest_sources(ow, x.shape[3], align, half)
    return [np.ascontiguousarray(x[:, :, rows][:, :, :, cols])]


def reverse_v2(c: Call):
    """REVERSE_V2: the elements in reverse order along each axis listed (one kernel for both
    modes: it moves elements)."""
    x = np.asarray(c.x(0))
    rank = x.ndim - 1  # the leading sample axis is not the tensor's
    axes = sorted({int(a) % rank for a in np.asarray(c.const(1)).reshape(-1)}) if rank else []
    if len(axes) != np.asarray(c.const(1)).size:
        raise UnsupportedError(f"{c.op.label}: an axis listed twice")
    return [np.ascontiguousarray(np.flip(x, axis=[a + 1 for a in axes]))]


def mirror_pad(c: Call):
    """MIRROR_PAD: REFLECT (mode 0, the edge not repeated) or SYMMETRIC (mode 1, repeated);
    TFLite takes pads up to the dimension less one (REFLECT) or the dimension (SYMMETRIC)."""
    x = np.asarray(c.x(0))
    pads = np.asarray(c.const(1)).astype(np.int64).reshape(-1, 2)
    symmetric = int(c.opt("mode", 0)) == 1
    for d, (lo, hi) in enumerate(pads):
        limit = x.shape[d + 1] - (0 if symmetric else 1)
        if min(lo, hi) < 0 or max(lo, hi) > limit:
            raise UnsupportedError(
                f"{c.op.label}: padding {[int(lo), int(hi)]} of axis {d} (size "
                f"{x.shape[d + 1]}) is outside 0..{limit}"
            )
    widths = [(0, 0)] + [(int(lo), int(hi)) for lo, hi in pads]
    return [np.pad(x, widths, mode="symmetric" if symmetric else "reflect")]


def broadcast_to(c: Call):
    """BROADCAST_TO: the input repeated along its axes of size 1 up to the constant shape."""
    x = np.asarray(c.x(0))
    shape = _ints(c, 1)
    lead = max(len(shape) - (x.ndim - 1), 0)  # the input's rank made the output's
    x = x.reshape((x.shape[0],) + (1,) * lead + x.shape[1:])
    try:
        return [np.ascontiguousarray(np.broadcast_to(x, (x.shape[0], *shape)))]
    except ValueError:
        raise UnsupportedError(
            f"{c.op.label}: shape {list(x.shape[1:])} does not broadcast to {shape}"
        ) from None


def gather_nd(c: Call):
    """GATHER_ND: output[i..., rest] = params[indices[i..., 0], ..., indices[i..., k-1], rest]
    (TFLite stops on an index outside the input)."""
    params, idx = np.asarray(c.x(0)), np.asarray(c.x(1)).astype(np.int64)
    k = idx.shape[-1]
    dims = np.asarray(params.shape[1 : k + 1])
    if idx.size and (idx.min() < 0 or np.any(idx.reshape(-1, k).max(axis=0) >= dims)):
        raise UnsupportedError(f"{c.op.label}: an index is outside the input {list(dims)}")
    if idx.ndim == len(c.tin(1).shape) + 1:  # run-time indices: one set per sample
        n = np.arange(params.shape[0]).reshape((-1,) + (1,) * (idx.ndim - 2))
        return [params[(n, *(idx[..., j] for j in range(k)))]]
    return [params[(slice(None), *(idx[..., j] for j in range(k)))]]


def embedding_lookup(c: Call):
    """EMBEDDING_LOOKUP: rows of the constant table (input 1) picked by the ids (input 0), raw
    values (an int8 table with an int8 output: TFLite copies them; with a float32 output it
    scales them)."""
    ids = np.asarray(c.x(0)).astype(np.int64)
    table = np.asarray(c.const(1))
    tab, out = c.tin(1), c.tout()
    if c.mode == "tflite" and out.dtype == "float32" and tab.dtype in ("int8", "uint8"):
        # TFLite's hybrid lookup: the stored integers times the scale (zero point 0 only)
        if np.any(np.asarray(tab.quant.zero_point) != 0):
            raise c.unsupported("EMBEDDING_LOOKUP of a table with a zero point (TFLite: 0)")
        table = table.astype(np.float32) * np.float32(tab.quant.scale[0])
    if ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise UnsupportedError(f"{c.op.label}: an id is outside the {table.shape[0]} rows")
    return [table[ids]]
