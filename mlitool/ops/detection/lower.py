"""TFLite_Detection_PostProcess onto the `detection_postprocess` fallback C: float32 throughout,
as TFLite Micro runs it. Box encodings and class scores are read as FP32 (a convert before them
where a quantized layer wrote them; a constant as its float32 bit patterns), the anchors as a
constant of float32 bit patterns. The kernel writes one FP32 tensor, the four outputs one after
the other and its working memory (left zero); a view layer shows the four outputs in it.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.detection import c_kernel as DC
from mlitool.ops.detection import reference as DX

FP32, SA32 = ElType.FP32, ElType.SA32


# --- checks ----------------------------------------------------------------------------------


def detection_float32(s: Subject):
    """TFLite Micro runs TFLite_Detection_PostProcess on float32 inputs only; input {name!r}
    is {dtype}"""
    for i in s.op.inputs:
        t = s.graph.tensors[i]
        if t.dtype != "float32":
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def detection_anchors(s: Subject):
    """the anchors are {what}: the fallback C takes constant anchors of sizes >= 0 (TFLite's
    kernel fails on a box whose ymin > ymax)"""
    t = s.input("anchors")
    if t.data is None:
        return {"what": "not a constant"}
    boxes = s.input("box_encodings").shape[1]
    sizes = np.asarray(t.data, np.float32).reshape(-1)[: 4 * boxes].reshape(boxes, 4)[:, 2:]
    if np.any(sizes < 0):
        return {"what": "a negative height or width"}
    return _OK


CHECKS = (FB.fallback_needs_mli2, detection_float32, detection_anchors)


# --- lowering --------------------------------------------------------------------------------


def _operand(b: Builder, op: ir.Op, idx: int, rows: int) -> str:
    """An input as the kernel reads it: FP32, or a constant's float32 bit patterns (SA32)."""
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, FP32)
    bits = np.asarray(t.data, np.float32).reshape(-1).view(np.int32)
    data = bits[: bits.size - bits.size % rows].reshape(rows, -1) if rows else bits
    note = "float32 bit patterns of the model's constant"
    return b.sa_constant(
        f"{b.base(idx)}_f32", SA32, np.ascontiguousarray(data), notes=[note], src=t
    )


def lower_detection(b: Builder, op: ir.Op, fmt: str) -> None:
    o = DX.options(op)
    enc_t, scores_t = b.g.tensors[op.inputs[0]], b.g.tensors[op.inputs[1]]
    anchors, depth, num_bg = enc_t.shape[1], enc_t.shape[2], scores_t.shape[2]
    enc = _operand(b, op, op.inputs[0], anchors)
    scores = _operand(b, op, op.inputs[1], anchors)
    anc_bits = np.asarray(b.g.tensors[op.inputs[2]].data, np.float32).reshape(-1)[: 4 * anchors]
    anc = b.sa_constant(
        f"{b.base(op.inputs[2])}_f32",
        SA32,
        anc_bits.reshape(anchors, 4).view(np.int32).copy(),
        notes=["float32 bit patterns of the anchors (y, x, h, w)"],
        src=b.g.tensors[op.inputs[2]],
    )
    d = o.detected
    scratch = DC.scratch_words(anchors, num_bg, o.num_classes, o.max_detections)
    root = b.g.tensors[op.outputs[0]]
    packed = MliTensor(
        name=f"{b.base(op.outputs[0])}_all",
        role=Role.ACTIVATION,
        shape=(6 * d + 1 + scratch,),
        el_type=FP32,
        source=root.name,
        notes=[
            f"boxes, classes, scores and count, then {scratch} words of the kernel's working "
            "memory (left zero)"
        ],
    )
    packed_name = b.add(packed)
    floats = (o.score_threshold, o.iou_threshold, o.y_scale, o.x_scale, o.h_scale, o.w_scale)
    cfg = dict(
        anchors=anchors,
        depth=depth,
        num_bg=num_bg,
        num_classes=o.num_classes,
        label_offset=num_bg - o.num_classes,
        max_det=o.max_detections,
        max_cls=o.max_classes_per_detection,
        det_per_class=o.detections_per_class,
        regular=int(o.use_regular_nms),
        detected=d,
        work_words=scratch,
    )
    cfg |= {k: DC.float_bits(v) for k, v in zip(DC.FLOATS, floats)}
    nms = "regular" if o.use_regular_nms else "fast"
    b.fallback(
        op,
        DC.DETECTION,
        [enc, scores, anc],
        [packed_name],
        cfg=cfg,
        notes=[
            "no MLI kernel for TFLite_Detection_PostProcess: fallback C (LiteRT's float32 "
            f"kernel: {anchors} anchors decoded, {nms} NMS, {d} detections)"
        ],
    )
    views, notes = [], []
    for out_idx, offset in zip(op.outputs, (0, 4 * d, 5 * d, 6 * d)):
        v = b.produce(out_idx, FP32)
        v.buffer, v.offset = packed_name, offset
        views.append(v.name)
        notes.append(f"{v.name} at element {offset}")
    b.no_call_layer(op, [packed_name], views, ["view: no call; " + "; ".join(notes)])
