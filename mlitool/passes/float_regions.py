"""Float regions of int8 models (no element-wise island), as one op on the int8 tensors.

PT2E quantization (litert-torch) leaves a GRU in float32 inside an int8 model: DEQUANTIZE of the
int8 sequence, a float FULLY_CONNECTED of every time step, then per step SLICEs of its rows, the
recurrent FULLY_CONNECTED of the float hidden state, the gates (ADD, LOGISTIC, MUL, TANH, SUB)
and a QUANTIZE of each step's state; the float state itself runs on to the next step
unquantized. It leaves a ViT's LayerNorm (MEAN, SQUARED_DIFFERENCE, RSQRT...) and attention
(BATCH_MATMUL, SOFTMAX) in float too, its residual stream running in float from block to block
past each block's int8 FULLY_CONNECTEDs; and GroupNorm, BatchNorm + MEAN heads. No int8 op
computes that (the state is never on an int8 grid), and the float tensors have no int8
parameters, so lowering would ask for calibration.

`fuse_float_regions` replaces each such region, the ops connected through non-constant float32
tensors between DEQUANTIZEs of per-tensor int8 tensors and QUANTIZEs to per-tensor int8, by one
op (`ir.REGION_OP`) from the int8 tensors the DEQUANTIZEs read to the QUANTIZEs' int8 outputs.
It carries the region's own ops (`ir.REGION_GRAPH`, an `ir.Graph` over the model's tensors),
compiled into a program of float32 operations that tflite mode and the fallback C run as
TFLite's float32 reference kernels compute (`mlitool/ops/float_region`); float mode runs the ops
with its own kernels. A region is taken only when every op in it is one the program
has (`REGION_OPS`) with constant weights, shapes, axes and slice bounds, and when the int8
tensors it reads are all computed before it stands (at its first op after them, `_anchor`).
Where int8 ops computed from its QUANTIZEs feed its DEQUANTIZEs again (the ViT's blocks), the
region is cut into parts (`_segments`), one op each, and a float tensor one part makes and a
later one reads is an output and an input of theirs: float32 carried as it is.

It runs after the element-wise islands (`islands`, `float_expressions`), which take what they
can as int8 tables or short float expressions.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.ir import ISLAND_RUNS, REGION_GRAPH, REGION_OP
from mlitool.ops import spec as opspec
from mlitool.passes.context import PassContext
from mlitool.passes.islands import _per_tensor_int8
from mlitool.passes.upsampling import REWRITTEN_FROM

# The float32 ops a region's program runs (mlitool/ops/float_region/program.py).
REGION_OPS = frozenset(
    {
        "FULLY_CONNECTED",
        "SLICE",
        "RESHAPE",
        "CONCATENATION",
        "ADD",
        "SUB",
        "MUL",
        "LOGISTIC",
        "TANH",
        "DIV",
        "SQUARED_DIFFERENCE",
        "RSQRT",
        "SQRT",
        "EXP",
        "RELU",
        "RELU6",
        "RELU_N1_TO_1",
        "TRANSPOSE",
        "BROADCAST_TO",
        "MEAN",
        "BATCH_MATMUL",
        "SOFTMAX",
    }
)
_UNARY = ("LOGISTIC", "TANH", "RSQRT", "SQRT", "EXP", "RELU", "RELU6", "RELU_N1_TO_1", "SOFTMAX")
_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
MAX_RANK = 4


def _float_act(t: ir.Tensor | None) -> bool:
    return t is not None and t.dtype == "float32" and t.data is None


def _malformed(graph: ir.Graph, op: ir.Op) -> bool:
    """`op` fails its own validation shape check (a RESHAPE of another number of elements)."""
    check = opspec.spec(op.type).shapes
    return check is not None and any(not p.unsupported for p in check(graph, op))


def _admitted(graph: ir.Graph, op: ir.Op) -> bool:
    """Whether the program runs `op` (its float inputs and outputs, constants where it needs
    them, rank <= 4, a fused activation it knows)."""
    ts = [graph.tensor(i) for i in op.inputs]
    outs = [graph.tensors[o] for o in op.outputs]
    if len(outs) != 1 or outs[0].dtype != "float32" or len(outs[0].shape) > MAX_RANK:
        return False
    if _malformed(graph, op):  # left outside, validation names it (a region would hide it)
        return False
    if not np.isfinite(float(op.options.get("beta", 1.0) or 0.0)):
        return False  # SOFTMAX of a NaN / infinite beta: every value NaN, no int8 result
    if str(op.options.get("fused_activation", "NONE")) not in _ACTIVATIONS:
        return False
    if op.type == "FULLY_CONNECTED":
        x, w = ts[0], ts[1]
        b = ts[2] if len(ts) > 2 else None
        return (
            _float_act(x)
            and w is not None
            and w.dtype == "float32"
            and w.data is not None
            and (b is None or (b.dtype == "float32" and b.data is not None))
        )
    if op.type == "SLICE":
        return (
            _float_act(ts[0])
            and len(ts[0].shape) <= MAX_RANK
            and all(t is not None and t.data is not None for t in ts[1:])
        )
    if op.type == "RESHAPE":
        return ts[0] is not None and ts[0].dtype == "float32"
    if op.type in _UNARY:
        return _float_act(ts[0]) and len(ts[0].shape) >= (op.type == "SOFTMAX")
    if op.type in ("TRANSPOSE", "BROADCAST_TO", "MEAN"):
        # a constant permutation / shape / axes; BROADCAST_TO's output of at most rank 4
        return (
            _float_act(ts[0])
            and len(ts[0].shape) <= MAX_RANK
            and ts[1] is not None
            and ts[1].data is not None
            and (op.type != "BROADCAST_TO" or _broadcasts(ts[0].shape, outs[0].shape))
        )
    if op.type == "BATCH_MATMUL":
        return (
            len(ts) == 2
            and all(
                t is not None and t.dtype == "float32" and 2 <= len(t.shape) <= MAX_RANK for t in ts
            )
            and all(_batch_ok(t.shape, outs[0].shape) for t in ts)
        )
    if op.type == "CONCATENATION":
        return op.options.get("fused_activation", "NONE") == "NONE" and all(
            t is not None and t.dtype == "float32" for t in ts
        )
    # ADD / SUB / MUL: float operands (constants allowed) broadcast to the output
    return len(ts) == 2 and all(
        t is not None
        and t.dtype == "float32"
        and len(t.shape) <= MAX_RANK
        and _broadcasts(t.shape, outs[0].shape)
        for t in ts
    )


def _batch_ok(shape, out) -> bool:
    """A BATCH_MATMUL operand's batch dimensions: the output's, or a single matrix."""
    batch = tuple(int(d) for d in shape[:-2])
    want = tuple(int(d) for d in out[:-2])
    flat = (1,) * (len(want) - len(batch)) + batch
    return flat == want or all(d == 1 for d in batch)


def _broadcasts(shape, out) -> bool:
    s = (1,) * (len(out) - len(shape)) + tuple(shape)
    return len(s) == len(out) and all(a in (1, b) for a, b in zip(s, out))


def fuse_float_regions(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each float region replaced by one `REGION_OP` on its int8 tensors
    (`ctx.rewritten`); the same graph when there is none."""
    regions = _regions(graph)
    if not regions:
        return graph
    placed: dict[int, ir.Op] = {}
    removed: set[int] = set()
    for ops, first in regions:
        inputs, carried_in, carried_out = _boundary(graph, ops)
        outputs = tuple(op.outputs[0] for op in ops if op.type == "QUANTIZE") + carried_out
        kinds = sorted({o.type for o in ops} - {"DEQUANTIZE", "QUANTIZE"})
        sub = ir.Graph(f"{graph.name}_region{first.index}", graph.tensors, ops, inputs, outputs)
        runs = (
            f"float32 region of {len(ops)} ops ({', '.join(kinds)}) as TFLite's float32 "
            f"reference kernels, {len(inputs) - len(carried_in)} int8 input(s), "
            f"{len(outputs) - len(carried_out)} QUANTIZEd output(s)"
        )
        if carried_in or carried_out:
            runs += (
                f", {len(carried_in)} float32 input(s) and {len(carried_out)} float32 "
                "output(s) carried between its parts"
            )
        labels = tuple(o.label for o in ops)
        new = ir.Op(
            first.index,
            REGION_OP,
            tuple(inputs),
            outputs,
            {REGION_GRAPH: sub, ISLAND_RUNS: runs, REWRITTEN_FROM: labels},
            origin=first,
        )
        placed[first.index] = new
        removed.update(o.index for o in ops)
        ctx.rewritten[new.label] = list(labels)
    ops = [placed.get(op.index, op) for op in graph.ops]
    ops = [op for op in ops if op.index in placed or op.index not in removed]
    return dataclasses.replace(graph, ops=ops)


def _boundary(graph: ir.Graph, ops: list[ir.Op]) -> tuple[list[int], tuple, tuple]:
    """(inputs: the int8 tensors its DEQUANTIZEs read, then the float activations an earlier
    part of its group makes; those float inputs; the float activations it makes that a later
    part reads)."""
    inside = {op.index for op in ops}
    made = {o for op in ops for o in op.outputs}
    inputs: list[int] = []
    carried_in: list[int] = []
    for op in ops:
        if op.type == "DEQUANTIZE":
            if op.inputs[0] not in inputs:
                inputs.append(op.inputs[0])
            continue
        for i in op.inputs:
            if _float_act(graph.tensor(i)) and i not in made and i not in carried_in:
                carried_in.append(i)
    consumers = graph.consumers()
    carried_out = tuple(
        o
        for op in ops
        if op.type != "QUANTIZE"
        for o in op.outputs
        if any(r.index not in inside for r in consumers.get(o, []))
    )
    return inputs + carried_in, tuple(carried_in), carried_out


def _segments(ops: list[ir.Op], consumers) -> list[list[ir.Op]]:
    """A group's parts, in graph order: a new part where a DEQUANTIZE reads an int8 tensor
    made from the current part's outputs (a transformer's residual stream runs in float from
    block to block with each block's int8 ops between: one op per block, the float stream
    carried from one to the next)."""
    parts: list[list[ir.Op]] = []
    part: list[ir.Op] = []
    reached: set[int] = set()
    for op in ops:
        if op.type == "DEQUANTIZE" and op.inputs[0] in reached:
            parts.append(part)
            part, reached = [], set()
        part.append(op)
        if op.type == "QUANTIZE":
            reached |= _downstream(op.outputs[0], consumers)
    parts.append(part)
    return parts


def _downstream(tensor: int, consumers) -> set[int]:
    """Every tensor computed from `tensor`."""
    seen, todo = {tensor}, [tensor]
    while todo:
        for op in consumers.get(todo.pop(), []):
            for o in op.outputs:
                if o not in seen:
                    seen.add(o)
                    todo.append(o)
    return seen


def _regions(graph: ir.Graph) -> list[tuple[list[ir.Op], ir.Op]]:
    """The ops of each float region, in graph order, and the op whose place the region takes."""
    prod = {o: op for op in graph.ops for o in op.outputs}
    consumers, outputs = graph.consumers(), set(graph.outputs)
    parent = {op.index: op.index for op in graph.ops}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    member: dict[int, ir.Op] = {}
    for op in graph.ops:
        if op.type == "DEQUANTIZE":
            x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
            ok = _per_tensor_int8(x) and x.data is None and y.dtype == "float32"
        elif op.type == "QUANTIZE":
            x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
            ok = _float_act(x) and _per_tensor_int8(y)
        else:
            ok = op.type in REGION_OPS and _admitted(graph, op)
        if ok:
            member[op.index] = op
    # ops joined by the float activations between them
    for op in member.values():
        for i in op.inputs:
            src = prod.get(i)
            if src is not None and src.index in member and _float_act(graph.tensor(i)):
                parent[find(op.index)] = find(src.index)
    groups: dict[int, list[ir.Op]] = {}
    for op in graph.ops:
        if op.index in member:
            groups.setdefault(find(op.index), []).append(op)
    found = []
    position = {op.index: k for k, op in enumerate(graph.ops)}
    for ops in groups.values():
        if not _closed(graph, ops, prod, consumers, outputs):
            continue
        parts = _segments(ops, consumers)
        anchors: list[ir.Op] = []
        stands: dict[int, int] = {}  # a carried float tensor -> where its part stands
        for part in parts:
            anchor = _anchor(part, prod, consumers, position, stands)
            if anchor is None:
                break
            anchors.append(anchor)
            for op in part:
                for o in op.outputs:
                    stands[o] = position[anchor.index]
        if len(anchors) == len(parts):
            found += list(zip(parts, anchors))
    return found


def _anchor(ops, prod, consumers, position, stands) -> ir.Op | None:
    """The region's op whose place the one op takes: the first after every int8 tensor its
    DEQUANTIZEs read is made (GroupNorm's second DEQUANTIZE reads an int8 RESHAPE made after the
    first) and after the earlier parts whose float tensors it reads (`stands`); None when an op
    outside reads a region output before that place."""
    inside = {op.index for op in ops}
    made = [prod[op.inputs[0]] for op in ops if op.type == "DEQUANTIZE" and op.inputs[0] in prod]
    if any(src.index in inside for src in made):  # it would read its own output
        return None
    carried = [
        stands[i] for op in ops for i in op.inputs if i in stands and prod[i].index not in inside
    ]
    latest = max([position[src.index] for src in made] + carried, default=-1)
    anchor = next((op for op in ops if position[op.index] > latest), None)
    if anchor is None:
        return None
    for op in ops:
        if op.type != "QUANTIZE":
            continue
        for r in consumers.get(op.outputs[0], []):
            if r.index not in inside and position[r.index] <= position[anchor.index]:
                return None
    return anchor


def _paired(graph: ir.Graph, op: ir.Op, prod, consumers) -> bool:
    """Whether DEQUANTIZE / QUANTIZE `op` is half of a QDQ file's QUANTIZE -> DEQUANTIZE pair
    (the int8 tensor made by a QUANTIZE of a float tensor, or read by DEQUANTIZEs only): a
    QDQ file's ops between pairs are the int8 ops the exporter meant (`passes.qdq`)."""
    if op.type == "DEQUANTIZE":
        src = prod.get(op.inputs[0])
        return (
            src is not None and src.type == "QUANTIZE" and _float_act(graph.tensor(src.inputs[0]))
        )
    if op.type == "QUANTIZE":
        readers = consumers.get(op.outputs[0], [])
        return bool(readers) and all(r.type == "DEQUANTIZE" for r in readers)
    return False


def _closed(graph, ops, prod, consumers, outputs) -> bool:
    """A region: some op beyond DEQUANTIZE / QUANTIZE; between QDQ pairs, a float activation
    no pair wraps (else its ops are the int8 ops the exporter meant); every float activation it
    reads made in it, every one it makes read only in it (where it stands: `_anchor`)."""
    inside = {op.index for op in ops}
    if all(op.type in ("DEQUANTIZE", "QUANTIZE") for op in ops):
        return False
    if not any(op.type == "DEQUANTIZE" for op in ops):  # a float model's ops: no int8 input
        return False
    if any(_paired(graph, op, prod, consumers) for op in ops) and not any(
        graph.tensors[o].qdq is None for op in ops if op.type != "QUANTIZE" for o in op.outputs
    ):
        return False
    for op in ops:
        for i in op.inputs:
            t = graph.tensor(i)
            src = prod.get(i)
            if (
                op.type != "DEQUANTIZE"
                and _float_act(t)
                and (src is None or src.index not in inside)
            ):
                return False
        if op.type == "QUANTIZE":
            continue
        for o in op.outputs:
            if o in outputs or any(r.index not in inside for r in consumers.get(o, [])):
                return False
    return True
