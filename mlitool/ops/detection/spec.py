"""OpSpec of the custom op TFLite_Detection_PostProcess (SSD detectors' box decoding and
non-max suppression; TFLite Micro registers it): named by its custom code, its flexbuffer options
decoded by `mlitool.passes.custom_ops`; validated here (`detection_shapes`), run by the executors
with LiteRT's float32 kernel (`reference.py`), lowered onto the `detection_postprocess` fallback
C (`lower.py`, `c_kernel.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from mlitool import ir
from mlitool.ops.common.register import fallback_op
from mlitool.ops.detection import c_kernel  # noqa: F401  registers the fallback C
from mlitool.ops.detection import lower as DL
from mlitool.ops.detection import reference as DX
from mlitool.tflite.validate_ops import Problem

NAME = "TFLite_Detection_PostProcess"


def detection_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """What TFLite's Prepare and Eval require of the op (it fails otherwise): its options, input
    ranks 3 / 3 / 2 with a batch of 1, at least 4 box coordinates, num_classes or num_classes + 1
    scores per anchor, 4 numbers per anchor; outputs [1, D, 4], [1, D], [1, D], [1] float32 with
    D = max_detections * max_classes_per_detection."""
    try:
        o = DX.options(op)
    except KeyError as exc:
        yield Problem(f"custom option {exc.args[0]!r} is missing", op)
        return
    except (TypeError, ValueError) as exc:
        yield Problem(f"custom options of the wrong type ({exc})", op)
        return
    if o.num_classes < 1 or o.max_classes_per_detection < 1 or o.max_detections < 0:
        yield Problem(
            "needs num_classes >= 1, max_classes_per_detection >= 1 and max_detections >= 0",
            op,
        )
        return
    if not 0.0 < o.iou_threshold <= 1.0:
        yield Problem(f"nms_iou_threshold {float(o.iou_threshold)} is not in (0, 1]", op)
        return
    if o.use_regular_nms and o.detections_per_class < 1:
        yield Problem("regular NMS needs detections_per_class >= 1", op)
        return
    enc, scores, anchors = (g.tensors[i] for i in op.inputs)
    if len(enc.shape) != 3 or len(scores.shape) != 3 or len(anchors.shape) != 2:
        yield Problem("takes box encodings and class scores of rank 3 and anchors of rank 2", op)
        return
    boxes = enc.shape[1]
    if enc.shape[0] != 1 or scores.shape[0] != 1 or scores.shape[1] != boxes:
        yield Problem(
            f"box encodings {list(enc.shape)} and class scores {list(scores.shape)}: TFLite "
            "takes a batch of 1 and one row of scores per box",
            op,
        )
        return
    if enc.shape[2] < 4 or scores.shape[2] - o.num_classes not in (0, 1):
        yield Problem(
            f"needs 4 box coordinates or more and num_classes ({o.num_classes}) or one more "
            f"scores per box, not {enc.shape[2]} and {scores.shape[2]}",
            op,
        )
        return
    if anchors.size < 4 * boxes:
        yield Problem(f"anchors {list(anchors.shape)}: TFLite reads 4 numbers per box", op, anchors)
        return
    d = o.detected
    for j, want in enumerate(((1, d, 4), (1, d), (1, d), (1,))):
        t = g.tensors[op.outputs[j]]
        if t.dtype != "float32":
            yield Problem("is an output of TFLite_Detection_PostProcess: float32", op, t)
            return
        if tuple(t.shape) != want:
            yield Problem(
                f"has shape {list(t.shape)}, TFLite makes it {list(want)}", op, t, computed=want
            )
            return


fallback_op(
    NAME,
    ("box_encodings", "class_predictions", "anchors"),
    outputs=(4, 4),
    quantized=False,
    custom=True,
    keeps_float=True,
    params=("anchors",),
    shapes=detection_shapes,
    checks=DL.CHECKS,
    lower=DL.lower_detection,
    run=(DX.kernel, DX.kernel),
)
