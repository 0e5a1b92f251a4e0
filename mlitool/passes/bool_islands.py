"""Float islands of int8 models that make or pass through a bool, as int8 ops.

TF 2.21 leaves `tf.where(c, x, -x)` in float inside an int8 model (DEQUANTIZE, NEG, SELECT of
the float values, QUANTIZE), and sometimes a comparison of dequantized values too (NOT_EQUAL of
a DEQUANTIZE and 0.5, writing bool). The float tensors have no int8 parameters, so lowering
would ask for calibration. `fuse_bool_islands` rewrites two shapes of island, each equal to the
float one on every input:

- a comparison (GREATER ... NOT_EQUAL) of float operands that are functions of one int8 tensor
  (its DEQUANTIZE and the element-wise ops `float_expressions` tabulates; constants of one
  value): a function of that tensor's 256 values, so `ir.ISLAND_OP` on it carrying the 256
  bool results (0 / 1, `ISLAND_TABLE`) tflite mode computes through the island's own ops;
- QUANTIZE(SELECT(c, a, b)) (SELECT_V2 too) of a bool condition, each side a function of one
  int8 tensor or a float constant: QUANTIZE is element-wise, so this is
  SELECT(c, QUANTIZE(a), QUANTIZE(b)), an int8 SELECT (which copies values) of two int8 sides:
  each an `ISLAND_OP` of its 256 int8 results (none when they are the int8 tensor itself on the
  output's parameters), a constant the QUANTIZE of its values.

Comparisons go first: their DEQUANTIZE may be the one a SELECT's side reads. A float op goes
once nothing reads it any more (one DEQUANTIZE may feed several islands). Each new op takes
the index of the model op it stands in for and lists the ops it replaces (`REWRITTEN_FROM`,
`inspect`, with how it runs: `ISLAND_RUNS`): the SELECT its own; a side its last float op's
where only this island reads that op, else the QUANTIZE's (one such side per island; an island
with two stays, still refused).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.execute.reference.params import affine_quantize
from mlitool.ir import ISLAND_OP, ISLAND_RUNS, ISLAND_TABLE
from mlitool.passes.context import PassContext
from mlitool.passes.float_expressions import _Finder
from mlitool.passes.islands import _per_tensor_int8, _table
from mlitool.passes.upsampling import REWRITTEN_FROM

COMPARISONS = ("GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "EQUAL", "NOT_EQUAL")
SELECTS = ("SELECT", "SELECT_V2")


def fuse_bool_islands(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with its comparison islands and quantized SELECT islands as int8 ops
    (`ctx.rewritten`); the same graph when there is none."""
    return _selects(_comparisons(graph, ctx), ctx)


def _chain_ops(finder: _Finder, graph: ir.Graph, tensors) -> list[ir.Op]:
    """The ops computing float `tensors` from their int8 input, in graph order (a DEQUANTIZE
    first)."""
    found: dict[int, ir.Op] = {}
    for t in tensors:
        finder._collect(t, found)
    position = {op.index: k for k, op in enumerate(graph.ops)}
    return sorted(found.values(), key=lambda op: position[op.index])


def _kinds(ops) -> str:
    return ", ".join(sorted({o.type for o in ops} - {"DEQUANTIZE", "QUANTIZE"}) or ["DEQUANTIZE"])


def _comparisons(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    finder = _Finder(graph)
    placed: dict[int, ir.Op] = {}
    covered: set[int] = set()
    for op in graph.ops:
        if op.type not in COMPARISONS:
            continue
        out = graph.tensors[op.outputs[0]]
        if out.dtype != "bool" or op.outputs[0] in graph.outputs:
            continue
        operands = [graph.tensors[i] for i in op.inputs[:2]]
        if any(t.dtype != "float32" for t in operands):
            continue
        leaves = [finder.leaves(t.index) for t in operands]
        if None in leaves or len(frozenset().union(*leaves)) != 1:
            continue
        if any(t.data is None and tuple(t.shape) != tuple(out.shape) for t in operands):
            continue
        (x,) = frozenset().union(*leaves)
        chain = _chain_ops(finder, graph, [t.index for t in operands if t.data is None])
        table = _table(graph, (*chain, op))
        labels = (op.label, *(o.label for o in chain))
        placed[op.index] = ir.Op(
            op.index,
            ISLAND_OP,
            (x,),
            op.outputs,
            {
                ISLAND_TABLE: tuple(int(v) for v in table),
                ISLAND_RUNS: f"bool table of 256 ({op.type} of {_kinds(chain)} of one int8 "
                "input: identical on every input)",
                REWRITTEN_FROM: labels,
            },
            origin=op,
        )
        ctx.rewritten[placed[op.index].label] = list(labels)
        covered.update(o.index for o in chain)
    if not placed:
        return graph
    ops = [placed.get(op.index, op) for op in graph.ops]
    return dataclasses.replace(graph, ops=_without_dead(graph, ops, covered))


def _without_dead(graph: ir.Graph, ops: list[ir.Op], candidates: set[int]) -> list[ir.Op]:
    """`ops` less those of `candidates` whose outputs nothing reads any more."""
    outputs = set(graph.outputs)
    while True:
        read = {i for op in ops for i in op.inputs}
        dead = {
            op.index
            for op in ops
            if op.index in candidates and not any(o in read or o in outputs for o in op.outputs)
        }
        if not dead:
            return ops
        ops = [op for op in ops if op.index not in dead]


def _selects(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    finder = _Finder(graph)
    consumers, outputs = graph.consumers(), set(graph.outputs)
    prod = {o: op for op in graph.ops for o in op.outputs}
    tensors = list(graph.tensors)
    placed: dict[int, ir.Op] = {}
    before: dict[int, list[ir.Op]] = {}  # side ops to run just before the SELECT
    removed: set[int] = set()
    chains: set[int] = set()
    for q in graph.ops:
        if q.type != "QUANTIZE":  # (an op mlitool does not know may have no input or output)
            continue
        out = graph.tensors[q.outputs[0]]
        sel = prod.get(q.inputs[0])
        if not _per_tensor_int8(out) or sel is None:
            continue
        if sel.type not in SELECTS or q.inputs[0] in outputs:
            continue
        cond, *sides = sel.inputs[:3]
        if graph.tensors[cond].dtype != "bool" or len(consumers[q.inputs[0]]) != 1:
            continue
        if any(graph.tensors[v].dtype != "float32" for v in sides):
            continue
        live = list(dict.fromkeys(v for v in sides if graph.tensors[v].data is None))
        if any(finder.leaves(v) is None or len(finder.leaves(v)) != 1 for v in live):
            continue
        chain = _chain_ops(finder, graph, live)
        island = {sel.index, *(o.index for o in chain)}

        def own(op: ir.Op, island=island) -> bool:  # read by this island only: index free
            return all(
                o not in outputs and all(r.index in island for r in consumers.get(o, []))
                for o in op.outputs
            )

        if sum(not own(prod[v]) for v in live) > 1:
            continue  # one index to spare (the QUANTIZE's), for a side whose last op stays
        new_sides: dict[int, int] = {}
        for v in sides:
            if v not in new_sides:
                top = prod.get(v)
                shared = top is not None and not own(top)
                side = _side(graph, finder, tensors, ctx, v, q, q if shared else top)
                new_sides[v] = side if isinstance(side, int) else side.outputs[0]
                if not isinstance(side, int):
                    if shared:
                        before.setdefault(sel.index, []).append(side)
                    else:
                        placed[top.index] = side
        labels = (sel.label, q.label)
        placed[sel.index] = dataclasses.replace(
            sel,
            inputs=(cond, *(new_sides[v] for v in sides), *sel.inputs[3:]),
            outputs=q.outputs,
            options={
                **sel.options,
                ISLAND_RUNS: f"int8 {sel.type} of the QUANTIZEd sides (QUANTIZE of a "
                f"{sel.type} is the {sel.type} of the QUANTIZEd: identical on every input)",
                REWRITTEN_FROM: labels,
            },
        )
        ctx.rewritten[placed[sel.index].label] = list(labels)
        removed.add(q.index)
        chains |= {o.index for o in chain}
    if not placed:
        return graph
    ops: list[ir.Op] = []
    for op in graph.ops:
        ops += before.get(op.index, [])
        if op.index in placed or op.index not in removed:
            ops.append(placed.get(op.index, op))
    return dataclasses.replace(graph, tensors=tensors, ops=_without_dead(graph, ops, chains))


def _side(graph, finder, tensors, ctx, v: int, q: ir.Op, at: ir.Op | None) -> int | ir.Op:
    """QUANTIZE(`v`) on `q`'s parameters, one side of a SELECT: a new int8 constant, the int8
    input itself (tensor indices), or a new table op (index and origin: `at`)."""
    t, out = graph.tensors[v], graph.tensors[q.outputs[0]]
    made = dataclasses.replace(
        t, index=len(tensors), name=f"{t.name}/int8", dtype="int8", quant=out.quant, data=None
    )
    if t.data is not None:
        tensors.append(dataclasses.replace(made, data=affine_quantize(t.data, out)))
        return made.index
    tensors.append(made)
    (x,) = finder.leaves(v)
    chain = _chain_ops(finder, graph, [v])
    as_int8 = ir.Op(q.index, "QUANTIZE", (v,), (made.index,))
    table = _table(dataclasses.replace(graph, tensors=tensors), (*chain, as_int8))
    src = graph.tensors[x]
    same = _same_quant(src.quant, out.quant) and tuple(src.shape) == tuple(t.shape)
    if same and np.array_equal(table, np.arange(-128, 128)):
        tensors.pop()  # the side is the int8 input on the output's parameters
        return x
    labels = (at.label, *(o.label for o in chain if o.index != at.index))
    op = ir.Op(
        at.index,
        ISLAND_OP,
        (x,),
        (made.index,),
        {
            ISLAND_TABLE: tuple(int(k) for k in table),
            ISLAND_RUNS: f"int8 table of 256 ({_kinds(chain)} of one int8 input, QUANTIZEd "
            "as the SELECT's output: identical on every input)",
            REWRITTEN_FROM: labels,
        },
        origin=at,
    )
    ctx.rewritten[op.label] = list(labels)
    return op


def _same_quant(a: ir.Quant | None, b: ir.Quant | None) -> bool:
    return (
        a is not None
        and b is not None
        and np.array_equal(a.scale, b.scale)
        and np.array_equal(a.zero_point, b.zero_point)
    )
