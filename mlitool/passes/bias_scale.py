"""An int32 bias read the way TFLite's kernels read it: raw integers at input x weight scale.

TFLite (and TFLite Micro) compute a quantized MAC op (FULLY_CONNECTED, CONV_2D,
DEPTHWISE_CONV_2D, TRANSPOSE_CONV) by adding the raw int32 bias to the int32 accumulator, whose scale is input
scale x weight scale: the bias tensor's own stored scale is never read. Exporters usually store
exactly that product, but not always: PT2E (litert-torch) writes 0.138 x input x weight for a
FULLY_CONNECTED after an eval-mode Dropout (it keeps the Dropout's dropped rescale). On a device
the file means the raw integers at input x weight scale, so that is what `rescale_bias_as_tflite`
makes every stage read (lowering encodes the bias with its scale, fx formats dequantize it),
with one warning for the file naming the ops whose stored scale disagrees (on a channel whose
bias is not zero: a zero bias is zero at any scale, and Keras' 16x8 files store such scales).

It is a model-stage pass (`passes.runner`), the last: every stage sees one graph. The reader already does this for a bias whose scale count differs from its weights'
(`reader._bias_scales`); this is the same reading where the counts agree and the values do
not. A bias shared by ops whose products differ keeps the file's scale (lowering's checks).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.ops import spec as opspec
from mlitool.passes.context import PassContext

# float32 products differ from float64 ones in the last bits: what the exporter computed
_SAME = 1e-6


def _product(graph: ir.Graph, op: ir.Op, n: int) -> np.ndarray | None:
    """Input scale x weight scale(s), broadcast to `n` channels; None when either is missing."""
    x, w = graph.slot(op, "input"), graph.slot(op, "weights")
    if x is None or w is None or x.quant is None or w.quant is None or x.quant.per_axis:
        return None
    s = np.float32(x.quant.scale[0]) * np.asarray(w.quant.scale, np.float32)
    if s.size not in (1, n):
        return None
    return np.broadcast_to(s.astype(np.float64), (n,)).copy()


def rescale_bias_as_tflite(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each MAC op's int32 bias scale set to input x weight scale where the file's
    differs; one warning in `ctx` naming every op concerned, none when all agree."""
    wanted: dict[int, np.ndarray] = {}
    labels: dict[int, list[str]] = {}
    ratios: list[float] = []
    for op in graph.ops:
        spec = opspec.get(op.type)
        if spec is None or not spec.mac:  # MAC ops: an integer bias in those units
            continue
        b = graph.slot(op, "bias")
        if b is None or b.data is None or b.dtype not in ("int32", "int64") or b.quant is None:
            continue
        stored = np.asarray(b.quant.scale, np.float64)
        n = max(stored.size, 1)
        prod = _product(graph, op, n)
        if prod is None or stored.size not in (1, n) or not np.all(prod > 0):
            continue
        if not np.all(np.isfinite(stored)) or not np.all(np.isfinite(prod)):
            continue  # validation refuses such scales
        stored = np.broadcast_to(stored, (n,))
        raw = np.asarray(b.data).reshape(-1)
        used = raw != 0 if raw.size == n else np.full(n, bool(np.any(raw)))
        # a zero bias is zero at any scale: only the channels it moves can disagree
        off = used & (np.abs(stored - prod) > _SAME * np.minimum(stored, prod))
        if not off.any():
            continue
        if b.index in wanted and not np.array_equal(wanted[b.index], prod):
            wanted[b.index] = None  # shared by ops that disagree: keep the file's
            continue
        wanted.setdefault(b.index, prod)
        labels.setdefault(b.index, []).append(op.label)
        ratios += list(stored[off] / prod[off])
    wanted = {i: s for i, s in wanted.items() if s is not None}
    if not wanted:
        return graph
    tensors = list(graph.tensors)
    for i, prod in wanted.items():
        q = tensors[i].quant
        per_axis = prod.size > 1
        quant = ir.Quant(
            scale=prod if per_axis else prod[:1],
            zero_point=np.zeros(prod.size if per_axis else 1, np.int64),
            axis=0 if per_axis else None,
        )
        if not per_axis and q.axis is None:
            quant = dataclasses.replace(quant, zero_point=np.asarray(q.zero_point[:1], np.int64))
        tensors[i] = dataclasses.replace(tensors[i], quant=quant)
    ops = [label for i in wanted for label in labels[i]]
    lo, hi = min(ratios), max(ratios)
    ratio = f"{lo:.3g}" if np.isclose(lo, hi) else f"{lo:.3g}..{hi:.3g}"
    warning = (
        f"{len(ops)} op(s) store an int32 bias scale of {ratio} x input x weight scale "
        f"({', '.join(ops[:4])}{', ...' if len(ops) > 4 else ''}): read as TFLite's kernels "
        "read it, the raw int32 at input x weight scale"
    )
    ctx.warnings.append(warning)
    return dataclasses.replace(graph, tensors=tensors)
