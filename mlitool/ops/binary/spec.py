"""OpSpecs of the binary ops MLI has no kernel for (DIV, SQUARED_DIFFERENCE, BATCH_MATMUL):
lowered onto the `binary8` / `batch_matmul8` fallback C (`lower.py`, `c_kernel.py`), run by the
executors with TFLite's arithmetic (`reference.py`, `batch_matmul.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from mlitool import ir
from mlitool.inspect.opstats import prod
from mlitool.mli.lower import checks as C
from mlitool.ops.binary import add_n as AN
from mlitool.ops.binary import batch_matmul as BMM
from mlitool.ops.binary import lower as FBB
from mlitool.ops.binary import reference as BIN
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.common.register import fallback_op
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import checks_or, int32_or
from mlitool.ops.integer.reference import binary_kernel
from mlitool.tflite import validate_ops as V

_CHECKS = (*FB.CHECKS, C.one_operand_variable, FBB.operands_per_tensor)

_CHECKS16 = (FB.fallback_needs_mli2, FB.fallback_int8_or_int16, *_CHECKS[2:])
for _name, _options, _base, _checks, _run in (
    ("DIV", "DivOptions", _CHECKS, (FBB.div_multiplier_in_range,), (BIN.float_div, BIN.tflite_div)),
    (
        "SQUARED_DIFFERENCE",
        "SquaredDifferenceOptions",
        _CHECKS16,  # int16 too: TFLite Micro's kernel
        (),
        (BIN.float_squared_difference, BIN.tflite_squared_difference),
    ),
):
    fallback_op(
        _name,
        ("input", "input2"),
        options=_options,
        all_data=True,
        shapes=V.eltwise_shapes,
        leading_dims=True,  # element-wise: a leading dimension other than 1 is rows
        int32=True,  # int32 operands: the `integer` family's `binary32`
        checks=checks_or((*_base, C.operands_broadcast, *_checks), IL.CHECKS),
        lower=int32_or(FBB.lower_binary, IL.lower_binary32),
        run=tuple(int32_or(k, binary_kernel(_name)) for k in _run),
    )


def batch_matmul_shapes(g: ir.Graph, op: ir.Op) -> Iterator[V.Problem]:
    """Batch dimensions broadcast, the depths agree, the output is [..., M, N]."""
    x, w, out = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if not (2 <= len(x.shape) <= 5 and 2 <= len(w.shape) <= 5):
        yield V.Problem(f"operands of rank {len(x.shape)} and {len(w.shape)} (2..5)", op)
        return
    m, k = x.shape[-2:][:: -1 if op.options.get("adj_x") else 1]
    k2, n = w.shape[-2:][:: -1 if op.options.get("adj_y") else 1]
    try:
        batch = np.broadcast_shapes(tuple(x.shape[:-2]), tuple(w.shape[:-2]))
    except ValueError:
        yield V.Problem(f"batch dimensions of {list(x.shape)} and {list(w.shape)} differ", op)
        return
    if k != k2:
        yield V.Problem(f"depths {k} and {k2} differ", op)
        return
    want = (*batch, m, n)
    if tuple(out.shape) != want:
        yield V.Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out, computed=want
        )


def batch_matmul_macs(g: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    """(output elements) * K, K the depth the two operands share."""
    x = g.tensor(op.inputs[0])
    if x is None or not x.shape:
        return 0
    return prod(out) * (x.shape[-2] if op.options.get("adj_x") else x.shape[-1])


fallback_op(
    "BATCH_MATMUL",
    ("input", "input2"),
    options="BatchMatMulOptions",
    all_data=True,
    fused_activation=False,
    weights=("input2",),  # the inspect style reads input 2 as its weights
    leading_dims=True,  # batch dimensions (attention heads) are the kernel's loop, not a batch
    shapes=batch_matmul_shapes,
    checks=(*FB.CHECKS16, C.one_operand_variable, FBB.operands_per_tensor),
    lower=FBB.lower_batch_matmul,
    run=(BMM.float_batch_matmul, BMM.tflite_batch_matmul),
    macs=batch_matmul_macs,
)


# N tensors summed: TFLite's float32 kernel; a quantized model on a chain of binary8 ADDs.
def add_n_shapes(g: ir.Graph, op: ir.Op) -> Iterator[V.Problem]:
    """Every input and the output of one shape (TFLite's Prepare)."""
    want = tuple(g.tensors[op.inputs[0]].shape)
    for i in op.inputs[1:]:
        if tuple(g.tensors[i].shape) != want:
            yield V.Problem(
                f"has shape {list(g.tensors[i].shape)}, the first input's is {list(want)}",
                op,
                g.tensors[i],
            )
            return
    out = g.tensors[op.outputs[0]]
    if tuple(out.shape) != want:
        yield V.Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out, computed=want
        )


fallback_op(
    "ADD_N",
    ("input",),
    variadic=True,
    options="AddNOptions",
    all_data=True,
    shapes=add_n_shapes,
    checks=AN.CHECKS,
    lower=AN.lower_add_n,
    run=(AN.float_add_n, AN.tflite_add_n),
)
