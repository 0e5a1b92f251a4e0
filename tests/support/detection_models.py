"""TFLite_Detection_PostProcess models (the custom op SSD detectors end with), built with the
flatbuffer builder: TF's converter writes the op only from an object-detection export. Used by
tests/ops/detection and tools/make_op_corpus.py."""

from __future__ import annotations

import numpy as np
import tflite
from flatbuffers import flexbuffers

from tests.support.tflite_build import Buf, Code, Op, Spec, T, build

NAME = "TFLite_Detection_PostProcess"


def grid_anchors(rows: int, cols: int, size: float = 0.4) -> np.ndarray:
    """[rows * cols, 4] anchors (y, x, h, w): centres on a grid over [0, 1], one size."""
    ys = (np.arange(rows) + 0.5) / rows
    xs = (np.arange(cols) + 0.5) / cols
    centres = np.stack(np.meshgrid(ys, xs, indexing="ij"), -1).reshape(-1, 2)
    return np.concatenate([centres, np.full((len(centres), 2), size)], 1).astype(np.float32)


def options(**changes) -> dict:
    """The options of TFLite Micro's test model, with `changes`."""
    opts = {
        "max_detections": 3,
        "max_classes_per_detection": 1,
        "detections_per_class": 1,
        "use_regular_nms": False,
        "nms_score_threshold": 0.3,
        "nms_iou_threshold": 0.5,
        "num_classes": 2,
        "y_scale": 10.0,
        "x_scale": 10.0,
        "h_scale": 5.0,
        "w_scale": 5.0,
    }
    opts.update(changes)
    return opts


def detection_model(
    anchors: np.ndarray,
    opts: dict,
    *,
    background: bool = True,
    scores: np.ndarray | None = None,
    depth: int = 4,
) -> bytes:
    """Box encodings [1, A, depth] the first input; class scores [1, A, classes (+ 1)] the second
    input, or a constant when `scores` is given; anchors [A, 4] constant. Outputs as TFLite's
    Prepare sizes them: D = max_detections * max_classes_per_detection."""
    a = len(anchors)
    width = opts["num_classes"] + (1 if background else 0)
    d = opts["max_detections"] * opts["max_classes_per_detection"]
    constant = scores is not None
    tensors = [
        T([1, a, depth], "float32", name="box_encodings"),
        T([1, a, width], "float32", name="class_predictions", buffer=1 if constant else 0),
        T([a, 4], "float32", name="anchors", buffer=2),
        T([1, d, 4], "float32", name="detection_boxes"),
        T([1, d], "float32", name="detection_classes"),
        T([1, d], "float32", name="detection_scores"),
        T([1], "float32", name="num_detections"),
    ]
    op = Op(0, [0, 1, 2], [3, 4, 5, 6], custom_options=bytes(flexbuffers.Dumps(opts)))
    code = Code(builtin=tflite.BuiltinOperator.CUSTOM, custom=NAME)
    score_data = b"" if scores is None else np.asarray(scores, np.float32).tobytes()
    buffers = [Buf(), Buf(score_data), Buf(np.asarray(anchors, np.float32).tobytes())]
    inputs = [0] if constant else [0, 1]
    return build(Spec(tensors, [op], [code], buffers, inputs=inputs, outputs=[3, 4, 5, 6]))


def defined_rows(opts: dict, count: int) -> np.ndarray:
    """Which output rows LiteRT writes (bool [D]): regular NMS the first max_detections (zeros
    past the count); fast NMS the first min(max_classes_per_detection, num_classes) of each of
    the `count` anchors kept. The others keep whatever the buffer held."""
    per = opts["max_classes_per_detection"]
    d = opts["max_detections"] * per
    rows = np.arange(d)
    if opts.get("use_regular_nms"):
        return rows < opts["max_detections"]
    n_cat = min(per, opts["num_classes"])
    return (rows // per < count) & (rows % per < n_cat)


def int8_detection_model(anchors: np.ndarray, opts: dict) -> bytes:
    """An int8 SSD's tail: int8 box encodings and class scores (the model's inputs), each
    DEQUANTIZE'd to float32, then the op (TFLite Micro runs it on float32 only)."""
    a = len(anchors)
    width = opts["num_classes"] + 1
    d = opts["max_detections"] * opts["max_classes_per_detection"]
    tensors = [
        T([1, a, 4], "int8", scale=1 / 32, zero_point=0, name="box_encodings_q"),
        T([1, a, width], "int8", scale=1 / 256, zero_point=-128, name="class_scores_q"),
        T([1, a, 4], "float32", name="box_encodings"),
        T([1, a, width], "float32", name="class_predictions"),
        T([a, 4], "float32", name="anchors", buffer=1),
        T([1, d, 4], "float32", name="detection_boxes"),
        T([1, d], "float32", name="detection_classes"),
        T([1, d], "float32", name="detection_scores"),
        T([1], "float32", name="num_detections"),
    ]
    ops = [
        Op(0, [0], [2]),
        Op(0, [1], [3]),
        Op(1, [2, 3, 4], [5, 6, 7, 8], custom_options=bytes(flexbuffers.Dumps(opts))),
    ]
    codes = [
        Code(builtin=tflite.BuiltinOperator.DEQUANTIZE),
        Code(builtin=tflite.BuiltinOperator.CUSTOM, custom=NAME),
    ]
    buffers = [Buf(), Buf(np.asarray(anchors, np.float32).tobytes())]
    return build(Spec(tensors, ops, codes, buffers, inputs=[0, 1], outputs=[5, 6, 7, 8]))
