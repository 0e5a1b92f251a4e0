"""Constant folding (a model-stage pass): shape arithmetic of dynamic-batch exports becomes constants.

Keras exports with a dynamic batch (shape signature -1 in the batch) compute every Flatten /
Reshape target at run time: SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE on int32 tensors (also
GATHER, REDUCE_PROD, CONCATENATION, CAST, FILL, RANGE). MLI runs one sample, so the batch is
fixed to 1; then every op whose inputs are all constant (SHAPE: whose input's shape is static)
is evaluated once with tflite mode's own kernels, the same arithmetic TFLite runs, and its
outputs become constants; the ops this leaves without a reader disappear. The shapes TFLite
computes at run time follow in op order: a RESHAPE whose shape input became constant gets the
shape it computes (the converter stores placeholders such as [1, 1]), and an op after it the
shape its validation check computes.

Why here, right after reading and before validation (`pipeline.read`, for every command): the
validation refuses the run-time shapes this resolves, and every later stage (validation, the
support check, lowering, the executors) then sees one static graph; the lowering-stage passes
run after the support check, which is too late. An op is evaluated only
when its arity and options are sound and its kernel accepts it; otherwise it is left for the
validation to report. Op indices keep the file's numbering (as `inspect` shows them and config
overrides name them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.ops import spec as opspec
from mlitool.passes.context import PassContext
from mlitool.tflite.validate import runtime_shaped
from mlitool.tflite.validate_ops import activation_types, arity, options_table, window_options


@dataclasses.dataclass(frozen=True)
class Folding:
    """What folding changed: the graph inputs whose dynamic batch was fixed to 1, the labels of
    the ops evaluated into constants, and of the ops removed as left without a reader."""

    batch_fixed: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def fold_constants(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with its batch fixed to 1 and its constant ops folded, what changed recorded in
    `ctx`; the same graph when nothing changes (the file's graph is left as read)."""
    g, done = _fold_constants(graph)
    ctx.batch_fixed += done.batch_fixed
    ctx.folded += done.folded
    ctx.removed += done.removed
    return g


def _fold_constants(graph: ir.Graph) -> tuple[ir.Graph, Folding]:
    tensors = [_batch_fixed(t) for t in graph.tensors]
    batch = tuple(graph.tensors[i].name for i in graph.inputs if tensors[i] is not graph.tensors[i])
    g = dataclasses.replace(graph, tensors=tensors, ops=list(graph.ops))
    dead_before = {op.index for op in _dead(graph)}
    folded: list[ir.Op] = []
    # Shapes TFLite computes at run time: all re-derived where an op computes them; unknown
    # (not static even with the batch fixed to 1) until then.
    run_time = runtime_shaped(graph)
    unknown = {i for i in run_time if not _static(tensors[i]) or tensors[i].shape_signature is None}
    # an op writing a constant, or a graph input, makes a malformed graph: left as it is
    written = {i for op in graph.ops for i in op.outputs}
    bad = {i for i in written if graph.tensors[i].is_constant or i in graph.inputs}
    for op in graph.ops:
        sound = not bad.intersection(op.inputs + op.outputs)
        if sound and _fold(g, op, unknown):
            folded.append(op)
            unknown -= set(op.outputs)
        elif _infer_shapes(g, op, run_time, unknown):
            unknown -= set(op.outputs)
            # an output shape computed at run time (BROADCAST_TO to a BROADCAST_ARGS) is known
            # now: its validation shape check no longer stops the fold
            if sound and _fold(g, op, unknown):
                folded.append(op)
    gone = {op.index for op in folded}
    g.ops = [op for op in graph.ops if op.index not in gone]
    removed: list[str] = []
    while folded and (dead := [op for op in _dead(g) if op.index not in dead_before]):
        removed += [op.label for op in dead]
        g.ops = [op for op in g.ops if op not in dead]
    if not batch and not folded and all(a is b for a, b in zip(tensors, graph.tensors)):
        return graph, Folding()
    return g, Folding(batch, tuple(op.label for op in folded), tuple(removed))


def _batch_fixed(t: ir.Tensor) -> ir.Tensor:
    sig = t.shape_signature
    if not sig or sig[0] != -1 or not t.shape or t.shape[0] != 1:
        return t
    return dataclasses.replace(t, shape_signature=(1, *sig[1:]))


def _static(t: ir.Tensor) -> bool:
    return t.shape_signature is None or -1 not in t.shape_signature


def _dead(g: ir.Graph) -> list[ir.Op]:
    """Ops none of whose outputs is read or a graph output (or a variable, LSTM state)."""
    read = g.consumers().keys() | set(g.outputs)
    return [
        op
        for op in g.ops
        if op.outputs and not any(i in read or g.tensors[i].is_variable for i in op.outputs)
    ]


def _sound(g: ir.Graph, op: ir.Op) -> bool:
    spec = opspec.get(op.type)
    return (
        spec is not None
        and spec.slots is not None
        and not any(True for check in (arity, options_table) for _ in check(g, op))
    )


def _runnable(g: ir.Graph, op: ir.Op) -> bool:
    """Whether a `_sound` op's kernel may run on its constants: its window options, element
    types and shapes pass the validation's checks (the reader has already taken the computed
    output shapes); else it is left for the validation to report."""
    shapes = opspec.spec(op.type).shapes
    checks = (window_options, activation_types) + ((shapes,) if shapes else ())
    return not any(True for check in checks for _ in check(g, op))


def _fold(g: ir.Graph, op: ir.Op, unknown: set[int]) -> bool:
    """Evaluate `op` into constants when it can be (its tensors updated in `g`); False when it
    cannot, or its kernel refuses."""
    ins = [g.tensors[i] for i in op.inputs if i >= 0]
    outs = [g.tensors[i] for i in op.outputs if i >= 0]
    if (
        not ins
        or len(outs) != len(op.outputs)
        or any(i in g.outputs or t.is_variable for i, t in zip(op.outputs, outs))
        or not _sound(g, op)
    ):
        return False
    if opspec.spec(op.type).shape_only:
        if any(t.index in unknown for t in ins):
            return False
    elif not all(t.is_constant for t in ins):
        return False
    kernel = opspec.spec(op.type).run[1]
    if kernel is None or not _runnable(g, op):
        return False
    try:
        with np.errstate(all="ignore"):  # float arithmetic is IEEE's, as in TFLite
            values = kernel(Call(op, g, "tflite", {}, 1))
    except UnsupportedError:
        return False
    if any(np.asarray(v).dtype != np.dtype(t.dtype) for v, t in zip(values, outs)):
        return False
    for t, v in zip(outs, values):
        data = np.array(v[0], order="C")  # not ascontiguousarray: it makes scalars 1-D
        g.tensors[t.index] = dataclasses.replace(
            t, data=data, shape=tuple(data.shape), shape_signature=None
        )
    return True


def _infer_shapes(g: ir.Graph, op: ir.Op, run_time: dict[int, str], unknown: set[int]) -> bool:
    """Static shapes for the outputs of `op` whose shape TFLite computes at run time in the file
    (`run_time`: a -1 in the signature, which is not always the batch alone, e.g. the rows
    batch x 16 of a Dense on [batch, 16, C]; a RESHAPE to a computed shape; an op after them),
    once its inputs' shapes are static: a RESHAPE's from its constant shape input, other ops'
    from their validation shape check (the shape it computes). True when it did."""
    outs = [g.tensors[i] for i in op.outputs if i >= 0]
    ins = [g.tensors[i] for i in op.inputs if i >= 0]
    if (
        not any(t.index in run_time for t in outs)
        or any(t.index in unknown for t in ins)
        or not _sound(g, op)
    ):
        return False
    shapes = opspec.spec(op.type).shapes
    if op.type == "RESHAPE":
        if not _reshape_shape(g, op):
            return False
    elif shapes is None:
        return False  # no check computes its shapes: left to the validation
    else:
        for _ in range(len(outs) + 1):  # a check reports the first output that differs
            p = next(shapes(g, op), None)
            if p is None:
                break
            if p.computed is None or p.tensor.index not in op.outputs:
                return False  # a problem the validation will report
            g.tensors[p.tensor.index] = dataclasses.replace(p.tensor, shape=tuple(p.computed))
        else:
            return False
    for i in op.outputs:
        t = g.tensors[i]
        g.tensors[i] = dataclasses.replace(t, shape_signature=tuple(t.shape))
    return True


def _reshape_shape(g: ir.Graph, op: ir.Op) -> bool:
    """The shape a RESHAPE with a constant shape computes (-1: what the size leaves) as its
    output's; False when it has none."""
    shape_t = g.slot(op, "shape")
    if shape_t is not None and shape_t.is_constant:
        dims = [int(d) for d in np.asarray(shape_t.data).reshape(-1)]
    elif "new_shape" in op.options:
        dims = [int(d) for d in op.options["new_shape"]]
    else:
        return False
    size = g.slot(op, "input").size
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if dims.count(-1) == 1 and known > 0 and size % known == 0:
        dims[dims.index(-1)] = size // known
    if dims.count(-1) == 0 and int(np.prod(dims, dtype=np.int64)) == size:
        out = g.tensors[op.outputs[0]]
        g.tensors[out.index] = dataclasses.replace(out, shape=tuple(dims))
        return True
    return False
