"""The structural half of graph validation, run right after reading and before any graph pass,
statistic or lowering (`pipeline.read`, `inspect`): what they all read of an op without checking.

Per op of a type mlitool knows (its OpSpec): input and output counts and required inputs, the
options table, and the option values TFLite refuses (strides and dilations below 1, a padding
other than SAME / VALID). Per op of any type: no omitted (-1) output. The reader has already
checked every tensor index against the tensor table. A pass may then index an op's slots and
outputs and divide by its strides; the checks that need the folded graph (order, writers,
shapes, types, rescales) run after the passes (`validate.check_graph`).

Only what TFLite itself refuses is malformed (exit 2): a pooling filter below 1, which TFLite
runs, is left to `validate.problems` (unsupported, exit 4), as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from mlitool import ir
from mlitool.errors import ModelFormatError, UnsupportedError
from mlitool.ops import spec as opspec
from mlitool.tflite.validate import one_writer_per_tensor, tensors_defined_before_use
from mlitool.tflite.validate_ops import Problem, arity, options_table, window_options

__all__ = ["check_structure", "structure_problems"]


def outputs_present(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """Every output an op lists is a tensor (TFLite has no optional outputs)."""
    if any(i < 0 for i in op.outputs):
        yield Problem("has an omitted (-1) output", op)


def structure_problems(g: ir.Graph) -> list[Problem]:
    """The malformed structure of `g`'s ops, in op order: for each op the first failing check of
    arity, options table, option values; then an omitted output; then one writer per tensor and
    every tensor written before it is read (no cycle)."""
    found: list[Problem] = []
    for op in g.ops:
        spec = opspec.get(op.type)
        named = opspec.get(op.custom_code or "") if op.type == "CUSTOM" else None
        if named is not None and named.custom and named.slots is not None:
            # a custom op a family knows (passes/custom_ops.py names it): its inputs and outputs
            found += [
                p
                for p in arity(g, dataclasses.replace(op, type=op.custom_code))
                if not p.unsupported
            ]
        if spec is not None and spec.slots is not None:
            for check in (arity, options_table, window_options):
                step = [p for p in check(g, op) if not p.unsupported]
                found += step
                if step:
                    break
        found += outputs_present(g, op)
    # graph-wide: the passes walk producers and readers, and a cycle would keep them walking
    found += [p for p in one_writer_per_tensor(g) if "omitted" not in p.text]
    found += tensors_defined_before_use(g)
    return found


MOST_ELEMENTS = 1 << 27  # one activation: far beyond any MCU's memory, within a host's


def check_structure(g: ir.Graph, path: str) -> None:
    """Raise ModelFormatError (exit 2) naming the file, the op and the field of the first
    structural problem of `g` (every command, `inspect` too: its statistics and the passes it
    runs read what this checks)."""
    found = structure_problems(g)
    if found:
        more = f" (and {len(found) - 1} more problem(s))" if len(found) > 1 else ""
        raise ModelFormatError(f"malformed graph: {found[0]}{more}", path=path)
    for t in g.tensors:  # every stage allocates activations whole: bounded before any of them
        if t.data is None and t.size > MOST_ELEMENTS:
            raise UnsupportedError(
                f"tensor {t.index} {t.name!r} of shape {list(t.shape)} holds {t.size} elements: "
                f"more than mlitool handles ({MOST_ELEMENTS})",
                path,
            )
