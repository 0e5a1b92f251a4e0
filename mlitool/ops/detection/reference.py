"""TFLite_Detection_PostProcess (SSD detectors' last op) in the float and tflite execution modes:
LiteRT's kernel (tensorflow/lite/kernels/detection_postprocess.cc) step by step, float32 only,
as TFLite Micro runs it (its kernel refuses other input types).

- Decode: per anchor, ycenter = y / y_scale * anchor_h + anchor_y in double rounded to float
  (xcenter alike), half_h = 0.5 * exp(h / h_scale) * anchor_h in double rounded to float
  (half_w alike; exp is the C library's double exp), then ymin = ycenter - half_h ... in float.
- Score threshold `>=`, then a stable sort by decreasing score (std::stable_sort), then the greedy
  NMS: a candidate is dropped when its IoU (float32, as ComputeIntersectionOverUnion) with a kept
  box is above the IoU threshold; at most `max_detections` kept.
- Fast NMS (`use_regular_nms` false): per anchor its top `min(max_classes_per_detection,
  num_classes)` classes (DecreasingPartialArgSort), the NMS on each anchor's best score; output
  row `max_classes_per_detection * k + c` holds the k-th kept anchor's c-th class; the count is
  the number of anchors kept.
- Regular NMS: per class the NMS with min(detections_per_class, max_detections), merged with the
  best so far (std::inplace_merge: stable) and cut to `max_detections`; rows past the count are
  zeros. (TFLite Micro's kernel sorts with the lower index first among equal scores: the same.)

DecreasingPartialArgSort (fast NMS, an anchor's classes) is ArgMaxVector (the first largest) for
one, else std::partial_sort with `values[i] > values[j]` and no tie-break: equal class scores come
out in the order libstdc++'s heap select and heap sort leave them (`partial_argsort`, as the C
does it). TFLite Micro breaks those ties by the lower class index, so with
max_classes_per_detection > 1 and equal class scores in one anchor the two differ by design; mli
mode follows LiteRT. LiteRT leaves output rows it does not write as they were (fast NMS: rows
past the count); mlitool writes zeros there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError
from mlitool.execute.reference.call import Call

f32 = np.float32
DEFAULT_DETECTIONS_PER_CLASS = 100  # kNumDetectionsPerClass: the option's default


@dataclass(frozen=True)
class Options:
    """The op's flexbuffer options as TFLite's Init reads them (ints, float32 scales)."""

    max_detections: int
    max_classes_per_detection: int
    detections_per_class: int
    use_regular_nms: bool
    score_threshold: np.float32
    iou_threshold: np.float32
    num_classes: int
    y_scale: np.float32
    x_scale: np.float32
    h_scale: np.float32
    w_scale: np.float32

    @property
    def detected(self) -> int:
        """Rows of the boxes / classes / scores outputs (TFLite's Prepare)."""
        return self.max_detections * self.max_classes_per_detection


REQUIRED = (
    "max_detections",
    "max_classes_per_detection",
    "nms_score_threshold",
    "nms_iou_threshold",
    "num_classes",
    "y_scale",
    "x_scale",
    "h_scale",
    "w_scale",
)


def options(op: ir.Op) -> Options:
    """`op`'s options (KeyError naming the first missing one)."""
    o = op.options
    for key in REQUIRED:
        if key not in o:
            raise KeyError(key)
    per_class = o.get("detections_per_class")
    return Options(
        max_detections=int(o["max_detections"]),
        max_classes_per_detection=int(o["max_classes_per_detection"]),
        detections_per_class=DEFAULT_DETECTIONS_PER_CLASS if per_class is None else int(per_class),
        use_regular_nms=bool(o.get("use_regular_nms") or False),
        score_threshold=f32(o["nms_score_threshold"]),
        iou_threshold=f32(o["nms_iou_threshold"]),
        num_classes=int(o["num_classes"]),
        y_scale=f32(o["y_scale"]),
        x_scale=f32(o["x_scale"]),
        h_scale=f32(o["h_scale"]),
        w_scale=f32(o["w_scale"]),
    )


# --- decoding --------------------------------------------------------------------------------


@functools.cache
def _exp():
    """The C library's double exp, vectorised (what the C kernel and LiteRT call)."""
    path = ctypes.util.find_library("m")
    fn = (ctypes.CDLL(path) if path else ctypes.CDLL(None)).exp
    fn.argtypes, fn.restype = [ctypes.c_double], ctypes.c_double
    return np.frompyfunc(fn, 1, 1)


def libm_exp(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return np.asarray(_exp()(x), dtype=np.float64).reshape(x.shape)


def decode(enc: np.ndarray, anchors: np.ndarray, o: Options) -> np.ndarray:
    """Boxes [A, 4] (ymin, xmin, ymax, xmax) float32 of encodings [A, >= 4] and anchors
    [A, 4] (y, x, h, w): double products and sums each rounded once (no fused multiply-add)."""
    e = np.asarray(enc, f32)[:, :4].astype(np.float64)
    a = np.asarray(anchors, f32).astype(np.float64)
    scale = np.array([o.y_scale, o.x_scale, o.h_scale, o.w_scale], np.float64)
    center = (e[:, :2] / scale[:2] * a[:, 2:]) + a[:, :2]
    half = 0.5 * libm_exp(e[:, 2:] / scale[2:]) * a[:, 2:]
    with np.errstate(over="ignore", invalid="ignore"):
        c, h = center.astype(f32), half.astype(f32)
        return np.concatenate([c - h, c + h], axis=1).astype(f32)


def boxes_valid(boxes: np.ndarray) -> bool:
    """LiteRT's ValidateBoxes: no ymin > ymax, no xmin > xmax."""
    return not bool(np.any((boxes[:, 0] > boxes[:, 2]) | (boxes[:, 1] > boxes[:, 3])))


# --- sorting, as LiteRT's C++ does it --------------------------------------------------------


def _adjust_heap(idx: list, first: int, hole: int, length: int, value: int, greater) -> None:
    """libstdc++'s std::__adjust_heap then std::__push_heap on idx[first:first + length]."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if greater(idx[first + child], idx[first + child - 1]):
            child -= 1
        idx[first + hole] = idx[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        idx[first + hole] = idx[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and greater(idx[first + parent], value):
        idx[first + hole] = idx[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    idx[first + hole] = value


def partial_argsort(values: np.ndarray, count: int, k: int) -> list[int]:
    """DecreasingPartialArgSort(values, count, k): indices whose first k are sorted by decreasing
    value. k == 1: ArgMaxVector (the first largest). Else std::partial_sort of 0..count-1 with
    `values[i] > values[j]`, as libstdc++ implements it (heap select, then heap sort)."""
    v = [float(x) for x in np.asarray(values, f32)[:count]]
    idx = list(range(count))
    if k == 1:
        best = 0
        for i in range(1, count):
            if v[i] > v[best]:
                best = i
        idx[0] = best  # only the first is read
        return idx

    def greater(i: int, j: int) -> bool:
        return v[i] > v[j]

    if k >= 2:  # std::__make_heap on [0, k)
        for parent in range((k - 2) // 2, -1, -1):
            _adjust_heap(idx, 0, parent, k, idx[parent], greater)
    for i in range(k, count):  # std::__heap_select
        if greater(idx[i], idx[0]):
            value = idx[i]
            idx[i] = idx[0]
            _adjust_heap(idx, 0, 0, k, value, greater)
    for end in range(k - 1, 0, -1):  # std::__sort_heap
        value = idx[end]
        idx[end] = idx[0]
        _adjust_heap(idx, 0, 0, end, value, greater)
    return idx


def stable_argsort_decreasing(values: np.ndarray) -> np.ndarray:
    """DecreasingArgSort: std::stable_sort by decreasing value (no NaN reaches it)."""
    return np.argsort(-np.asarray(values, f32), kind="stable")


# --- non-max suppression ---------------------------------------------------------------------


def _iou(boxes: np.ndarray, i: int, js: np.ndarray) -> np.ndarray:
    """ComputeIntersectionOverUnion(i, j) for every j of `js`, float32 step by step."""
    bi, bj = boxes[i], boxes[js]
    area_i = (bi[2] - bi[0]) * (bi[3] - bi[1])
    area_j = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])

    def hi(a, b):  # std::max<float>(a, b): a < b ? b : a
        return np.where(a < b, b, a)

    def lo(a, b):  # std::min<float>(a, b): b < a ? b : a
        return np.where(b < a, b, a)

    dy = lo(bi[2], bj[:, 2]) - hi(bi[0], bj[:, 0])
    dx = lo(bi[3], bj[:, 3]) - hi(bi[1], bj[:, 1])
    inter = hi(dy, f32(0)) * hi(dx, f32(0))
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / ((area_i + area_j) - inter)
    return np.where((area_i <= 0) | (area_j <= 0), f32(0), iou).astype(f32)


def nms_single_class(boxes: np.ndarray, scores: np.ndarray, limit: int, o: Options) -> list[int]:
    """NonMaxSuppressionSingleClassHelper: the anchors kept, best first."""
    keep = np.nonzero(np.asarray(scores, f32) >= o.score_threshold)[0]
    order = keep[stable_argsort_decreasing(np.asarray(scores, f32)[keep])]
    active = np.ones(len(order), bool)
    selected: list[int] = []
    output_size = min(len(order), limit)
    for i in range(len(order)):
        if not active.any() or len(selected) >= output_size:
            break
        if not active[i]:
            continue
        selected.append(int(order[i]))
        active[i] = False
        rest = np.nonzero(active[i + 1 :])[0] + i + 1
        if len(rest):
            active[rest[_iou(boxes, int(order[i]), order[rest]) > o.iou_threshold]] = False
    return selected


def fast_nms(boxes, scores, o: Options, label_offset: int) -> tuple:
    """NonMaxSuppressionMultiClassFastHelper on one sample: (boxes, classes, scores, count)."""
    n_cat = min(o.max_classes_per_detection, o.num_classes)
    per_anchor = scores[:, label_offset : label_offset + o.num_classes]
    classes = [partial_argsort(row, o.num_classes, n_cat) for row in per_anchor]
    best = np.array([row[c[0]] for row, c in zip(per_anchor, classes)], f32)
    selected = nms_single_class(boxes, best, o.max_detections, o)
    out_boxes = np.zeros((o.detected, 4), f32)
    out_classes = np.zeros(o.detected, f32)
    out_scores = np.zeros(o.detected, f32)
    for k, anchor in enumerate(selected):
        for c in range(n_cat):
            row = o.max_classes_per_detection * k + c
            out_boxes[row] = boxes[anchor]
            out_classes[row] = classes[anchor][c]
            out_scores[row] = per_anchor[anchor, classes[anchor][c]]
    return out_boxes, out_classes, out_scores, len(selected)


def regular_nms(boxes, scores, o: Options, label_offset: int) -> tuple:
    """NonMaxSuppressionMultiClassRegularHelper on one sample (one thread): per class the NMS
    with min(detections_per_class, max_detections), its boxes merged into those kept so far
    (std::inplace_merge by decreasing score: stable, the kept ones first among equal scores),
    the first max_detections kept."""
    n_bg = scores.shape[1]
    limit = min(o.detections_per_class, o.max_detections)
    kept_idx: list[int] = []
    kept_scores: list[float] = []
    for col in range(o.num_classes):
        class_scores = scores[:, col + label_offset]
        selected = nms_single_class(boxes, class_scores, limit, o)
        idx = kept_idx + [a * n_bg + col + label_offset for a in selected]
        vals = np.array(kept_scores + [class_scores[a] for a in selected], f32)
        order = stable_argsort_decreasing(vals)[: o.max_detections]  # both runs sorted: a merge
        kept_idx = [idx[r] for r in order]
        kept_scores = [vals[r] for r in order]
    out_boxes = np.zeros((o.detected, 4), f32)
    out_classes = np.zeros(o.detected, f32)
    out_scores = np.zeros(o.detected, f32)
    for row, (flat, score) in enumerate(zip(kept_idx, kept_scores)):
        anchor = flat // n_bg
        out_boxes[row] = boxes[anchor]
        out_classes[row] = flat - anchor * n_bg - label_offset
        out_scores[row] = score
    return out_boxes, out_classes, out_scores, len(kept_idx)


def postprocess(enc, class_scores, anchors, o: Options) -> tuple:
    """The op on one sample: encodings [A, >= 4], scores [A, classes (+ background)], anchors
    [A, 4] -> (boxes [D, 4], classes [D], scores [D], count) float32, D = `o.detected`."""
    boxes = decode(enc, anchors, o)
    scores = np.asarray(class_scores, f32)
    label_offset = scores.shape[1] - o.num_classes
    if not 0 <= label_offset <= 1:
        raise InputDataError(
            f"TFLite_Detection_PostProcess: {scores.shape[1]} class scores per anchor for "
            f"num_classes {o.num_classes} (TFLite takes num_classes or num_classes + 1)"
        )
    uses_boxes = o.num_classes > 0 or not o.use_regular_nms
    if uses_boxes and not boxes_valid(boxes):
        raise InputDataError(
            "TFLite_Detection_PostProcess: a decoded box has ymin > ymax or xmin > xmax "
            "(a negative anchor size): TFLite's kernel fails"
        )
    nms = regular_nms if o.use_regular_nms else fast_nms
    return nms(boxes, scores, o, label_offset)


def kernel(c: Call):
    """float and tflite mode: LiteRT's float32 kernel, one sample after the other."""
    for slot in range(3):
        if c.tin(slot).dtype != "float32":
            raise c.unsupported(
                f"TFLite_Detection_PostProcess with {c.tin(slot).dtype} input {slot} (TFLite "
                "Micro's kernel takes float32 only)"
            )
    o = options(c.op)
    enc, scores, anchors = c.x(0), c.x(1), c.x(2)
    results = [postprocess(enc[s, 0], scores[s, 0], anchors[s], o) for s in range(c.n)]
    shapes = [c.tout(j).shape for j in range(4)]
    outs = [np.stack([r[j] for r in results]).reshape((c.n, *shapes[j])) for j in range(3)]
    count = np.array([r[3] for r in results], f32).reshape((c.n, *shapes[3]))
    return [*outs, count]
