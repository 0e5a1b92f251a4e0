"""MLI 2.0.2 data-movement kernels: argmax (top-k) and permute."""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.kernels.adapter import Runner, runner
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.kernels.qparams import batched_view
from mlitool.mli.types import MliTensor


# ---------------------------------------------------------------------------------- argmax
def _memory_positions(t: MliTensor) -> np.ndarray:
    """Offset (in elements, through mem_stride) of every element of `t`, shaped like `t`."""
    idx = np.indices(t.shape, dtype=np.int64)
    strides = np.asarray(t.mem_stride, dtype=np.int64).reshape((-1,) + (1,) * t.rank)
    return (idx * strides).sum(axis=0) if t.rank else np.zeros((), np.int64)


class _Heaps:
    """Binary min-heaps of element indices, one per row, advanced in lockstep as MLI's
    `heapify` does (strict `<`, so the order among equal values follows the reference)."""

    def __init__(self, vals: np.ndarray, k: int):
        self.vals = vals
        self.rows = np.arange(vals.shape[0])
        self.heap = np.tile(np.arange(k), (vals.shape[0], 1))

    def key(self, slot) -> np.ndarray:
        return self.vals[self.rows, self.heap[self.rows, slot]]

    def heapify(self, size: int, root, active=None) -> None:
        root = np.broadcast_to(np.asarray(root, dtype=np.int64), self.rows.shape).copy()
        active = np.ones(self.rows.shape, bool) if active is None else active.copy()
        while True:
            active &= root < size // 2
            if not active.any():
                return
            smallest = root.copy()
            for child in (2 * root + 1, 2 * root + 2):
                inside = child < size
                c = np.where(inside, child, 0)
                smaller = inside & (self.key(c) < self.key(smallest))
                smallest = np.where(smaller, child, smallest)
            move = active & (smallest != root)
            r = self.rows[move]
            a, b = root[move], smallest[move]
            self.heap[r, a], self.heap[r, b] = self.heap[r, b], self.heap[r, a].copy()
            root = np.where(move, smallest, root)
            active &= move

    def build(self, size: int) -> None:
        for i in range(size // 2 - 1, -1, -1):
            self.heapify(size, i)


def _top_k(vals: np.ndarray, k: int) -> np.ndarray:
    """Per row of `vals`, the element indices MLI's heap select + heap sort return (largest
    first)."""
    n = vals.shape[1]
    if k == 1:  # a one-element heap keeps the last maximum
        return (n - 1 - np.argmax(vals[:, ::-1], axis=1))[:, None]
    heaps = _Heaps(vals, k)
    heaps.build(k)
    for j in range(k, n):  # an element not below the heap's minimum replaces it
        enter = heaps.key(0) <= vals[:, j]
        heaps.heap[enter, 0] = j
        heaps.heapify(k, 0, enter)
    heaps.build(k)
    for i in range(k - 1, 0, -1):
        top = heaps.heap[:, 0].copy()
        heaps.heap[:, 0] = heaps.heap[:, i]
        heaps.heap[:, i] = top
        heaps.heapify(i, 0)
    return heaps.heap


def argmax(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith | None = None) -> np.ndarray:
    """`mli_krn_argmax_{sa8,fx16}`: for each index along `cfg['axis']` (or once, axis -1), the
    memory offsets (mem_stride based, as MLI reports them) of the `cfg['topk']` largest values
    of that slice, largest first. Returns int32 (B,) + out.shape."""
    axis, k = int(cfg.get("axis", -1)), int(cfg.get("topk", 1))
    v = batched_view(x, inp)
    pos = _memory_positions(inp)
    if axis >= 0:
        v = np.moveaxis(v, axis + 1, 1)
        pos = np.moveaxis(pos, axis, 0)
    slices = pos.shape[0] if axis >= 0 else 1
    pos = pos.reshape(slices, -1)
    order = _top_k(v.reshape(v.shape[0] * slices, -1), k).reshape(v.shape[0], slices, k)
    res = pos[np.arange(slices)[None, :, None], order]
    return res.reshape((v.shape[0],) + out.shape).astype(np.int32)


# --------------------------------------------------------------------------------- permute
def _perm(inp: MliTensor, cfg: dict) -> list[int]:
    return [int(cfg[f"perm_dim{i}"]) for i in range(inp.rank)]


def permute(x, inp: MliTensor, out: MliTensor, cfg: dict, arith: Arith | None = None) -> np.ndarray:
    """`mli_krn_permute_*`: out.shape[i] = in.shape[perm_dim{i}]; values unchanged."""
    v = np.asarray(x)
    if v.ndim == inp.rank:
        v = v[None]
    res = np.transpose(v.reshape((v.shape[0],) + inp.shape), [0] + [p + 1 for p in _perm(inp, cfg)])
    return np.ascontiguousarray(res.reshape((v.shape[0],) + out.shape)).astype(out.el_type.dtype)


LAYER_RUNNERS: dict[str, Runner] = {"argmax": runner(argmax), "permute": runner(permute)}
