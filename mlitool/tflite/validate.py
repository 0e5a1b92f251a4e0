"""The graph validation pass: what a well-formed model graph satisfies, checked once after reading.

The reader only checks that the file is a consistent flatbuffer; this pass checks the graph it
describes, so no later stage (lowering, the executors, the emitter) meets a graph it cannot
handle: op arity, order (every consumed tensor is constant, a graph input or written by an earlier
op, which also rules out cycles), one writer per tensor, the options table and window options of
each op, shapes of activations, weights and bias, and quantization parameters.

Arity, options table and option values are checked once more, and first, right after reading
(validate_structure.py: the graph passes between reading and this pass read them). Each check is
a named function yielding `Problem`s. Ops this version does not know (custom, unknown opcodes,
ops no command executes) get only the graph-wide checks, so `inspect` still summarises any
model. `problems` lists them all (for `inspect`); `check_graph` raises the first as
a ModelFormatError (exit 2) for the commands that lower or execute the graph.

Only what TFLite itself refuses is malformed. A shape check that fails on an op touching a tensor
whose shape TFLite computes at run time (a -1 in its shape signature, a RESHAPE to a non-constant
shape; the converter writes 1 for the unknown dimensions) gives an unsupported problem instead
(UnsupportedError, exit 4): mlitool needs the static shapes the file does not have. TFLite
recomputes output shapes in Prepare: `normalise_output_shapes` (run by the reader) takes the shape
an op computes for a stored one that differs, with a warning; on a graph output that is
unsupported. Zero points outside their type, an infinite scale, a pooling filter below 1 and a
FULLY_CONNECTED input that is not whole rows are unsupported too: TFLite runs such files. A zero
scale on an integer constant of zeros (a 16x8 RNN's initial state) is accepted: TFLite runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

from mlitool import ir
from mlitool.errors import ModelFormatError, UnsupportedError
from mlitool.ops import spec as opspec
from mlitool.tflite.validate_ops import (
    OpCheck,
    Problem,
    activation_types,
    arity,
    options_table,
    rescale_range,
    window_options,
)

__all__ = ["Problem", "check_graph", "normalise_output_shapes", "problems"]

GraphCheck = Callable[[ir.Graph], Iterator[Problem]]


# --- graph-wide checks --------------------------------------------------------------------------


def tensors_defined_before_use(g: ir.Graph) -> Iterator[Problem]:
    """Ops run in file order: each consumed tensor must exist by then (also rules out cycles)."""
    ready = {i for i, t in enumerate(g.tensors) if t.is_constant or t.is_variable} | set(g.inputs)
    writer = g.producers()
    for op in g.ops:
        for i in op.inputs:
            if i < 0 or i in ready:
                continue
            t = g.tensors[i]
            if i not in writer:
                if op.type == "CUSTOM":  # a custom op's own buffers (e.g. Ethos-U scratch)
                    continue
                yield Problem(
                    "is read but no op writes it and it is neither constant nor a graph input",
                    op,
                    t,
                )
            elif writer[i].index >= op.index:
                yield Problem(
                    f"is written by {writer[i].label}, which runs at or after this op "
                    "(a cycle or an out-of-order graph)",
                    op,
                    t,
                )
        ready.update(op.outputs)


def one_writer_per_tensor(g: ir.Graph) -> Iterator[Problem]:
    written: dict[int, ir.Op] = {}
    inputs = set(g.inputs)
    for op in g.ops:
        for i in op.outputs:
            t = g.tensors[i] if i >= 0 else None
            if t is None:
                yield Problem("has an omitted (-1) output", op)
            elif i in written:
                yield Problem(f"is also written by {written[i].label}", op, t)
            elif i in inputs or t.is_constant:
                yield Problem("writes a graph input or constant tensor", op, t)
            written.setdefault(i, op)


def graph_outputs_defined(g: ir.Graph) -> Iterator[Problem]:
    written = {i for op in g.ops for i in op.outputs}
    for i in g.outputs:
        if i not in written and i not in g.inputs:
            yield Problem("is a graph output, but no op writes it", tensor=g.tensors[i])


def zero_points_in_range(g: ir.Graph) -> Iterator[Problem]:
    for t in g.tensors:
        limits = _int_range(t.dtype)
        if t.quant is None or limits is None:
            continue
        zp = t.quant.zero_point
        bad = zp[(zp < limits[0]) | (zp > limits[1])]
        if bad.size:
            # TFLite reads zero points as int64 and runs such files
            yield Problem(
                f"zero point {int(bad[0])} is outside the {t.dtype} range "
                f"[{limits[0]}, {limits[1]}]",
                tensor=t,
                unsupported=True,
            )


def _int_range(dtype: str) -> tuple[int, int] | None:
    """(min, max) of an integer element type, None for other types."""
    if dtype == "int4":
        return -8, 7
    try:
        info = np.iinfo(np.dtype(dtype))
    except (TypeError, ValueError):
        return None
    return int(info.min), int(info.max)


def scales_finite_positive(g: ir.Graph) -> Iterator[Problem]:
    for t in g.tensors:
        if t.quant is None:
            continue
        s = t.quant.scale
        bad = s[~(np.isfinite(s) & (s > 0))]
        if bad.size and not np.any(s) and _integer_zeros(t):
            # zeros scaled by 0 are zeros, and TFLite runs the file: the converter's zero
            # initial state of a 16x8 RNN (FILL of a zero scalar, folded into a constant)
            continue
        if bad.size:  # TFLite's scale checks pass an infinite scale: it runs those
            yield Problem(
                f"quantization scale {float(bad[0])!r} is not finite and > 0",
                tensor=t,
                unsupported=bool(np.all(bad == np.inf)),
            )


def _integer_zeros(t: ir.Tensor) -> bool:
    """An integer constant whose values are all zero."""
    return t.data is not None and t.data.dtype.kind in "iu" and not np.any(t.data)


def constants_finite(g: ir.Graph) -> Iterator[Problem]:
    """NaN or inf in float constants, but for the infinity TFLite's exporters use: a PADV2's
    fill (litert-torch writes PyTorch's max-pool padding as -inf)."""
    infinite_ok = {op.inputs[2] for op in g.ops if op.type == "PADV2" and len(op.inputs) > 2}
    for t in g.tensors:
        if t.data is not None and t.data.dtype.kind == "f":
            finite = np.isfinite(t.data) | (np.isinf(t.data) if t.index in infinite_ok else False)
            bad = np.count_nonzero(~finite)
            if bad:
                yield Problem(f"constant data holds {bad} NaN or inf value(s)", tensor=t)


GRAPH_CHECKS: tuple[GraphCheck, ...] = (
    tensors_defined_before_use,
    one_writer_per_tensor,
    graph_outputs_defined,
    zero_points_in_range,
    scales_finite_positive,
    constants_finite,
)


def op_checks(op_type: str) -> tuple[OpCheck, ...]:
    """The checks of an op after its arity, in order; its OpSpec's shape check last (first for
    an op whose rescales are internal: the LSTM's types are read through its slots)."""
    spec = opspec.get(op_type)
    shapes = (spec.shapes,) if spec.shapes else ()
    if not spec.rescale:
        return (options_table, *shapes, activation_types)
    return (options_table, window_options, activation_types, rescale_range, *shapes)


def runtime_shaped(g: ir.Graph) -> dict[int, str]:
    """Tensor index -> why TFLite knows its shape only at run time: a -1 in its shape signature,
    the output of a RESHAPE whose shape input is not a constant, or of an op reading such a
    tensor."""
    found = {
        t.index: f"shape signature {list(t.shape_signature)}"
        for t in g.tensors
        if t.shape_signature is not None and -1 in t.shape_signature
    }
    for op in g.ops:
        shape_in = op.input("shape") if op.type == "RESHAPE" else -1
        why = next((f"computed from tensor {i}" for i in op.inputs if i in found), None)
        if shape_in >= 0 and not g.tensors[shape_in].is_constant:
            why = f"computed from the non-constant tensor {shape_in}"
        for i in op.outputs:
            if why is not None and i >= 0:
                found.setdefault(i, why)
    return found


# --- entry points --------------------------------------------------------------------------------


def problems(g: ir.Graph) -> list[Problem]:
    """Every problem of `g`, graph-wide first, then per op in order. An op's shape checks run
    only when its arity and options are sound (they index its inputs and read its options)."""
    found = [p for check in GRAPH_CHECKS for p in check(g)]
    dynamic: dict[int, str] | None = None  # computed on the first failed shape check
    for op in g.ops:
        spec = opspec.get(op.type)
        if spec is None or spec.slots is None:
            continue
        head = list(arity(g, op))
        found += head
        if head:
            continue
        for check in op_checks(op.type):
            step = list(check(g, op))
            if step and check is spec.shapes:
                dynamic = runtime_shaped(g) if dynamic is None else dynamic
                step = [_unsupported_if_dynamic(g, op, p, dynamic) for p in step]
                step = [_unsupported_if_graph_output(g, p) for p in step]
            found += step
            if step:
                break
    return found


def normalise_output_shapes(g: ir.Graph) -> list[str]:
    """TFLite recomputes each op's output shape in Prepare, so it runs files whose stored output
    shape is not the one the op computes. Take the computed shape (in op order, so the next op
    checks against it), one warning each; but not for a graph output, whose stored shape users
    read (`problems` refuses it as unsupported), nor where shapes are known at run time only.
    Returns the warnings."""
    warnings = []
    keep = set(g.inputs) | set(g.outputs)
    dynamic: dict[int, str] | None = None
    for op in g.ops:
        spec = opspec.get(op.type)
        if (
            spec is None
            or spec.slots is None
            or spec.shapes is None
            or any(True for c in (arity, options_table, window_options) for _ in c(g, op))
        ):
            continue
        p = next(spec.shapes(g, op), None)
        t = p and p.tensor
        if p is None or p.computed is None or t.index in keep or t.is_constant:
            continue
        q = t.quant
        if (
            q is not None
            and q.per_axis
            and (q.axis >= len(p.computed) or p.computed[q.axis] != len(q.scale))
        ):
            continue  # its per-axis parameters hold the stored shape: the problem stands
        dynamic = runtime_shaped(g) if dynamic is None else dynamic
        if not any(i in dynamic for i in op.inputs + op.outputs):
            g.tensors[t.index] = replace(t, shape=tuple(p.computed))
            warnings.append(
                f"{op.label}: tensor {t.index} {t.name!r} is stored with shape "
                f"{list(t.shape)}; the op computes {list(p.computed)} (as "
                "TFLite does), which mlitool takes"
            )
    return warnings


def _unsupported_if_graph_output(g: ir.Graph, p: Problem) -> Problem:
    """A graph output's stored shape that the op does not compute: TFLite runs the file (it
    recomputes the shape), mlitool keeps the shape users read from the file."""
    if p.unsupported or p.computed is None or p.tensor.index not in g.outputs:
        return p
    return replace(
        p,
        text=p.text + " (TFLite recomputes it); mlitool does not change the shape "
        "of a graph output",
        unsupported=True,
    )


def _unsupported_if_dynamic(g: ir.Graph, op: ir.Op, p: Problem, dynamic: dict[int, str]) -> Problem:
    """`p` as an unsupported problem when the op touches a tensor of run-time shape (the one
    `p` names first, else its inputs, else its outputs)."""
    first = () if p.tensor is None else (p.tensor.index,)
    i = next((i for i in first + op.inputs + op.outputs if i in dynamic), None)
    if i is None:
        return p
    why = (
        f"; the shape of tensor {i} {g.tensors[i].name!r} is only known at run time "
        f"({dynamic[i]}), and mlitool needs static shapes"
    )
    return replace(p, text=p.text + why, unsupported=True)


def check_graph(g: ir.Graph, path: str) -> None:
    """Raise ModelFormatError (exit 2) naming the file and the first malformed problem of `g`,
    else UnsupportedError (exit 4) naming the first op whose shapes are known at run time only."""
    found = problems(g)
    malformed = [p for p in found if not p.unsupported]
    if malformed:
        more = (
            f" (and {len(malformed) - 1} more problem(s); `mlitool inspect` lists them)"
            if len(malformed) > 1
            else ""
        )
        raise ModelFormatError(f"malformed graph: {malformed[0]}{more}", path=path)
    if found:
        raise UnsupportedError(str(found[0]), path=path)
