"""ADD, SUB, MUL, MAXIMUM, MINIMUM lowered onto `mli_krn_eltwise_*` (broadcasts MLI cannot take
become one call per slice, or the `binary` family's C where MLI refuses the operands)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower import params as P
from mlitool.mli.lower.broadcast import over_slices
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.binary import lower as fallback_binary


def _operand(b: Builder, op: ir.Op, idx: int, el: ElType) -> str:
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, el)
    real = P.real(t)
    full = tuple(b.g.tensors[op.outputs[0]].shape)
    broadcast = t.size > 1 and tuple(t.shape) != full
    if broadcast:
        uniform = bool(np.all(np.asarray(t.data) == np.asarray(t.data).reshape(-1)[0]))
        real = real.reshape(-1)[:1].reshape(()) if uniform else np.broadcast_to(real, full)
    shape = b.mli_shape(real.shape) if real.size > 1 else ()
    if not shape and b.g.tensors[op.outputs[0]].size == 1:
        # MLI takes a one-element activation for a scalar too, and two scalars make no
        # output shape (MLI_STATUS_SHAPE_MISMATCH): the constant takes the output's shape
        shape = b.mli_shape(full)
        real = real.reshape(-1)[:1].reshape(shape)
    m = MliTensor(
        name=b.base(idx), role=Role.PARAM, shape=shape, el_type=el, source=t.name, source_index=idx
    )
    data = b.encode_param(m, t, real, el, lambda: np.asarray(t.data, np.int8))
    if broadcast:
        data = np.asarray(data)
        data = data.reshape(-1)[:1].reshape(()) if real.ndim == 0 else np.broadcast_to(data, full)
    if b.layout == "chw" and data.ndim == 4:
        data = data.transpose(0, 3, 1, 2)
    m.data = np.ascontiguousarray(np.asarray(data).reshape(shape)).reshape(shape)
    if broadcast:
        m.notes.append(
            f"constant {list(t.shape)} broadcast over {list(full)}: "
            + (
                "all values equal, passed as a scalar"
                if m.data.size == 1
                else f"materialized at the output's shape (MLI eltwise takes equal shapes or a "
                f"scalar): {m.nbytes} bytes of ROM instead of {t.size * el.dtype.itemsize}"
            )
        )
    return b.add(m)


def lower_eltwise(b: Builder, op: ir.Op, fmt: str) -> None:
    """ADD, SUB, MUL, MINIMUM, MAXIMUM (a constant operand is encoded as a parameter; activations
    that broadcast are taken slice by slice, see `broadcast`; an activation against a broadcast
    constant takes the fallback kernel)."""
    if fallback_binary.mli_refuses(b, op):
        return fallback_binary.lower_binary(b, op, fmt)
    el = act_el(fmt)
    ins = [_operand(b, op, i, el) for i in op.inputs[:2]]
    out, _ = b.kernel_output(op, op.outputs[0], el)
    with b.relu_after(op, fmt, out) as kout:
        sliced = over_slices(b, ins, kout)
        layer = b.layer(op, layer_kind(b.g, op), fmt, ins, [kout])
        if sliced:
            layer.calls, note = sliced
            layer.notes.append(note)
