"""CONCATENATION: one output buffer whose slices the inputs' producers write in place (views,
create_subtensor), or copies (mli_mov_tensor_sync) / requantizing converts into those slices; the
MLI 1.x concatenation kernel where an input cannot be a view. Every view and copy says why in its
notes.
"""

from __future__ import annotations

from mlitool import ir
from mlitool.errors import SubtensorError
from mlitool.mli import views as V
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.facts import concat_into_rows
from mlitool.mli.subtensor import create_subtensor
from mlitool.mli.types import MliTensor, Role


def _concat_piece(
    b: Builder, op: ir.Op, idx: int, t: MliTensor, cand: MliTensor, seen: set
) -> str | None:
    """Why input `t` of a concatenation cannot be written in place as view `cand` of the
    output buffer (None: it can)."""
    if t.name in seen:
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
    ins = [b.use(op, i, el) for i in op.inputs]
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


def _concat(
    b: Builder, op: ir.Op, fmt: str, out: MliTensor, kout: MliTensor, ins: list[str]
) -> None:
    tfl_rank = len(b.g.tensors[op.outputs[0]].shape)
    axis = b.mli_axis(int(op.options.get("axis", 0)), tfl_rank, kout.rank)
    plans, acc, seen = [], 0, set()
    for idx, name in zip(op.inputs, ins):
        t = b.tensors[name]
        off = [0] * kout.rank
        off[axis] = acc
        acc += t.shape[axis]
        try:
            cand = create_subtensor(
                kout, off, list(t.shape), kout.rank, name=f"{kout.name}_part{len(plans)}"
            )
            why = _concat_piece(b, op, idx, t, cand, seen)
        except SubtensorError as exc:
            cand, why = None, exc.message
        seen.add(name)
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
