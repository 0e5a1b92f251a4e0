"""The support check: can an op be lowered for an MLI version and layout? Runs, per op, the
common checks below (`has_kernel`, `TENSOR_CHECKS` on every activation, `fused_activation`), then
the op's own (its OpSpec's `checks`, in checks.py), and reports the first refusal: the failing
check's docstring, formatted with the fields it returns.
"""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.checks import _OK, Subject, TensorCheck, message
from mlitool.mli.lower.facts import rows_not_batch
from mlitool.mli.target import DEFAULT, Target
from mlitool.ops import spec as opspec

# --- every op ------------------------------------------------------------------------------


def has_kernel(s: Subject):
    """no MLI kernel for this op"""
    spec = opspec.get(s.op.type)
    return _OK if spec is not None and (spec.kind or spec.not_lowered) else {}


def lowered(s: Subject):
    """mlitool does not lower this op yet (MLI 2.x has {kernels})"""
    kernels = opspec.spec(s.op.type).not_lowered
    return {"kernels": kernels} if kernels else _OK


def has_elements(s: Subject):
    """tensor {name!r} has no elements (shape {shape}; an MLI tensor holds at least one)"""
    for i in s.op.inputs + s.op.outputs:
        if i >= 0 and s.graph.tensors[i].size == 0:
            return {"name": _label(s.graph.tensors[i]), "shape": list(s.graph.tensors[i].shape)}
    return _OK


def _label(t: ir.Tensor) -> str:
    """A tensor's name, or its index where the model left the name empty."""
    return t.name or f"#{t.index}"


def activation_type(s: Subject, t: ir.Tensor):
    """tensor {name!r} has type {dtype} (MLI activations: int8, float, or int16 with zero point 0
    and one scale, as 16x8 models have)

    ARG_MAX outputs are indices (any integer type); comparisons write, and SELECT reads, bool
    (one byte 0/1, SA8 with scale 1 and zero point 0); the ops with an int32 form read and write
    int32 (SA32 with scale 1), and an ARG_MAX / ARG_MIN's int64 indices as int32 (exact: an
    index is below 2**31), an int16 without quantization beside int32 as FX16 of 0 frac bits;
    other int64 tensors would be narrowed, so they are refused."""
    if t.dtype in ("int8", "float32") or (
        opspec.spec(s.op.type).index_outputs and t.index in s.op.outputs
    ):
        return _OK
    if t.dtype == "bool" and opspec.spec(s.op.type).bools:
        return _OK
    if opspec.spec(s.op.type).int32 and (
        t.dtype == "int32"
        or (t.dtype == "int64" and _index_output(s.graph, t))
        or (t.dtype == "int16" and t.quant is None and _on_int32(s))
    ):
        return _OK
    if (
        t.dtype == "int16"
        and t.quant is not None
        and not t.quant.per_axis
        and int(t.quant.zero_point[0]) == 0
    ):
        return _OK
    return {"name": _label(t), "dtype": t.dtype}


def _on_int32(s: Subject) -> bool:
    """Whether the op reads or writes an int32 / int64 tensor, or only integers without
    quantization and bools (its int32 form: a raw int16 on its other side, a CAST, is an FX16
    tensor of 0 frac bits)."""
    ts = [s.graph.tensors[i] for i in (*s.op.inputs, *s.op.outputs) if i >= 0]
    raw = ("int8", "int16", "int32", "int64", "bool")
    return any(t.dtype in ("int32", "int64") for t in ts) or all(
        t.dtype in raw and t.quant is None for t in ts
    )


def _index_output(graph: ir.Graph, t: ir.Tensor) -> bool:
    """Whether `t` is written by an op whose outputs are indices (ARG_MAX, ARG_MIN)."""
    return any(
        t.index in op.outputs and opspec.spec(op.type).index_outputs
        for op in graph.ops
        if opspec.get(op.type) is not None
    )


def batch_one(s: Subject, t: ir.Tensor):
    """tensor {name!r} has batch {batch} (MLI runs batch 1)

    A leading dimension other than 1 is not a batch where the op's arithmetic ignores it
    (`OpSpec.leading_dims`: views, element-wise ops, activations; in HWC, where lowering keeps
    it as an MLI dimension, so rank 4 at most) or it is the rows of a FULLY_CONNECTED."""
    if len(t.shape) < 2 or t.shape[0] == 1 or rows_not_batch(s.graph, s.op, t):
        return _OK
    rows = opspec.spec(s.op.type).leading_dims
    rows = rows(s.graph, s.op) if callable(rows) else rows
    if rows and s.layout == "hwc" and len(t.shape) <= 4:
        return _OK
    return {"name": _label(t), "batch": t.shape[0]}


def rank_at_most_5(s: Subject, t: ir.Tensor):
    """tensor {name!r} has rank {rank} (MLI: at most 4 without batch)"""
    return {"name": _label(t), "rank": len(t.shape)} if len(t.shape) > 5 else _OK


TENSOR_CHECKS: tuple[TensorCheck, ...] = (activation_type, batch_one, rank_at_most_5)


def fused_activation(s: Subject):
    """fused activation {act} has no MLI equivalent"""
    act = s.op.options.get("fused_activation", "NONE")
    if not opspec.spec(s.op.type).fused_activation:  # the LSTM's gate activation: its checks
        return _OK
    return _OK if act in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1") else {"act": act}


# --- the check -----------------------------------------------------------------------------


def refusal(graph: ir.Graph, op: ir.Op, target: Target, layout: str) -> str | None:
    """Why `op` cannot be lowered for this MLI version and layout (None when it can)."""
    s = Subject(graph, op, target, layout)
    for check in (has_kernel, lowered, has_elements):
        fields = check(s)
        if fields is not None:
            return message(check, **fields)
    spec = opspec.spec(op.type)
    # Slots that must be constants (weights, TRANSPOSE_CONV's output shape), not activations:
    # when they are not, the op's own check says so (the activation checks would only call
    # their type or batch wrong).
    params = {spec.slot(name) for name in spec.params}
    acts = [
        graph.tensors[i]
        for slot, i in enumerate(op.inputs)
        if i >= 0 and graph.tensors[i].data is None and slot not in params
    ]
    for t in acts + [graph.tensors[i] for i in op.outputs]:
        for check in TENSOR_CHECKS:
            fields = check(s, t)
            if fields is not None:
                return message(check, **fields)
    for check in (fused_activation, *spec.checks):
        fields = check(s)
        if fields is not None:
            return message(check, **fields)
    return None


def unsupported_ops(graph: ir.Graph, target: Target = DEFAULT, layout: str = "hwc") -> list[str]:
    """Every op that cannot be lowered, as 'op 3 (CONV_2D): reason'."""
    out = []
    for op in graph.ops:
        reason = refusal(graph, op, target, layout)
        if reason:
            out.append(f"{op.label}: {reason}")
    return out
