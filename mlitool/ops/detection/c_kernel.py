"""`detection_postprocess`: TFLite_Detection_PostProcess in float32 C, LiteRT's kernel step by
step (`reference.py` says how; `reference.postprocess` is the numpy twin's arithmetic).

Inputs: box encodings and class scores (FP32 tensors, or constants holding float32 bit patterns
as SA32), anchors (a constant of float32 bit patterns). One output, FP32: the four outputs one
after the other (boxes D x 4, classes D, scores D, count 1) and then the kernel's working memory
(`scratch_words`: decoded boxes, scores, candidate lists), which it leaves zero; view layers
show the four outputs. cfg: the sizes, the options (floats as their bit patterns).

Rounding as LiteRT's: the decoding in double (the C library's exp), each product stored through
a volatile before the sum that follows (no fused multiply-add), then rounded to float; the IoU in
float32, the areas and the intersection each stored through a volatile. Sorts: a stable merge
sort by decreasing score (std::stable_sort), and libstdc++'s std::partial_sort (heap select, heap
sort; equal scores in its order) or, for one, the first largest; a stable merge
(std::inplace_merge).
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.detection import reference as DX

f32 = np.float32
FLOATS = ("score_thr", "iou_thr", "y_scale", "x_scale", "h_scale", "w_scale")
CFG = (
    "anchors",
    "depth",
    "num_bg",
    "num_classes",
    "label_offset",
    "max_det",
    "max_cls",
    "det_per_class",
    "regular",
    "detected",
    "work_words",
    *FLOATS,
)


def scratch_words(anchors: int, num_bg: int, num_classes: int, max_det: int) -> int:
    """32-bit words of working memory after the outputs (the C's layout, `@FN@` below)."""
    return anchors * (4 + num_bg + 1 + 4 + num_classes) + 4 * (anchors + max_det)


def float_bits(v) -> int:
    return int(np.array([v], f32).view(np.int32)[0])


def options_of(cfg: dict) -> DX.Options:
    def fl(k):
        return np.array([cfg[k]], np.int32).view(f32)[0]

    return DX.Options(
        max_detections=cfg["max_det"],
        max_classes_per_detection=cfg["max_cls"],
        detections_per_class=cfg["det_per_class"],
        use_regular_nms=bool(cfg["regular"]),
        score_threshold=fl("score_thr"),
        iou_threshold=fl("iou_thr"),
        num_classes=cfg["num_classes"],
        y_scale=fl("y_scale"),
        x_scale=fl("x_scale"),
        h_scale=fl("h_scale"),
        w_scale=fl("w_scale"),
    )


def _floats(x: np.ndarray, model, name: str, n: int) -> np.ndarray:
    """A batched float32 operand: an activation (N, ...), or a constant's bit patterns."""
    t = model.tensor(name)
    if t.data is not None:
        x = np.broadcast_to(np.asarray(t.data, np.int32).view(f32), (n, *t.shape))
    return np.asarray(x, f32)


def _run(layer, model, xs, arith) -> np.ndarray:
    cfg = layer.cfg
    o = options_of(cfg)
    n = max(
        (x.shape[0] for x, nm in zip(xs, layer.inputs) if model.tensor(nm).data is None), default=1
    )
    enc, scores, anchors = (_floats(x, model, nm, n) for x, nm in zip(xs, layer.inputs))
    a = cfg["anchors"]
    out = np.zeros((n, model.tensor(layer.outputs[0]).shape[0]), f32)
    d = cfg["detected"]
    for s in range(n):
        boxes, classes, sc, count = DX.postprocess(
            enc[s].reshape(a, cfg["depth"]),
            scores[s].reshape(a, cfg["num_bg"]),
            anchors[s].reshape(-1)[: 4 * a].reshape(a, 4),
            o,
        )
        out[s, : 6 * d + 1] = np.concatenate([boxes.reshape(-1), classes, sc, [f32(count)]])
    return out


_C = """\
#include <math.h> /* exp: the decoding is LiteRT's double arithmetic */

static float @FN@_f32(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

/* element i (row-major) of an FP32 tensor, or of a constant of float32 bit patterns (SA32) */
static float @FN@_get(const mli_tensor *t, uint32_t i) {
    const uint32_t off = @P@_offset(t, i);
    return t->el_type == MLI_EL_FP_32 ? t->data.mem.pf32[off] : @FN@_f32(t->data.mem.pi32[off]);
}

/* DecodeCenterSizeBoxes: (ymin, xmin, ymax, xmax) per anchor */
static void @FN@_decode(const mli_tensor *enc, const mli_tensor *anc, const @CFG@ *cfg,
                        float *boxes) {
    const double sy = @FN@_f32(cfg->y_scale), sx = @FN@_f32(cfg->x_scale);
    const double sh = @FN@_f32(cfg->h_scale), sw = @FN@_f32(cfg->w_scale);
    int32_t a;
    for (a = 0; a < cfg->anchors; a++) {
        const uint32_t e = (uint32_t)(a * cfg->depth), k = (uint32_t)(4 * a);
        const double ay = @FN@_get(anc, k), ax = @FN@_get(anc, k + 1u);
        const double ah = @FN@_get(anc, k + 2u), aw = @FN@_get(anc, k + 3u);
        volatile double py, px; /* rounded before the sum: no fused multiply-add */
        float yc, xc, hh, hw;
        py = (double)@FN@_get(enc, e) / sy * ah;
        px = (double)@FN@_get(enc, e + 1u) / sx * aw;
        yc = (float)(py + ay);
        xc = (float)(px + ax);
        hh = (float)(0.5 * exp((double)@FN@_get(enc, e + 2u) / sh) * ah);
        hw = (float)(0.5 * exp((double)@FN@_get(enc, e + 3u) / sw) * aw);
        boxes[k] = yc - hh;
        boxes[k + 1u] = xc - hw;
        boxes[k + 2u] = yc + hh;
        boxes[k + 3u] = xc + hw;
    }
}

/* ComputeIntersectionOverUnion in float32 (std::max(a, b) is a < b ? b : a) */
static float @FN@_iou(const float *boxes, int32_t i, int32_t j) {
    const float *p = boxes + 4 * i, *q = boxes + 4 * j;
    volatile float area_i, area_j, inter;
    float ymin, xmin, ymax, xmax, dy, dx, sum;
    area_i = (p[2] - p[0]) * (p[3] - p[1]);
    area_j = (q[2] - q[0]) * (q[3] - q[1]);
    if (area_i <= 0.0f || area_j <= 0.0f) {
        return 0.0f;
    }
    ymin = p[0] < q[0] ? q[0] : p[0];
    xmin = p[1] < q[1] ? q[1] : p[1];
    ymax = q[2] < p[2] ? q[2] : p[2];
    xmax = q[3] < p[3] ? q[3] : p[3];
    dy = ymax - ymin;
    dx = xmax - xmin;
    inter = (dy < 0.0f ? 0.0f : dy) * (dx < 0.0f ? 0.0f : dx);
    sum = area_i + area_j;
    return inter / (sum - inter);
}

/* std::stable_sort of idx[0..n) by decreasing v[idx] (bottom-up merge, tmp: n words) */
static void @FN@_sort(const float *v, int32_t *idx, int32_t *tmp, int32_t n) {
    int32_t width, lo, i;
    for (width = 1; width < n; width *= 2) {
        for (lo = 0; lo < n; lo += 2 * width) {
            const int32_t mid = lo + width < n ? lo + width : n;
            const int32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int32_t l = lo, r = mid, k;
            for (k = lo; k < hi; k++) {
                if (l < mid && (r >= hi || !(v[idx[r]] > v[idx[l]]))) {
                    tmp[k] = idx[l++];
                } else {
                    tmp[k] = idx[r++];
                }
            }
        }
        for (i = 0; i < n; i++) {
            idx[i] = tmp[i];
        }
    }
}

/* libstdc++'s std::__adjust_heap + std::__push_heap with comp(i, j) = v[i] > v[j] */
static void @FN@_adjust(const float *v, int32_t *idx, int32_t hole, int32_t len, int32_t value) {
    const int32_t top = hole;
    int32_t child = hole, parent;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (v[idx[child]] > v[idx[child - 1]]) {
            child--;
        }
        idx[hole] = idx[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        idx[hole] = idx[child - 1];
        hole = child - 1;
    }
    parent = (hole - 1) / 2;
    while (hole > top && v[idx[parent]] > v[value]) {
        idx[hole] = idx[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    idx[hole] = value;
}

/* DecreasingPartialArgSort: the first k of idx sorted by decreasing v; k == 1: the first largest */
static void @FN@_partial(const float *v, int32_t n, int32_t k, int32_t *idx) {
    int32_t i, value;
    if (k == 1) {
        idx[0] = 0;
        for (i = 1; i < n; i++) {
            if (v[i] > v[idx[0]]) {
                idx[0] = i;
            }
        }
        return;
    }
    for (i = 0; i < n; i++) {
        idx[i] = i;
    }
    for (i = (k - 2) / 2; k >= 2 && i >= 0; i--) {
        @FN@_adjust(v, idx, i, k, idx[i]);
    }
    for (i = k; i < n; i++) {
        if (v[idx[i]] > v[idx[0]]) {
            value = idx[i];
            idx[i] = idx[0];
            @FN@_adjust(v, idx, 0, k, value);
        }
    }
    for (i = k - 1; i > 0; i--) {
        value = idx[i];
        idx[i] = idx[0];
        @FN@_adjust(v, idx, 0, i, value);
    }
}

typedef struct {
    float *boxes, *scores, *best, *vals, *sorted_vals;
    int32_t *cand, *tmp, *active, *selected, *classes, *flat, *sorted;
} @FN@_work;

/* NonMaxSuppressionSingleClassHelper: the anchors kept, best first; returns their count */
static int32_t @FN@_nms(const @FN@_work *w, const float *scores, int32_t limit,
                        const @CFG@ *cfg) {
    const float score_thr = @FN@_f32(cfg->score_thr), iou_thr = @FN@_f32(cfg->iou_thr);
    int32_t kept = 0, count = 0, i, j, live, size;
    for (i = 0; i < cfg->anchors; i++) {
        if (scores[i] >= score_thr) {
            w->cand[kept++] = i;
        }
    }
    @FN@_sort(scores, w->cand, w->tmp, kept);
    size = kept < limit ? kept : limit;
    live = kept;
    for (i = 0; i < kept; i++) {
        w->active[i] = 1;
    }
    for (i = 0; i < kept; i++) {
        if (live == 0 || count >= size) {
            break;
        }
        if (!w->active[i]) {
            continue;
        }
        w->selected[count++] = w->cand[i];
        w->active[i] = 0;
        live--;
        for (j = i + 1; j < kept; j++) {
            if (w->active[j] && @FN@_iou(w->boxes, w->cand[i], w->cand[j]) > iou_thr) {
                w->active[j] = 0;
                live--;
            }
        }
    }
    return count;
}

static void @FN@_emit(float *y, const @CFG@ *cfg, int32_t row, const float *box, int32_t cls,
                      float score) {
    int32_t c;
    for (c = 0; c < 4; c++) {
        y[4 * row + c] = box[c];
    }
    y[4 * cfg->detected + row] = (float)cls;
    y[5 * cfg->detected + row] = score;
}

/* NonMaxSuppressionMultiClassFastHelper; returns the count */
static int32_t @FN@_fast(const @FN@_work *w, const @CFG@ *cfg, float *y) {
    const int32_t n_cat = cfg->max_cls < cfg->num_classes ? cfg->max_cls : cfg->num_classes;
    int32_t a, k, c, count;
    for (a = 0; a < cfg->anchors; a++) {
        const float *row = w->scores + a * cfg->num_bg + cfg->label_offset;
        int32_t *cls = w->classes + a * cfg->num_classes;
        @FN@_partial(row, cfg->num_classes, n_cat, cls);
        w->best[a] = row[cls[0]];
    }
    count = @FN@_nms(w, w->best, cfg->max_det, cfg);
    for (k = 0; k < count; k++) {
        const int32_t a_k = w->selected[k];
        const float *row = w->scores + a_k * cfg->num_bg + cfg->label_offset;
        const int32_t *cls = w->classes + a_k * cfg->num_classes;
        for (c = 0; c < n_cat; c++) {
            @FN@_emit(y, cfg, cfg->max_cls * k + c, w->boxes + 4 * a_k, cls[c], row[cls[c]]);
        }
    }
    return count;
}

/* NonMaxSuppressionMultiClassRegularHelper (one thread); returns the count */
static int32_t @FN@_regular(const @FN@_work *w, const @CFG@ *cfg, float *y) {
    const int32_t limit = cfg->det_per_class < cfg->max_det ? cfg->det_per_class : cfg->max_det;
    int32_t size = 0, col, a, i, r, l, n, k;
    for (col = 0; col < cfg->num_classes; col++) {
        for (a = 0; a < cfg->anchors; a++) {
            w->best[a] = w->scores[a * cfg->num_bg + col + cfg->label_offset];
        }
        n = @FN@_nms(w, w->best, limit, cfg);
        for (i = 0; i < n; i++) {
            w->flat[size + i] = w->selected[i] * cfg->num_bg + col + cfg->label_offset;
            w->vals[size + i] = w->best[w->selected[i]];
        }
        n += size;
        /* std::inplace_merge of the kept [0, size) and this class's [size, n), both by
         * decreasing score: stable, the kept ones first among equal scores */
        for (k = 0, l = 0, r = size; k < n; k++) {
            if (l < size && (r >= n || !(w->vals[r] > w->vals[l]))) {
                w->sorted[k] = w->flat[l];
                w->sorted_vals[k] = w->vals[l++];
            } else {
                w->sorted[k] = w->flat[r];
                w->sorted_vals[k] = w->vals[r++];
            }
        }
        size = n < cfg->max_det ? n : cfg->max_det;
        for (r = 0; r < size; r++) {
            w->flat[r] = w->sorted[r];
            w->vals[r] = w->sorted_vals[r];
        }
    }
    for (r = 0; r < size; r++) {
        const int32_t anchor = w->flat[r] / cfg->num_bg;
        const int32_t cls = w->flat[r] - anchor * cfg->num_bg - cfg->label_offset;
        @FN@_emit(y, cfg, r, w->boxes + 4 * anchor, cls, w->vals[r]);
    }
    return size;
}

@STORAGE@mli_status @FN@(const mli_tensor *enc, const mli_tensor *scores, const mli_tensor *anc,
                         const @CFG@ *cfg, mli_tensor *out) {
    float *y = out->data.mem.pf32, *f = y + 6 * cfg->detected + 1;
    const int32_t a = cfg->anchors, span = cfg->anchors + cfg->max_det;
    int32_t *ints, i, count;
    @FN@_work w;
    w.boxes = f;
    w.scores = w.boxes + 4 * a;
    w.best = w.scores + a * cfg->num_bg;
    w.vals = w.best + a;
    w.sorted_vals = w.vals + span;
    ints = (int32_t *)(void *)(w.sorted_vals + span);
    w.cand = ints;
    w.tmp = w.cand + a;
    w.active = w.tmp + a;
    w.selected = w.active + a;
    w.classes = w.selected + a;
    w.flat = w.classes + a * cfg->num_classes;
    w.sorted = w.flat + span;
    for (i = 0; i < 6 * cfg->detected + 1; i++) {
        y[i] = 0.0f;
    }
    @FN@_decode(enc, anc, cfg, w.boxes);
    for (i = 0; i < a * cfg->num_bg; i++) {
        w.scores[i] = @FN@_get(scores, (uint32_t)i);
    }
    count = cfg->regular ? @FN@_regular(&w, cfg, y) : @FN@_fast(&w, cfg, y);
    y[6 * cfg->detected] = (float)count;
    for (i = 0; i < cfg->work_words; i++) { /* the working memory left zero, as the twin's */
        f[i] = 0.0f;
    }
    return MLI_STATUS_OK;
}
"""

DETECTION = FallbackKernel(
    name="detection_postprocess",
    doc="TFLite_Detection_PostProcess: box decoding and non-max suppression in float32",
    c_source=_C,
    run=_run,
    cfg=CFG,
)
register_kernel(DETECTION)
