"""A shape check for ops whose output shape only their kernel knows well (index and shape ops):
the kernel itself, run once on zeros."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.ops.spec import spec
from mlitool.tflite.validate_ops import Problem


def computed_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """Validation's shape check of these ops: their kernel run once on zeros (constants as
    stored) gives the output shapes TFLite computes; a stored shape that differs is reported
    with the computed one (which `normalise_output_shapes` and constant folding take). Skipped
    while a slot the shape depends on (`params`) is not constant."""
    s = spec(op.type)
    if any(g.slot(op, name) is not None and not g.slot(op, name).is_constant for name in s.params):
        return
    values = {
        i: np.zeros((1, *g.tensors[i].shape), g.tensors[i].dtype)
        for i in op.inputs
        if i >= 0 and not g.tensors[i].is_constant
    }
    try:
        # only the shapes count: zeros of a type the kernel does not expect (complex64) may warn
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outs = s.run[1](Call(op, g, "tflite", values, 1))
    except UnsupportedError as e:  # e.g. an index outside its axis: TFLite refuses it too
        yield Problem(str(e).removeprefix(f"{op.label}: "), op, unsupported=True)
        return
    except (ValueError, IndexError, ZeroDivisionError) as e:  # inputs that do not fit together
        yield Problem(f"its inputs' shapes do not fit together ({e})", op)
        return
    for j, v in zip(op.outputs, outs):
        t, want = g.tensors[j], tuple(v.shape[1:])
        if tuple(t.shape) != want:
            yield Problem(
                f"has shape {list(t.shape)}, but the op computes {list(want)}",
                op,
                t,
                computed=want,
            )
            return


def computed_shapes_of(*slots: str):
    """`computed_shapes` for an op whose output shape depends on the values of `slots` (axes,
    permutations, paddings, sizes) without those slots being required constants: skipped while
    one of them is given and not constant (TFLite computes the shape at run time)."""

    def check(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
        given = [g.slot(op, name) for name in slots]
        if any(t is not None and not t.is_constant for t in given):
            return
        yield from computed_shapes(g, op)

    check.__name__ = f"computed_shapes_of_{'_'.join(slots)}"
    return check
