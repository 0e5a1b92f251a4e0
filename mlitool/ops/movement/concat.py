"""CONCATENATION: one output buffer whose slices the inputs' producers write in place (views,
create_subtensor), or copies (mli_mov_tensor_sync) / requantizing converts into those slices; the
MLI 1.x concatenation kernel where an input cannot be a view. Every view and copy says why in its
notes.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import SubtensorError
from mlitool.execute.reference.fixedpoint import round_away_f32
from mlitool.mli import quant as Q
from mlitool.mli import views as V
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.facts import concat_into_rows
from mlitool.mli.subtensor import create_subtensor
from mlitool.mli.types import MliTensor, Role


def _concat_piece(
    b: Builder, op: ir.Op, idx: int, t: MliTensor, cand: MliTensor, repeated: set
) -> str | None:
    """Why input `t` of a concatenation cannot be written in place as view `cand` of the
    output buffer (None: it can)."""
    if t.role == Role.PARAM:
        return "a constant (a class token, a learned padding): copied from its parameter"
    if t.name in repeated:  # each copy from its own buffer: mli_mov refuses overlapping ones
        return "the same tensor is concatenated more than once"
    if t.role == Role.INPUT:
        return "a model input: the application owns its buffer"
    if t.buffer is not None:
        return f"it is already a view of '{t.buffer}'"
    if any(o.buffer == t.name for o in b.tensors.values()):
        return "other tensors are views of its memory"
    if not P.same_params(t, cand):
        return "its quantization differs from the output's"
    producer = next((lay for lay in reversed(b.layers) if t.name in lay.outputs), None)
    if producer is None or producer.kind == "view":
        return "no kernel writes it"
    if not V.is_dense(cand):
        if not b.target.strided_views:
            return f"its slice is strided and MLI {b.target.version} kernels ignore mem_stride"
        if V.needs_dense_output(producer.kind, b.target):
            return f"its slice is strided and {producer.kernel} needs a contiguous output"
        why = b.consumer_needs_dense(idx, skip=op)
        if why:
            return f"its slice is strided and {why}"
    return None


def lower_concatenation(b: Builder, op: ir.Op, fmt: str) -> None:
    """The output is one buffer; each input becomes a view of its slice that the producer
    writes in place, or is requantized (mli_hlp_convert_tensor) / copied (mli_mov) into
    it. A "view" layer (no call) then stands for the whole output."""
    el = b.el_of(op.outputs[0], fmt)
    out = b.produce(op.outputs[0], el)
    ins = [
        b.use(op, i, el) if b.g.tensors[i].data is None else _constant_piece(b, op, i, out)
        for i in op.inputs
    ]
    # A producer that writes another rank than the model's (ARG_MAX: [1, 1] for its [1]): the
    # input seen in its own shape, so that its slice of the output has the output's rank.
    ins = [
        b.dense_view(op, fmt, n, b.mli_shape(b.g.tensors[i].shape), "CONCATENATION input")
        if b.g.tensors[i].data is None
        and len(b.tensors[n].shape) != len(b.mli_shape(b.g.tensors[i].shape))
        else n
        for n, i in zip(ins, op.inputs)
    ]
    if b.layout == "hwc" and concat_into_rows(b.g, op):  # batch-1 inputs in their full shape
        why = "CONCATENATION into rows: the input with its leading axis"
        ins = [
            b.dense_view(op, fmt, n, b.g.tensors[i].shape, why)
            if b.g.tensors[i].shape[0] == 1
            else n
            for n, i in zip(ins, op.inputs)
        ]
    with b.relu_after(op, fmt, out.name) as kout:
        _concat(b, op, fmt, out, b.tensors[kout], ins)


def _constant_piece(b: Builder, op: ir.Op, idx: int, out: MliTensor) -> str:
    """A constant input as a parameter in the output's element type and parameters (copied into
    its slice): an int8 constant with the output's scale and zero point keeps its values; one
    with others is rescaled as tflite mode's concatenation does (ConcatenationWithScaling);
    a float constant is quantized with the output's parameters."""
    t = b.g.tensors[idx]
    shape = b.mli_shape(t.shape)
    if concat_into_rows(b.g, op) and b.layout == "hwc":
        shape = tuple(t.shape)
    if out.el_type.is_sa:
        data = _constant_in_output_params(b.g.tensors[op.outputs[0]], t, out)
    else:
        data, _ = Q.fx_quantize(P.real(t), out.frac_bits, out.el_type.bits)
    m = MliTensor(
        name=b.base(idx),
        role=Role.PARAM,
        shape=tuple(shape),
        el_type=out.el_type,
        data=np.asarray(data).reshape(shape),
        source=t.name,
        source_index=t.index,
        notes=["constant concatenation input, in the output's parameters"],
    )
    if out.el_type.is_sa:
        m.scale, m.scale_frac_bits = out.scale, out.scale_frac_bits
        m.zero_point = None if out.zero_point is None else out.zero_point.copy()
    else:
        m.frac_bits = out.frac_bits
    return b.add(m)


def _constant_in_output_params(out_t: ir.Tensor, t: ir.Tensor, out: MliTensor) -> np.ndarray:
    """An int8 constant's values in the output tensor's parameters, as tflite mode computes them."""
    if t.dtype == "int8" and t.quant is not None and not t.quant.per_axis and out_t.quant:
        if float(t.quant.scale[0]) == float(out_t.quant.scale[0]) and int(
            t.quant.zero_point[0]
        ) == int(out_t.quant.zero_point[0]):
            return np.asarray(t.data, np.int8)
        so = np.float32(out_t.quant.scale[0])
        scale = np.float32(t.quant.scale[0]) * (np.float32(1) / so)
        bias = np.float32(-int(t.quant.zero_point[0])) * scale
        y = round_away_f32(np.asarray(t.data).astype(np.float32) * scale + bias)
        y = y.astype(np.int64) + int(out_t.quant.zero_point[0])
        return np.clip(y, -128, 127).astype(np.int8)
    scale, zp = (
        float(out.real_scale().reshape(-1)[0]),
        int(np.asarray(out.zero_point).reshape(-1)[0]),
    )
    return Q.int_quantize(P.real(t), scale, zp, out.el_type.bits)[0]


def _concat(
    b: Builder, op: ir.Op, fmt: str, out: MliTensor, kout: MliTensor, ins: list[str]
) -> None:
    tfl_rank = len(b.g.tensors[op.outputs[0]].shape)
    axis = b.mli_axis(int(op.options.get("axis", 0)), tfl_rank, kout.rank)
    plans, acc = [], 0
    repeated = {n for n in ins if ins.count(n) > 1}
    for idx, name in zip(op.inputs, ins):
        t = b.tensors[name]
        off = [0] * kout.rank
        off[axis] = acc
        acc += t.shape[axis]
        try:
            cand = create_subtensor(
                kout, off, list(t.shape), kout.rank, name=f"{kout.name}_part{len(plans)}"
            )
            why = _concat_piece(b, op, idx, t, cand, repeated)
        except SubtensorError as exc:
            cand, why = None, exc.message
        plans.append((t, cand, why))
    if b.target.concat_kernel and any(why for _, _, why in plans):
        return _concat_kernel(b, op, fmt, out, kout.name, ins, axis)
    pieces, notes = [], []
    for k, (t, cand, why) in enumerate(plans):
        if why is None:
            t.buffer, t.offset, t.mem_stride, t.capacity = (
                cand.buffer,
                cand.offset,
                cand.mem_stride,
                cand.capacity,
            )
            t.notes.append(f"written in place into '{kout.name}' at element {cand.offset}")
            pieces.append(t.name)
            notes.append(f"input {k} '{t.name}': written in place by its producer")
            continue
        cand.role = Role.ACTIVATION
        cand.notes = [f"slice {k} of '{kout.name}'"]
        b.add(cand)
        if P.same_params(t, cand):
            b.mov(op, fmt, t.name, cand.name, [0] * t.rank, t.shape, [1] * t.rank, why)
            notes.append(f"input {k} '{t.name}': copied (mli_mov_tensor_sync): {why}")
        else:
            b.convert(
                op,
                t.name,
                cand.name,
                "concatenation inputs must carry the "
                "output's parameters: requantized into its slice",
            )
            notes.append(
                f"input {k} '{t.name}': requantized into its slice (mli_hlp_convert_tensor)"
            )
        pieces.append(cand.name)
    b.no_call_layer(
        op, pieces, [kout.name], ["view: no call; the inputs are slices of this buffer"] + notes
    )


def _concat_kernel(
    b: Builder, op: ir.Op, fmt: str, out: MliTensor, kout: str, ins: list[str], axis: int
) -> None:
    """MLI 1.x concatenation kernel (the inputs carry the output's parameters)."""
    names = []
    for i, name in zip(op.inputs, ins):
        if not P.same_params(b.tensors[name], out):
            conv = b.derived(
                out,
                f"{b.tensors[name].name}_as_out",
                shape=b.tensors[name].shape,
                source_index=i,
                source=b.g.tensors[i].name,
            )
            b.convert(
                op, name, conv.name, "concatenation inputs must carry the output's parameters"
            )
            name = conv.name
        names.append(name)
    b.layer(
        op,
        "concat",
        fmt,
        names,
        [kout],
        cfg_type="mli_concat_cfg",
        cfg={"axis": axis, "tensors_num": len(names)},
        notes=[
            "not all inputs can be written in place (contiguous slices only "
            f"on MLI {b.target.version})"
        ],
    )
