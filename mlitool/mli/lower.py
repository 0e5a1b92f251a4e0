"""IR `Graph` -> `MliModel`: one `MliLayer` per kernel call, every number final.

The lowering decides, per TFLite op, the MLI kernel (kernels.py), the layout of its constants, the
encoded quantization of every tensor (quant.py) and the kernel config. Where MLI needs something
TFLite expresses differently it inserts layers and says so in `notes`: "convert" layers where the
format changes between layers or a kernel leaves other output parameters than the model expects,
"relu" layers for fused activations a kernel cannot apply, "view" layers for reshapes.

Public: `lower(graph, ...)`, `unsupported_ops(graph, target, layout)`, `tflite_padding(...)`,
`safe_pool_axis(...)`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlitool import ir
from mlitool.errors import MlitoolError, OptionError, UnsupportedError
from mlitool.errors import SubtensorError
from mlitool.mli import kernels as K
from mlitool.mli import quant as Q
from mlitool.mli import views as V
from mlitool.mli.subtensor import create_subtensor
from mlitool.mli.types import FORMATS, TARGETS, ElType, MliLayer, MliModel, MliTensor, Role

_ELTWISE = {"ADD": "eltwise_add", "SUB": "eltwise_sub", "MUL": "eltwise_mul",
            "MINIMUM": "eltwise_min", "MAXIMUM": "eltwise_max"}
_RELU_OPS = {"RELU": K.RELU_GEN, "RELU6": K.RELU_6, "RELU_N1_TO_1": K.RELU_1}
_LUT_KINDS = {"LOGISTIC": "sigm", "TANH": "tanh", "SOFTMAX": "softmax",
              "L2_NORMALIZATION": "l2_normalize"}
_FUSED_OK = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
SLICE_OPS = ("SPLIT", "SPLIT_V", "SLICE", "STRIDED_SLICE")

# Output parameters the LUT kernels write into their output tensor (golden `*_post_*` values):
# SA8 (zero_point, scale, scale_frac_bits); FX16 frac bits.
FIXED_SA8_OUTPUT = {"sigm": (-128, 1, 8), "tanh": (0, 1, 7), "softmax": (-128, 1, 8),
                    "l2_normalize": (0, 1, 7)}
FIXED_FX_OUTPUT_FRAC = 15


# --- geometry ---------------------------------------------------------------------------------

def tflite_padding(padding: str, in_size: int, filter_size: int, stride: int, dilation: int = 1
                   ) -> tuple[int, int, int]:
    """(out_size, pad_before, pad_after) exactly as TFLite's ComputePaddingHeightWidth."""
    eff = (filter_size - 1) * dilation + 1
    if padding == "SAME":
        out = (in_size + stride - 1) // stride
    elif padding == "VALID":
        out = (in_size - eff + stride) // stride
    else:
        raise UnsupportedError(f"padding {padding!r} is not SAME or VALID")
    if padding == "VALID":
        return out, 0, 0
    total = max((out - 1) * stride + eff - in_size, 0)
    return out, total // 2, total // 2 + total % 2


def pool_hazard(in_size: int, kernel: int, pad_before: int, pad_after: int) -> bool:
    """MLI 2.0.2 pooling writes outside its output when this holds (mli-arithmetic.md 8b)."""
    return min(pad_before, pad_after) < kernel - in_size - 1


def _windows(in_size, kernel, stride, pb, out):
    start = np.arange(out) * stride - pb
    return np.maximum(start, 0), np.minimum(start + kernel - 1, in_size - 1)


def safe_pool_axis(in_size: int, kernel: int, stride: int, pb: int, pa: int, out: int
                   ) -> tuple[int, int, int, int] | None:
    """An equivalent (kernel, stride, pad_before, pad_after) without the hazard, or None.

    Pooling over padding only counts valid elements (average divides by them, max ignores them),
    so a configuration whose every output window covers the same input elements gives the same
    result. Keeps the original when it is safe.
    """
    if not pool_hazard(in_size, kernel, pb, pa):
        return kernel, stride, pb, pa
    lo, hi = _windows(in_size, kernel, stride, pb, out)
    strides = [stride] if out > 1 else [max(stride, in_size)]
    for s in strides:
        for k in range(1, kernel + 1):
            for b in range(0, pb + 1):
                a = max(0, (out - 1) * s + k - in_size - b)
                if pool_hazard(in_size, k, b, a) or (in_size + b + a - k) // s + 1 != out:
                    continue
                lo2, hi2 = _windows(in_size, k, s, b, out)
                if np.array_equal(lo, lo2) and np.array_equal(hi, hi2):
                    return k, s, b, a
    return None


# --- support check ----------------------------------------------------------------------------

def _t(graph: ir.Graph, i: int) -> ir.Tensor | None:
    return graph.tensor(i)


def _const_values(graph: ir.Graph, i: int) -> np.ndarray | None:
    t = graph.tensor(i)
    return None if t is None or t.data is None else np.asarray(t.data)


def _axis_list(graph: ir.Graph, op: ir.Op, slot: int = 1) -> list[int] | None:
    v = _const_values(graph, op.inputs[slot]) if len(op.inputs) > slot else None
    if v is None:
        return None
    return [int(a) for a in np.atleast_1d(v)]


def layer_kind(graph: ir.Graph, op: ir.Op) -> str:
    """The MLI layer kind a TFLite op becomes (before inserted layers)."""
    t = op.type
    if t == "CONV_2D":
        return "conv2d"
    if t == "DEPTHWISE_CONV_2D":
        w = graph.tensors[op.inputs[1]]
        cin = graph.tensors[op.inputs[0]].shape[-1]
        if cin == 1 and w.shape[-1] > 1:
            return "conv2d"                  # one input channel: an ordinary convolution
        return "depthwise_conv2d" if w.shape[-1] == cin else "group_conv2d"
    if t == "FULLY_CONNECTED":
        return "conv2d" if fc_rows(graph, op) > 1 else "fully_connected"
    if t in ("AVERAGE_POOL_2D", "MEAN"):
        return "avepool"
    if t == "MAX_POOL_2D":
        return "maxpool"
    if t in _ELTWISE:
        return _ELTWISE[t]
    if t in _RELU_OPS:
        return "relu"
    if t in _LUT_KINDS:
        return _LUT_KINDS[t]
    return {"LEAKY_RELU": "leaky_relu", "PRELU": "prelu", "ARG_MAX": "argmax",
            "TRANSPOSE": "permute", "RESHAPE": "view", "SQUEEZE": "view",
            "CONCATENATION": "concat", "PAD": "padding", "PADV2": "padding",
            "QUANTIZE": "convert",
            "DEQUANTIZE": "convert", "SPLIT": "view", "SPLIT_V": "view", "SLICE": "view",
            "STRIDED_SLICE": "view"}[t]


def fc_rows(graph: ir.Graph, op: ir.Op) -> int:
    """How many rows of N_in elements a FULLY_CONNECTED multiplies (TFLite flattens its input
    to [rows, N_in]). More than one row is lowered as a 1x1 conv2d over a (rows, 1, N_in) view."""
    w = graph.tensors[op.inputs[1]]
    return max(graph.tensors[op.inputs[0]].size // max(int(w.shape[-1]), 1), 1)


def _rows_not_batch(graph: ir.Graph, op: ir.Op, t: ir.Tensor) -> bool:
    """A rank-2 [rows, N] input or [rows, M] output of a multi-row FULLY_CONNECTED: the first
    dimension is rows of the matrix product, not a batch."""
    return (op.type == "FULLY_CONNECTED" and len(t.shape) == 2 and fc_rows(graph, op) > 1
            and t.size % fc_rows(graph, op) == 0 and t.shape[0] == fc_rows(graph, op))


# The per-row zero points that turn argmax offsets into indices are int16.
ARGMAX_MAX_ZERO_POINT = 32767


def argmax_rows(graph: ir.Graph, op: ir.Op) -> tuple[int | None, int]:
    """(rows, axis size) of an ARG_MAX seen as [rows, size] with the axis innermost, or
    (None, size) when dimensions after the axis are not all 1."""
    shape = graph.tensors[op.inputs[0]].shape
    axis = _axis_list(graph, op)[0] % len(shape)
    if any(d != 1 for d in shape[axis + 1:]):
        return None, int(shape[axis])
    return graph.tensors[op.inputs[0]].size // max(int(shape[axis]), 1), int(shape[axis])


def slice_boxes(graph: ir.Graph, op: ir.Op) -> tuple[int, list[V.Box]]:
    """(input tensor index, one `Box` per output) of a SPLIT / SPLIT_V / SLICE / STRIDED_SLICE.
    Raises UnsupportedError when a parameter is not constant or not expressible."""
    def ints(slot: int) -> list[int]:
        v = _const_values(graph, op.inputs[slot]) if len(op.inputs) > slot else None
        if v is None:
            raise UnsupportedError(f"{op.type} input {slot} is not constant")
        return [int(a) for a in np.atleast_1d(v).reshape(-1)]

    if op.type == "SPLIT":
        x = op.inputs[1]
        shape = graph.tensors[x].shape
        axis = ints(0)[0] % len(shape)
        n = len(op.outputs)
        if shape[axis] % n:
            raise UnsupportedError(f"SPLIT of dimension {shape[axis]} into {n} parts")
        return x, V.split_boxes(shape, axis, [shape[axis] // n] * n)
    x = op.inputs[0]
    shape = graph.tensors[x].shape
    if op.type == "SPLIT_V":
        return x, V.split_boxes(shape, ints(2)[0], ints(1))
    if op.type == "SLICE":
        return x, [V.slice_box(shape, ints(1), ints(2))]
    return x, [V.strided_slice_box(shape, ints(1), ints(2), ints(3), op.options)]


def _eltwise_broadcast_problem(a: ir.Tensor, b: ir.Tensor, out: ir.Tensor) -> str | None:
    """Why the operands of an element-wise op cannot be given to MLI (None: they can). MLI
    takes equal shapes or a scalar; a constant that broadcasts is materialized at the output's
    shape, an activation that broadcasts has no MLI equivalent (mem_stride 0 is invalid)."""
    if a.shape == b.shape or a.size == 1 or b.size == 1:
        return None
    try:
        full = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        return f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
    for t in (a, b):
        if t.data is None and tuple(t.shape) != full:
            return (f"activation {t.name!r} {list(t.shape)} broadcasts to {list(full)} (MLI: "
                    "equal shapes or a scalar; only a constant operand can be expanded)")
    if tuple(out.shape) != full:
        return f"output shape {list(out.shape)} is not the broadcast shape {list(full)}"
    return None


def _reason(graph: ir.Graph, op: ir.Op, target: str, layout: str) -> str | None:
    """Why `op` cannot be lowered for this target (None when it can)."""
    if op.type not in K.SUPPORTED_OPS:
        return "no MLI kernel for this op"
    acts = [graph.tensors[i] for i in op.inputs if i >= 0 and graph.tensors[i].data is None]
    acts += [graph.tensors[i] for i in op.outputs]
    for t in acts:
        if t.dtype not in ("int8", "float32") and not (op.type == "ARG_MAX" and t in
                                                        [graph.tensors[o] for o in op.outputs]):
            return f"tensor {t.name!r} has type {t.dtype} (MLI activations: int8 or float)"
        if len(t.shape) >= 2 and t.shape[0] != 1 and not _rows_not_batch(graph, op, t):
            return f"tensor {t.name!r} has batch {t.shape[0]} (MLI runs batch 1)"
        if len(t.shape) > 5:
            return f"tensor {t.name!r} has rank {len(t.shape)} (MLI: at most 4 without batch)"
    opt = op.options
    if opt.get("fused_activation", "NONE") not in _FUSED_OK:
        return f"fused activation {opt['fused_activation']} has no MLI equivalent"
    kind = layer_kind(graph, op)
    if target != "2.0":
        if kind in ("group_conv2d", "prelu", "l2_normalize", "argmax"):
            return f"{kind} has no MLI {target} kernel (MLI 2.x has one)"
        if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D") and (opt.get("dilation_h", 1) != 1
                                                            or opt.get("dilation_w", 1) != 1):
            return f"dilation needs MLI 2.x"
        if op.type in ("QUANTIZE", "DEQUANTIZE") and any(
                graph.tensors[i].dtype == "float32" for i in op.inputs[:1] + op.outputs):
            return f"MLI {target} has no float tensors (QUANTIZE/DEQUANTIZE of float data)"
    if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        if graph.tensors[op.inputs[1]].data is None:
            return "weights are not constant"
        if len(graph.tensors[op.inputs[0]].shape) != 4:
            return "input is not 4-D NHWC"
    if op.type == "FULLY_CONNECTED":
        w = graph.tensors[op.inputs[1]]
        if w.data is None or len(w.shape) != 2:
            return "weights are not a constant 2-D matrix"
        if graph.tensors[op.inputs[0]].size % w.shape[1]:
            return f"input size is not a multiple of N_in = {w.shape[1]}"
        if fc_rows(graph, op) > 1 and layout == "chw":
            return ("several input rows: lowered as a 1x1 conv2d over an HWC view, which "
                    "--layout chw cannot express; use --layout hwc")
    if op.type in _ELTWISE:
        a, b = (graph.tensors[i] for i in op.inputs[:2])
        if a.data is not None and b.data is not None:
            return "both operands are constant"
        why = _eltwise_broadcast_problem(a, b, graph.tensors[op.outputs[0]])
        if why:
            return why
    if op.type == "SOFTMAX":
        if float(opt.get("beta", 1.0)) != 1.0:
            return f"softmax beta {opt.get('beta')} != 1"
        if target != "2.0" and sum(d > 1 for d in graph.tensors[op.inputs[0]].shape) > 1:
            return f"MLI {target} softmax works on the whole tensor, not along an axis"
    if op.type == "MEAN":
        axes = _axis_list(graph, op)
        shape = graph.tensors[op.inputs[0]].shape
        if axes is None or len(shape) != 4 or sorted(a % 4 for a in axes) != [1, 2]:
            return "MEAN is lowered only over H and W of a 4-D tensor (as average pooling)"
    if op.type == "ARG_MAX":
        axes = _axis_list(graph, op)
        if axes is None or len(axes) != 1:
            return "axis is not constant"
        rows, size = argmax_rows(graph, op)
        if rows is None:
            return ("ARG_MAX is lowered over the last non-unit axis only (the dimensions after "
                    "the axis must be 1)")
        if (rows - 1) * size > ARGMAX_MAX_ZERO_POINT:
            return (f"ARG_MAX over {rows} rows of {size}: MLI reports offsets from the tensor "
                    f"start, and row starts up to {(rows - 1) * size} do not fit the int16 zero "
                    f"points that make them row-relative (at most {ARGMAX_MAX_ZERO_POINT})")
    if op.type == "TRANSPOSE":
        perm = _axis_list(graph, op)
        shape = graph.tensors[op.inputs[0]].shape
        if perm is None or (len(shape) >= 2 and perm[0] != 0):
            return "permutation is not constant or moves the batch dimension"
    if op.type == "CONCATENATION":
        if any(graph.tensors[i].data is not None for i in op.inputs):
            return "constant concatenation inputs"
        rank = len(graph.tensors[op.outputs[0]].shape)
        if rank >= 2 and int(opt.get("axis", 0)) % rank == 0:
            return "concatenation along the batch dimension"
    if op.type in SLICE_OPS:
        try:
            x, boxes = slice_boxes(graph, op)
        except UnsupportedError as exc:
            return exc.message
        if any(b.begin[0] != 0 for b in boxes if len(b.begin) >= 2):
            return "slicing along the batch dimension"
    if op.type in ("PAD", "PADV2"):
        pads = _const_values(graph, op.inputs[1])
        shape = graph.tensors[op.inputs[0]].shape
        if pads is None or len(shape) != 4 or np.any(pads[0] != 0) or np.any(pads[3] != 0) \
                or np.any(pads < 0) or np.any(pads > 255):
            return "PAD is lowered only for spatial padding (H, W, 0..255) of a 4-D tensor"
        if op.type == "PADV2":
            value = _const_values(graph, op.inputs[2]) if len(op.inputs) > 2 else None
            if value is None or value.size != 1:
                return "PADV2 pad value is not one constant"
            if value.dtype.kind == "f" and float(value.reshape(-1)[0]) != 0.0:
                return "PADV2 of float data with a non-zero pad value (MLI pads with zeros)"
    if op.type == "PRELU":
        alpha = graph.tensors[op.inputs[1]]
        if alpha.data is None or sum(d > 1 for d in alpha.shape) > 1:
            return "PReLU slope is not constant or varies along more than one axis"
    return None


def unsupported_ops(graph: ir.Graph, target: str = "2.0", layout: str = "hwc") -> list[str]:
    """Every op that cannot be lowered, as 'op 3 (CONV_2D): reason'."""
    out = []
    for op in graph.ops:
        r = _reason(graph, op, target, layout)
        if r:
            out.append(f"{op.label}: {r}")
    return out


# --- the lowering -----------------------------------------------------------------------------

def lower(graph: ir.Graph, *, format: str = "sa8", target: str = "2.0", layout: str = "hwc",
          overrides: dict | None = None, weights_only: bool = False,
          ranges: dict[int, tuple[float, float]] | None = None, source: str = "") -> MliModel:
    """Lower `graph` for MLI `target` in `format` (per-layer `overrides`: {selector: format},
    selector = op index (int), "op:TYPE", or an op's output tensor name).

    Float activations need `ranges` (tensor index -> (min, max)) unless `weights_only`.
    Raises UnsupportedError (listing every unsupported op, or naming the layer whose format the
    target lacks) and OptionError (bad option, missing ranges).
    """
    return _Lowering(graph, format, target, layout, overrides or {}, weights_only,
                     ranges or {}, source).run()


def _act_el(fmt: str) -> ElType:
    return FORMATS[fmt][0]


class _Lowering:
    def __init__(self, graph, fmt, target, layout, overrides, weights_only, ranges, source):
        if fmt not in FORMATS:
            raise OptionError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
        if target not in TARGETS:
            raise OptionError(f"unknown MLI target {target!r} (choose from {', '.join(TARGETS)})")
        layout = layout.lower()
        if layout not in ("hwc", "chw"):
            raise OptionError(f"unknown layout {layout!r} (hwc or chw)")
        if target == "2.0" and layout != "hwc":
            raise OptionError("MLI 2.x kernels take HWC activations: --layout chw is for MLI 1.x")
        self.g, self.fmt, self.target, self.layout = graph, fmt, target, layout
        self.weights_only, self.ranges, self.source = weights_only, ranges, source
        self.overrides = self._check_overrides(overrides)
        self.tensors: dict[str, MliTensor] = {}
        self.layers: list[MliLayer] = []
        self.primary: dict[int, str] = {}
        self.variants: dict[tuple[int, ElType], str] = {}
        self.fused_pads: dict[int, tuple[ir.Op, list[int]]] = {}   # conv op -> (PAD, padding)
        self.warnings: list[str] = []
        self.used_overrides: set = set()

    # -- options ----------------------------------------------------------------------------
    def _check_overrides(self, overrides: dict) -> dict:
        for key, fmt in overrides.items():
            if fmt not in FORMATS:
                raise OptionError(f"override {key!r}: unknown format {fmt!r} "
                                  f"(choose from {', '.join(FORMATS)})")
        return dict(overrides)

    def layer_format(self, op: ir.Op) -> str:
        out_name = self.g.tensors[op.outputs[0]].name if op.outputs else None
        for key in (op.index, out_name, f"op:{op.type}"):
            if key is not None and key in self.overrides:
                self.used_overrides.add(key)
                return self.overrides[key]
        return self.fmt

    # -- names and shapes -------------------------------------------------------------------
    def _unique(self, base: str) -> str:
        base = base or "t"
        name, n = base, 1
        while name in self.tensors:
            n += 1
            name = f"{base}_{n}"
        return name

    def _base(self, idx: int) -> str:
        t = self.g.tensors[idx]
        return t.name or f"tensor_{idx}"

    def mli_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """TFLite activation shape -> MLI shape: batch 1 dropped, CHW for rank 3 in 1.x chw."""
        s = tuple(shape[1:]) if len(shape) >= 2 else tuple(shape)
        if self.layout == "chw" and len(s) == 3:
            s = (s[2], s[0], s[1])
        return s

    def mli_axis(self, axis: int, tfl_rank: int) -> int:
        axis %= max(tfl_rank, 1)
        a = axis - 1 if tfl_rank >= 2 else axis
        if self.layout == "chw" and tfl_rank == 4:
            a = {0: 1, 1: 2, 2: 0}[a]
        return a

    def _add(self, t: MliTensor) -> str:
        t.name = self._unique(t.name)
        self.tensors[t.name] = t
        return t.name

    def _layer(self, op: ir.Op, kind: str, fmt: str, inputs, outputs, **kw) -> MliLayer:
        kernel = K.kernel_name(kind, fmt, self.target, self.layout)
        if kernel is None:
            raise self._no_kernel(op, kind, fmt)
        layer = MliLayer(index=op.index, op_type=op.type, kind=kind, kernel=kernel,
                         inputs=list(inputs), outputs=list(outputs), **kw)
        self.layers.append(layer)
        return layer

    def _no_kernel(self, op: ir.Op, kind: str, fmt: str) -> UnsupportedError:
        alts = K.available_formats(kind, self.target, self.layout)
        lays = [lay for lay in K.available_layouts(kind, fmt, self.target) if lay != self.layout]
        hint = []
        if alts:
            hint.append(f"formats available for it: {', '.join(alts)} (--format or a per-layer "
                        "override)")
        if lays and self.target != "2.0":
            hint.append(f"or --layout {lays[0]}")
        if not alts and not lays:
            hint.append("another --mli target")
        return UnsupportedError(f"{op.label} ({kind}): MLI {self.target} has no {fmt} kernel "
                                f"for {self.layout.upper()} layout; " + " ".join(hint))

    # -- activation tensors -----------------------------------------------------------------
    def _range(self, idx: int) -> tuple[float, float] | None:
        t = self.g.tensors[idx]
        if t.quant is not None and t.dtype == "int8" and not t.quant.per_axis:
            s, zp = float(t.quant.scale[0]), int(t.quant.zero_point[0])
            return s * (-128 - zp), s * (127 - zp)
        if idx in self.ranges:
            lo, hi = self.ranges[idx]
            return float(lo), float(hi)
        return None

    def _sa_params(self, idx: int) -> tuple[float, int] | None:
        t = self.g.tensors[idx]
        if t.quant is not None and t.dtype == "int8":
            return float(t.quant.scale[0]), int(t.quant.zero_point[0])
        if idx in self.ranges:
            return Q.sa8_params_from_range(*self.ranges[idx])
        return None

    def _set_sa(self, t: MliTensor, scale: float, zp: int) -> None:
        if self.target == "2.0":
            s16, f = Q.encode_scale_mli2(scale)
            t.scale, t.scale_frac_bits = s16, f
            if Q.mli2_scale_overflows(scale)[0]:
                t.notes.append(f"scale {scale!r} rounds to 32768 in int16: encoded as 16384 with "
                               "one frac bit less (the TFLM integration would wrap)")
        else:
            s32, f = Q.encode_scale_mli11(scale, per_axis=False)
            t.scale, t.scale_frac_bits = s32, np.array([f], dtype=np.int8)
        t.zero_point = np.array([zp], dtype=np.int16)
        t.dim = -1

    def _new_act(self, idx: int, el: ElType, name: str | None = None) -> MliTensor:
        src = self.g.tensors[idx]
        role = (Role.INPUT if idx in self.g.inputs else Role.OUTPUT if idx in self.g.outputs
                else Role.ACTIVATION)
        rows_2d = len(src.shape) == 2 and src.shape[0] != 1     # only FC rows pass _reason
        shape = tuple(src.shape) if rows_2d else self.mli_shape(src.shape)
        lay = ("CHW" if self.layout == "chw" else "HWC") if len(shape) == 3 else ""
        t = MliTensor(name=name or self._base(idx), role=role, shape=shape, el_type=el,
                      layout=lay, source=src.name, source_index=idx)
        if el.is_sa:
            p = self._sa_params(idx) if el == ElType.SA8 else (1.0, 0)
            if p is None:
                p = (1.0, 0)
                t.notes.append("weights-only output: activation parameters are placeholders")
            self._set_sa(t, *p)
        elif el.is_fx:
            r = self._range(idx)
            if r is None:
                t.frac_bits = 0
                t.notes.append("weights-only output: activation frac bits are placeholders")
            else:
                t.frac_bits = Q.fx_frac_bits(max(abs(r[0]), abs(r[1])), el.bits)
        return t

    def produce(self, idx: int, el: ElType) -> MliTensor:
        """The primary MLI tensor of TFLite tensor `idx`, written by the current layer."""
        t = self._new_act(idx, el)
        self._add(t)
        self.primary[idx] = t.name
        return t

    def use(self, op: ir.Op, idx: int, el: ElType) -> str:
        """Name of TFLite tensor `idx` as element type `el`, converting when its producer wrote
        another type."""
        if idx not in self.primary:               # graph input: takes its first consumer's type
            return self.produce(idx, el).name
        p = self.tensors[self.primary[idx]]
        if p.el_type == el:
            return p.name
        key = (idx, el)
        if key not in self.variants:
            v = self._new_act(idx, el, f"{p.name}_{el.name.lower()}")
            v.role = Role.ACTIVATION
            self._add(v)
            self.variants[key] = v.name
            self._convert(op, p.name, v.name, f"format change {p.el_type.name} -> {el.name} "
                                              f"before {op.label}")
        return self.variants[key]

    def _convert(self, op: ir.Op, src: str, dst: str, why: str) -> None:
        self.layers.append(MliLayer(index=op.index, op_type=op.type, kind="convert",
                                    kernel=K.kernel_name("convert", "fx16", self.target,
                                                         self.layout) or "mli_hlp_convert_tensor",
                                    inputs=[src], outputs=[dst], notes=[f"inserted: {why}"]))

    def same_params(self, a: MliTensor, b: MliTensor) -> bool:
        if a.el_type != b.el_type:
            return False
        if a.el_type.is_fx:
            return a.frac_bits == b.frac_bits
        if a.el_type.is_sa:
            return (np.array_equal(a.zero_point, b.zero_point)
                    and np.array_equal(a.real_scale(), b.real_scale()))
        return True

    def kernel_output(self, op: ir.Op, idx: int, el: ElType, leaves=None) -> tuple[str, list]:
        """Create the output tensor of `op`; when the kernel leaves fixed parameters (`leaves`:
        a function setting them on a tensor) that differ from the model's, the kernel writes a
        temporary tensor and a convert follows. Returns (kernel output name, pending converts)."""
        out = self.produce(idx, el)
        if leaves is None:
            return out.name, []
        krn = dataclasses.replace(out, notes=[], name=out.name)
        krn.zero_point = None if out.zero_point is None else out.zero_point.copy()
        leaves(krn)
        if el.is_fx or self.same_params(krn, out):
            leaves(out)
            out.notes.append("parameters are those the kernel writes into its output")
            return out.name, []
        krn.name = f"{out.name}_krn"
        krn.role = Role.ACTIVATION
        krn.notes = ["parameters the kernel writes into its output"]
        self._add(krn)
        return krn.name, [(krn.name, out.name)]

    def finish(self, op: ir.Op, pending: list, why: str) -> None:
        for src, dst in pending:
            self._convert(op, src, dst, why)
            self.layers[-1].notes.append("requantizes to the parameters the model expects")

    def copy_params(self, src: MliTensor):
        def leaves(t: MliTensor) -> None:
            t.frac_bits = src.frac_bits
            if src.el_type.is_sa:
                t.zero_point, t.scale = src.zero_point.copy(), src.scale.copy()
                t.scale_frac_bits, t.dim = src.scale_frac_bits.copy(), src.dim
        return leaves

    # -- fused activations ------------------------------------------------------------------
    def relu_type(self, op: ir.Op, out: MliTensor) -> int:
        act = op.options.get("fused_activation", "NONE")
        if act == "NONE":
            return K.RELU_NONE
        if out.el_type == ElType.SA8:
            idx = out.source_index
            p = self._sa_params(idx)
            if p is not None:
                scale, zp = p
                lo = {"RELU": 0.0, "RELU6": 0.0, "RELU_N1_TO_1": -1.0}[act]
                hi = {"RELU": None, "RELU6": 6.0, "RELU_N1_TO_1": 1.0}[act]
                qlo = max(-128, zp + int(np.round(lo / scale)))
                qhi = 127 if hi is None else min(127, zp + int(np.round(hi / scale)))
                if (qlo, qhi) == (-128, 127):
                    return K.RELU_NONE
        return {"RELU": K.RELU_GEN, "RELU6": K.RELU_6, "RELU_N1_TO_1": K.RELU_1}[act]

    def separate_relu(self, op: ir.Op, fmt: str, out_name: str) -> str:
        """For kernels without a relu config: the kernel writes a copy, a relu layer follows.
        Returns the name the kernel should write."""
        out = self.tensors[out_name]
        rt = self.relu_type(op, out)
        if rt == K.RELU_NONE:
            return out_name
        pre = dataclasses.replace(out, name=f"{out.name}_pre_act", role=Role.ACTIVATION,
                                  notes=["before the fused activation"])
        self._add(pre)
        self._pending_relu = (pre.name, out_name, rt, fmt)
        return pre.name

    def flush_relu(self, op: ir.Op) -> None:
        pending = getattr(self, "_pending_relu", None)
        if pending:
            pre, out, rt, fmt = pending
            self._layer(op, "relu", fmt, [pre], [out], cfg_type="mli_relu_cfg",
                        cfg={"relu_type": rt},
                        notes=["inserted: fused activation of the preceding kernel"])
            self._pending_relu = None

    # -- run --------------------------------------------------------------------------------
    def run(self) -> MliModel:
        problems = unsupported_ops(self.g, self.target, self.layout)
        if problems:
            raise UnsupportedError(f"{len(problems)} op(s) cannot be lowered for MLI "
                                   f"{self.target}: " + "; ".join(problems))
        self._check_kernels()
        self._check_ranges()
        for op in self.g.ops:
            try:
                self._lower_op(op)
            except MlitoolError as exc:
                if op.label in exc.message:
                    raise
                raise type(exc)(f"{op.label}: {exc.message}", exc.path) from exc
        unused = [k for k in self.overrides if k not in self.used_overrides]
        if unused:
            self.warnings.append(f"overrides matched no layer: {unused}")
        sats = sum(1 for t in self.tensors.values() if any("saturated" in n for n in t.notes))
        if sats:
            self.warnings.append(f"{sats} constant tensor(s) saturated when requantized "
                                 "(see the tensors' notes)")
        inputs = [self.primary[i] for i in self.g.inputs if i in self.primary]
        outputs = [self.primary[i] for i in self.g.outputs if i in self.primary]
        return MliModel(source=self.source, target=self.target, format=self.fmt,
                        layout=self.layout, tensors=self.tensors, layers=self.layers,
                        inputs=inputs, outputs=outputs, warnings=self.warnings)

    def _check_kernels(self) -> None:
        bad = []
        for op in self.g.ops:
            kind = layer_kind(self.g, op)
            fmt = self.layer_format(op)
            if K.kernel_name(kind, fmt, self.target, self.layout) is None:
                bad.append(str(self._no_kernel(op, kind, fmt)))
        if bad:
            raise UnsupportedError("; ".join(bad))

    def _check_ranges(self) -> None:
        if self.weights_only:
            return
        missing = []
        for op in self.g.ops:
            if op.type in ("QUANTIZE", "DEQUANTIZE"):
                continue
            for i in list(op.inputs) + list(op.outputs):
                t = self.g.tensor(i)
                if t is None or t.data is not None or t.dtype != "float32":
                    continue
                if i not in self.ranges and i not in missing:
                    missing.append(i)
        if missing:
            names = ", ".join(f"{i} ({self.g.tensors[i].name})" for i in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise OptionError(f"float activations need value ranges to be quantized: tensors "
                              f"{names}{more}; calibrate (--calibration) or convert weights only "
                              "(--weights-only)")

    def _lower_op(self, op: ir.Op) -> None:
        t = op.type
        fmt = self.layer_format(op)
        if t in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            return self._mac(op, fmt)
        if t in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN"):
            return self._pool(op, fmt)
        if t in _ELTWISE:
            return self._eltwise(op, fmt)
        if t in _RELU_OPS:
            return self._relu(op, fmt)
        if t in _LUT_KINDS:
            return self._lut(op, fmt)
        return getattr(self, "_" + t.lower())(op, fmt)

    # -- MAC layers -------------------------------------------------------------------------
    def _weights_layout(self, op: ir.Op, kind: str, w: np.ndarray) -> tuple[np.ndarray, str]:
        if self.target == "2.0":
            if kind == "conv2d":
                return np.ascontiguousarray(w.transpose(1, 2, 3, 0)), "HWCN"
            if kind in ("depthwise_conv2d", "group_conv2d"):
                return np.ascontiguousarray(w.reshape(w.shape[1], w.shape[2], 1, w.shape[3])), \
                    "HW1N" if kind == "depthwise_conv2d" else "HWCN"
            return np.ascontiguousarray(w.T), "NM"
        if kind == "conv2d":
            if self.layout == "chw":
                return np.ascontiguousarray(w.transpose(0, 3, 1, 2)), "NCHW"
            return np.ascontiguousarray(w), "NHWC"
        if kind == "depthwise_conv2d":
            if self.layout == "chw":
                return np.ascontiguousarray(w.transpose(3, 0, 1, 2)), "N1HW"
            return np.ascontiguousarray(w), "1HWN"
        return np.ascontiguousarray(w), "MN"

    def _mac(self, op: ir.Op, fmt: str) -> None:
        g = self.g
        kind = layer_kind(g, op)
        el_a, el_w, el_b = FORMATS[fmt]
        x_idx, w_idx = op.inputs[0], op.inputs[1]
        pad_op = self.fused_pads.get(op.index, (None, None))[0]
        if pad_op is not None:
            x_idx = pad_op.inputs[0]
        b_idx = op.inputs[2] if len(op.inputs) > 2 else -1
        wt, bt = g.tensors[w_idx], g.tensor(b_idx)
        x_name = self.use(op, x_idx, el_a)
        rows_fc = op.type == "FULLY_CONNECTED" and kind == "conv2d"
        if rows_fc:
            rows = fc_rows(g, op)
            x_name = self._dense_view(op, fmt, x_name, (rows, 1, int(wt.shape[1])),
                                      "fully connected rows as an HWC map for a 1x1 conv2d")
        x = self.tensors[x_name]
        out = self.produce(op.outputs[0], el_a)
        notes: list[str] = []
        cout = wt.shape[0] if op.type != "DEPTHWISE_CONV_2D" else wt.shape[3]
        w_axis_tfl = 3 if op.type == "DEPTHWISE_CONV_2D" else 0
        # depthwise over one input channel = conv: (1, Kh, Kw, Cout) -> OHWI (Cout, Kh, Kw, 1)
        as_conv = op.type == "DEPTHWISE_CONV_2D" and kind == "conv2d"
        to_ohwi = (lambda a: np.ascontiguousarray(a.transpose(3, 1, 2, 0))) if as_conv \
            else (lambda a: a)
        if as_conv:
            notes.append("depthwise convolution of a single input channel lowered as conv2d")
        if rows_fc:        # (M, N) -> OHWI (M, 1, 1, N): same products and sums per row
            to_ohwi = lambda a: a.reshape(a.shape[0], 1, 1, a.shape[1])  # noqa: E731
            notes.append(f"fully connected over {rows} rows lowered as a 1x1 conv2d over a "
                         f"({rows}, 1, {wt.shape[1]}) view (mli_krn_fully_connected takes one "
                         "row)")
        dim = Q.mli_quant_dim("CONV_2D" if as_conv or rows_fc else op.type, self.target,
                              self.layout)
        k_macs = self._macs(op, kind)

        if el_w == ElType.SA8:
            w_q, w_scale, per_axis = self._sa8_weights(wt, w_axis_tfl)
            b_q, b_float_scale = self._sa32_bias(bt, x_idx, w_scale, cout)
            w_data, lay = self._weights_layout(op, kind, to_ohwi(w_q))
            wm = MliTensor(name=self._base(w_idx), role=Role.WEIGHTS, shape=w_data.shape,
                           el_type=ElType.SA8, layout=lay, data=w_data, source=wt.name,
                           source_index=w_idx)
            bm = MliTensor(name=bt.name if bt is not None else f"{out.name}_bias",
                           role=Role.BIAS, shape=(cout,), el_type=ElType.SA32, layout="N",
                           data=b_q, source=bt.name if bt is not None else None,
                           source_index=b_idx if b_idx >= 0 else None)
            self._sa_weight_params(wm, bm, x, w_scale, b_float_scale, per_axis, dim)
            if bt is None:
                bm.notes.append("the model has no bias: zeros")
        else:
            w_max, w_fx_of = self._fx_weights(wt, el_w.bits, to_ohwi)
            b_real = (self._real_bias(bt, x_idx, wt, w_axis_tfl) if bt is not None
                      else np.zeros(cout))
            w_frac = Q.fx_frac_bits(w_max, el_w.bits)
            deficit = Q.mac_headroom_deficit(k_macs, el_a.bits, el_w.bits, Q.acc_bits_of(fmt))
            if deficit:
                w_frac -= deficit
                notes.append(f"{k_macs} MACs per output: weights frac bits lowered by {deficit} "
                             "for accumulator headroom")
            # MLI adds the bias shifted to the accumulator's frac bits (in + w) as an int32 (the
            # 2.0.2 reference truncates it, fx16_fx8_fx8 saturates it): keep it inside 31 bits.
            b_max = float(np.max(np.abs(b_real), initial=0.0))
            if b_max > 0:
                over = x.frac_bits + w_frac - (Q.fx_frac_bits(b_max, 32) - 1)
                if over > 0:
                    w_frac -= over
                    notes.append(f"weights frac bits lowered by {over} so the bias fits the "
                                 "32-bit bias term at the accumulator's frac bits")
            limit = x.frac_bits + w_frac
            b_frac = min(Q.fx_frac_bits(np.max(np.abs(b_real), initial=0.0), el_b.bits), limit)
            if out.frac_bits > limit:
                notes.append(f"output frac bits lowered from {out.frac_bits} to {limit} "
                             "(MLI: out_frac <= in_frac + w_frac)")
                out.frac_bits = limit
            w_fx, w_sat = w_fx_of(w_frac)
            b_fx, b_sat = Q.fx_quantize(b_real, b_frac, el_b.bits)
            w_data, lay = self._weights_layout(op, kind, w_fx)
            wm = MliTensor(name=self._base(w_idx), role=Role.WEIGHTS, shape=w_data.shape,
                           el_type=el_w, layout=lay, data=w_data, frac_bits=w_frac,
                           source=wt.name, source_index=w_idx)
            bm = MliTensor(name=bt.name if bt is not None else f"{out.name}_bias",
                           role=Role.BIAS, shape=(cout,), el_type=el_b, layout="N", data=b_fx,
                           frac_bits=b_frac, source=bt.name if bt is not None else None,
                           source_index=b_idx if b_idx >= 0 else None)
            for tm, n in ((wm, w_sat), (bm, b_sat)):
                if n:
                    tm.notes.append(f"{n} of {tm.size} values saturated at frac bits "
                                    f"{tm.frac_bits}")
        self._add(wm)
        self._add(bm)

        has_cfg_relu = not (kind == "fully_connected" and self.target != "2.0")
        kout = out.name if has_cfg_relu else self.separate_relu(op, fmt, out.name)
        if kind == "fully_connected":
            cfg_type, cfg = ("mli_fully_connected_cfg", {"relu_type": self.relu_type(op, out)}) \
                if self.target == "2.0" else (None, {})
        elif rows_fc:
            cfg_type, cfg = "mli_conv2d_cfg", self._pointwise_cfg(op, out)
            kout = self._hwc_output(out, (rows, 1, cout))
        else:
            cfg_type, cfg = "mli_conv2d_cfg", self._conv_cfg(op, x, out, wt)
            if pad_op is not None:
                total = self.fused_pads[op.index][1]
                cfg.update(padding_top=total[0], padding_bottom=total[1],
                           padding_left=total[2], padding_right=total[3])
                notes.append(f"takes the padding of {pad_op.label} (MLI pads convolutions "
                             "with real zero, as PAD does): no copy")
        self._layer(op, kind, fmt, [x_name], [kout], weights=wm.name, bias=bm.name,
                    cfg_type=cfg_type, cfg=cfg, notes=notes)
        self.flush_relu(op)
        if rows_fc:
            self._view_layer(op, kout, out.name, f"conv2d rows to {list(out.shape)}")

    def _sa8_weights(self, wt: ir.Tensor, axis: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """(int8 data, float scales, per_axis) of the weights: the model's own for int8 weights,
        else symmetric per-channel quantization of the float weights."""
        if wt.dtype == "int8" and wt.quant is not None:
            if np.any(wt.quant.zero_point != 0):
                raise UnsupportedError(f"weights {wt.name!r} have a non-zero zero point")
            return np.asarray(wt.data, dtype=np.int8), np.asarray(wt.quant.scale), \
                wt.quant.per_axis
        w = self._real(wt, axis)
        per_axis = len(wt.shape) == 4
        scales = Q.symmetric_scales(w, axis if per_axis else None).astype(np.float32)
        q, _ = Q.int_quantize(w, scales, np.zeros_like(scales), 8, axis if per_axis else None)
        return q, scales.astype(np.float64), per_axis

    def _sa32_bias(self, bt, x_idx, w_scale, cout) -> tuple[np.ndarray, np.ndarray]:
        """(int32 bias data, float32 bias scales)."""
        in_scale = self._sa_params(x_idx)
        in_s = np.float32(in_scale[0] if in_scale else 1.0)
        prod = (in_s * np.asarray(w_scale, dtype=np.float32)).astype(np.float64)
        if bt is None:
            return np.zeros(cout, np.int32), np.broadcast_to(prod, (cout,)) if prod.size > 1 \
                else prod
        if bt.dtype == "int32" and bt.quant is not None:
            return np.asarray(bt.data, dtype=np.int32), np.asarray(bt.quant.scale)
        b = np.asarray(bt.data, dtype=np.float64)
        q, _ = Q.int_quantize(b, np.broadcast_to(prod, b.shape), np.zeros(b.shape), 32)
        return q.astype(np.int32), prod

    def _sa_weight_params(self, wm, bm, x, w_scale, b_float_scale, per_axis, dim) -> None:
        n = len(w_scale) if per_axis else 1
        if self.target == "2.0":
            w16, wf = Q.encode_scale_mli2(w_scale)
            over = Q.mli2_scale_overflows(w_scale)
            if np.any(over):
                wm.notes.append(f"{int(over.sum())} scale(s) round to 32768: encoded as 16384 "
                                "with one frac bit less")
            b16, bf = Q.bias_scale_mli2(int(x.scale[0]), int(x.scale_frac_bits[0]), w16, wf,
                                        b_float_scale if per_axis else b_float_scale[:1])
            wm.scale, wm.scale_frac_bits = w16, wf
            bm.scale, bm.scale_frac_bits = b16, bf
        else:
            wm.scale, f = Q.encode_scale_mli11(w_scale, per_axis)
            wm.scale_frac_bits = np.array([f], np.int8)
            bm.scale, fb = Q.encode_scale_mli11(b_float_scale if per_axis else
                                                b_float_scale[:1], per_axis)
            bm.scale_frac_bits = np.array([fb], np.int8)
        wm.zero_point = np.zeros(n, np.int16)
        bm.zero_point = np.zeros(n, np.int16)
        wm.dim = dim if per_axis else -1
        bm.dim = 0 if per_axis else -1

    def _fx_weights(self, wt: ir.Tensor, bits: int, to_ohwi):
        """(max |real weight|, frac -> (FX weights in OHWI, saturated count)).

        8-bit quantized weights go through per-channel tables (quant.py): the same numbers as
        dequantizing the whole tensor to float64, without that memory and time."""
        data = np.asarray(wt.data)
        if wt.quant is not None and Q.lut_applies(data, wt.quant.scale, wt.quant.axis):
            args = (data, wt.quant.scale, wt.quant.zero_point, wt.quant.axis)

            def from_table(frac: int) -> tuple[np.ndarray, int]:
                q, n_sat = Q.fx_requantize_8bit(*args, frac, bits)
                return to_ohwi(q), n_sat

            return Q.dequantized_abs_max(*args), from_table
        w_real = to_ohwi(self._real(wt))
        return np.max(np.abs(w_real), initial=0.0), lambda frac: Q.fx_quantize(w_real, frac, bits)

    def _real(self, t: ir.Tensor, axis: int | None = None) -> np.ndarray:
        data = np.asarray(t.data)
        if t.quant is not None and data.dtype.kind in "iu":
            return t.quant.dequantize(data)
        return data.astype(np.float64)

    def _real_bias(self, bt: ir.Tensor, x_idx: int, wt: ir.Tensor, w_axis: int) -> np.ndarray:
        data = np.asarray(bt.data)
        if bt.quant is not None and data.dtype.kind in "iu":
            return bt.quant.dequantize(data)
        if data.dtype.kind in "iu":          # int32 bias without its own scale: in * w
            p = self._sa_params(x_idx)
            return data * (p[0] if p else 1.0) * np.asarray(wt.quant.scale)
        return data.astype(np.float64)

    def _macs(self, op: ir.Op, kind: str) -> int:
        w = self.g.tensors[op.inputs[1]].shape
        if kind == "fully_connected" or op.type == "FULLY_CONNECTED":
            return int(w[1])
        if op.type == "CONV_2D":
            return int(w[1] * w[2] * w[3])
        return int(w[1] * w[2])                 # depthwise / group / conv from depthwise: 1 input

    def _pointwise_cfg(self, op: ir.Op, out: MliTensor) -> dict:
        """A 1x1 conv2d: stride 1, no padding (multi-row fully connected)."""
        cfg = {"relu_type": self.relu_type(op, out), "stride_width": 1, "stride_height": 1,
               "padding_left": 0, "padding_right": 0, "padding_top": 0, "padding_bottom": 0}
        if self.target == "2.0":
            cfg.update(dilation_width=1, dilation_height=1)
        return cfg

    def _hwc_output(self, out: MliTensor, shape: tuple[int, ...]) -> str:
        """A tensor a kernel writes in `shape` that a view layer then shows as `out`."""
        t = dataclasses.replace(out, name=f"{out.name}_hwc", role=Role.ACTIVATION, shape=shape,
                                layout="HWC" if len(shape) == 3 else "", mem_stride=None,
                                notes=[f"kernel output; '{out.name}' is a view of it"])
        t.__post_init__()
        return self._add(t)

    def _dense(self, op: ir.Op, fmt: str, src: MliTensor, why: str) -> MliTensor:
        """`src` itself when it is dense, else a contiguous copy of it (mli_mov)."""
        if V.is_dense(src):
            return src
        dense = dataclasses.replace(src, name=f"{src.name}_dense", role=Role.ACTIVATION,
                                    mem_stride=None, buffer=None, offset=0, capacity=None,
                                    notes=["dense copy of a strided view"])
        dense.__post_init__()
        self._add(dense)
        self._mov(op, fmt, src.name, dense.name, [0] * src.rank, src.shape, [1] * src.rank, why)
        return dense

    def _dense_view(self, op: ir.Op, fmt: str, src_name: str, shape: tuple[int, ...],
                    why: str) -> str:
        """`src` seen in `shape` (same elements, row-major): a view layer, after a dense copy
        (mli_mov) when `src` is itself a strided view."""
        src = self._dense(op, fmt, self.tensors[src_name],
                          f"{why}: a view of a strided tensor needs a contiguous one")
        if tuple(shape) == src.shape:
            return src.name
        t = dataclasses.replace(src, name=f"{src.name}_as_{'x'.join(map(str, shape))}",
                                role=Role.ACTIVATION, shape=tuple(shape), mem_stride=None,
                                layout="HWC" if len(shape) == 3 else "", notes=[why])
        t.__post_init__()
        self._add(t)
        self._view_layer(op, src.name, t.name, why)
        return t.name

    def _conv_cfg(self, op: ir.Op, x: MliTensor, out: MliTensor, wt: ir.Tensor) -> dict:
        o = op.options
        in_shape = self.g.tensors[op.inputs[0]].shape
        kh, kw = wt.shape[1], wt.shape[2]
        dh, dw = o.get("dilation_h", 1), o.get("dilation_w", 1)
        sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
        _, pt, pb = tflite_padding(o.get("padding", "VALID"), in_shape[1], kh, sh, dh)
        _, pl, pr = tflite_padding(o.get("padding", "VALID"), in_shape[2], kw, sw, dw)
        cfg = {"relu_type": self.relu_type(op, out), "stride_width": sw, "stride_height": sh,
               "padding_left": pl, "padding_right": pr, "padding_top": pt, "padding_bottom": pb}
        if self.target == "2.0":
            cfg.update(dilation_width=dw, dilation_height=dh)
        return cfg

    # -- pooling ----------------------------------------------------------------------------
    def _pool(self, op: ir.Op, fmt: str) -> None:
        kind = layer_kind(self.g, op)
        el = _act_el(fmt)
        x_name = self.use(op, op.inputs[0], el)
        x = self.tensors[x_name]
        in_shape = self.g.tensors[op.inputs[0]].shape
        notes: list[str] = []
        if op.type == "MEAN":
            kh, kw, sh, sw, pad = in_shape[1], in_shape[2], 1, 1, "VALID"
            notes.append("MEAN over H, W lowered as average pooling over the whole map")
        else:
            o = op.options
            kh, kw, sh, sw = o["filter_h"], o["filter_w"], o["stride_h"], o["stride_w"]
            pad = o.get("padding", "VALID")
        oh, pt, pb = tflite_padding(pad, in_shape[1], kh, sh)
        ow, pl, pr = tflite_padding(pad, in_shape[2], kw, sw)
        geo = []
        for axis, (n, k, s, b, a, o_) in (("height", (in_shape[1], kh, sh, pt, pb, oh)),
                                          ("width", (in_shape[2], kw, sw, pl, pr, ow))):
            safe = safe_pool_axis(n, k, s, b, a, o_)
            if safe is None:
                raise UnsupportedError(
                    f"{op.label}: pooling window {k} over {n} input {axis} with padding {b}/{a} "
                    "makes MLI 2.0.2 write outside its output buffer, and no equivalent safe "
                    "configuration exists")
            if safe != (k, s, b, a):
                notes.append(f"{axis}: window {k}, stride {s}, padding {b}/{a} would make MLI "
                             f"write outside its output (min padding < kernel - in - 1); lowered "
                             f"as the equivalent window {safe[0]}, stride {safe[1]}, padding "
                             f"{safe[2]}/{safe[3]}")
            geo.append(safe)
        (kh, sh, pt, pb), (kw, sw, pl, pr) = geo
        out_idx = op.outputs[0]
        pool_out_shape = (1, oh, ow, in_shape[3])
        needs_view = op.type == "MEAN" and tuple(self.g.tensors[out_idx].shape) != pool_out_shape
        leaves = self.copy_params(x) if kind == "maxpool" else None
        if needs_view:
            kout, pending = self._pool_to_view(op, out_idx, el, pool_out_shape, leaves)
        else:
            kout, pending = self.kernel_output(op, out_idx, el, leaves)
        kout2 = self.separate_relu(op, fmt, kout) if op.options.get(
            "fused_activation", "NONE") != "NONE" else kout
        cfg = {"kernel_width": kw, "kernel_height": kh, "stride_width": sw, "stride_height": sh,
               "padding_left": pl, "padding_right": pr, "padding_top": pt, "padding_bottom": pb}
        self._layer(op, kind, fmt, [x_name], [kout2], cfg_type="mli_pool_cfg", cfg=cfg,
                    notes=notes)
        self.flush_relu(op)
        self.finish(op, pending, "maxpool copies its input's parameters")
        if needs_view:
            self._view_layer(op, kout, self.primary[out_idx], "MEAN output shape")

    def _pool_to_view(self, op, out_idx, el, pool_shape, leaves):
        """MEAN without keep_dims: pool into an HWC tensor, then view it in the model's shape."""
        final = self.produce(out_idx, el)
        t = dataclasses.replace(final, name=f"{final.name}_hwc", role=Role.ACTIVATION,
                                shape=self.mli_shape(pool_shape), mem_stride=None, notes=[])
        t.__post_init__()
        self._add(t)
        final.buffer = t.name
        return t.name, []

    def _view_layer(self, op: ir.Op, src: str, dst: str, why: str) -> None:
        s, d = self.tensors[src], self.tensors[dst]
        d.buffer = s.buffer or s.name
        d.offset = s.offset
        self.layers.append(MliLayer(index=op.index, op_type=op.type, kind="view", kernel="",
                                    inputs=[src], outputs=[dst],
                                    notes=[f"view: {why}; no call, shares {d.buffer}'s memory"]))

    # -- element-wise and activations ---------------------------------------------------------
    def _operand(self, op: ir.Op, idx: int, el: ElType) -> str:
        t = self.g.tensors[idx]
        if t.data is None:
            return self.use(op, idx, el)
        real = self._real(t)
        full = tuple(self.g.tensors[op.outputs[0]].shape)
        broadcast = t.size > 1 and tuple(t.shape) != full
        if broadcast:
            uniform = bool(np.all(np.asarray(t.data) == np.asarray(t.data).reshape(-1)[0]))
            real = real.reshape(-1)[:1].reshape(()) if uniform else np.broadcast_to(real, full)
        shape = self.mli_shape(real.shape) if real.size > 1 else ()
        m = MliTensor(name=self._base(idx), role=Role.PARAM, shape=shape, el_type=el,
                      source=t.name, source_index=idx)
        data = self._encode_param(m, t, real, el, lambda: np.asarray(t.data, np.int8))
        if broadcast:
            data = np.asarray(data)
            data = (data.reshape(-1)[:1].reshape(()) if real.ndim == 0
                    else np.broadcast_to(data, full))
        if self.layout == "chw" and data.ndim == 4:
            data = data.transpose(0, 3, 1, 2)
        m.data = np.ascontiguousarray(np.asarray(data).reshape(shape)).reshape(shape)
        if broadcast:
            m.notes.append(f"constant {list(t.shape)} broadcast over {list(full)}: " + (
                "all values equal, passed as a scalar" if m.data.size == 1 else
                f"materialized at the output's shape (MLI eltwise takes equal shapes or a "
                f"scalar): {m.nbytes} bytes of ROM instead of {t.size * el.dtype.itemsize}"))
        return self._add(m)

    def _eltwise(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        ins = [self._operand(op, i, el) for i in op.inputs[:2]]
        out, pending = self.kernel_output(op, op.outputs[0], el)
        kout = self.separate_relu(op, fmt, out)
        self._layer(op, layer_kind(self.g, op), fmt, ins, [kout])
        self.flush_relu(op)

    def _relu(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        kout, pending = self.kernel_output(op, op.outputs[0], el, self.copy_params(
            self.tensors[x]))
        self._layer(op, "relu", fmt, [x], [kout], cfg_type="mli_relu_cfg",
                    cfg={"relu_type": _RELU_OPS[op.type]})
        self.finish(op, pending, "relu copies its input's parameters")

    def _scalar_param(self, name: str, value: float, like: MliTensor, idx=None) -> str:
        """A rank-0 constant (slope, epsilon) in `like`'s element type."""
        el = like.el_type
        m = MliTensor(name=name, role=Role.PARAM, shape=(), el_type=el, source_index=idx)
        if el == ElType.SA8:
            scale = abs(value) / 127 if value != 0 else 1 / 128
            q, _ = Q.int_quantize(np.array(value), scale, 0, 8)
            self._set_sa(m, scale, 0)
        else:
            m.frac_bits = Q.fx_frac_bits(abs(value), el.bits)
            q, _ = Q.fx_quantize(np.array(value), m.frac_bits, el.bits)
        m.data = np.asarray(q).reshape(())
        return self._add(m)

    def _leaky_relu(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        alpha = float(op.options.get("alpha", 0.2))
        slope = self._scalar_param(f"{self._base(op.outputs[0])}_slope", alpha, self.tensors[x])
        out, _ = self.kernel_output(op, op.outputs[0], el)
        self._layer(op, "leaky_relu", fmt, [x], [out], params={"slope": slope},
                    notes=[f"slope {alpha} as a rank-0 constant"])

    def _prelu(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        xt = self.tensors[x]
        at = self.g.tensors[op.inputs[1]]
        in_rank = len(self.g.tensors[op.inputs[0]].shape)
        real = self._real(at).reshape((1,) * (in_rank - len(at.shape)) + tuple(at.shape))
        mshape = self.mli_shape(real.shape)
        real = real.reshape(real.shape[1:]) if in_rank >= 2 else real
        if self.layout == "chw" and real.ndim == 3:
            real = real.transpose(2, 0, 1)
        non1 = [i for i, d in enumerate(mshape) if d > 1]
        axis = non1[0] if non1 else -1
        m = MliTensor(name=self._base(op.inputs[1]), role=Role.PARAM,
                      shape=mshape if non1 else (), el_type=el, source=at.name,
                      source_index=op.inputs[1])
        def own_int8() -> np.ndarray:
            data = np.asarray(at.data, np.int8).reshape(real.shape)
            return data.transpose(2, 0, 1) if self.layout == "chw" and data.ndim == 3 else data

        data = self._encode_param(m, at, real, el, own_int8)
        m.data = np.ascontiguousarray(np.asarray(data).reshape(m.shape))
        slope = self._add(m)
        out, _ = self.kernel_output(op, op.outputs[0], el)
        self._layer(op, "prelu", fmt, [x], [out], params={"slope": slope},
                    cfg_type="mli_prelu_cfg", cfg={"axis": axis})

    def _encode_param(self, m: MliTensor, t: ir.Tensor, real: np.ndarray, el: ElType,
                      own_int8) -> np.ndarray:
        """Encode a constant operand (eltwise constant, PReLU slope) into `m`'s element type. An
        int8 per-tensor model constant keeps its own values (`own_int8()`, already in m's layout)
        and parameters; anything else is quantized from its real values."""
        if el == ElType.SA8:
            if t.dtype == "int8" and t.quant is not None and not t.quant.per_axis:
                self._set_sa(m, float(t.quant.scale[0]), int(t.quant.zero_point[0]))
                return own_int8()
            scale, zp = Q.sa8_params_from_range(real.min(), real.max())
            data, _ = Q.int_quantize(real, scale, zp, 8)
            self._set_sa(m, scale, zp)
            return data
        m.frac_bits = Q.fx_frac_bits(np.max(np.abs(real), initial=0.0), el.bits)
        data, saturated = Q.fx_quantize(real, m.frac_bits, el.bits)
        if saturated:
            m.notes.append(f"{saturated} values saturated")
        return data

    def _fixed_leaves(self, kind: str, el: ElType):
        def leaves(t: MliTensor) -> None:
            if el.is_fx:
                t.frac_bits = FIXED_FX_OUTPUT_FRAC
            else:
                zp, s, f = FIXED_SA8_OUTPUT[kind]
                t.zero_point = np.array([zp], np.int16)
                t.scale = np.array([s], t.scale.dtype if t.scale is not None else np.int16)
                t.scale_frac_bits = np.array([f], np.int8)
                t.dim = -1
        return leaves

    def _lut(self, op: ir.Op, fmt: str) -> None:
        kind = _LUT_KINDS[op.type]
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        kout, pending = self.kernel_output(op, op.outputs[0], el, self._fixed_leaves(kind, el))
        params, cfg_type, cfg = {}, None, {}
        mrank = len(self.tensors[x].shape)
        if kind in ("softmax", "l2_normalize") and self.target == "2.0":
            cfg_type = f"mli_{kind}_cfg"
            cfg = {"axis": self.mli_axis(-1, len(self.g.tensors[op.inputs[0]].shape))
                   if mrank > 1 else 0}
        if kind == "l2_normalize":
            params["epsilon"] = self._epsilon(op, self.tensors[x])
        self._layer(op, kind, fmt, [x], [kout], params=params, cfg_type=cfg_type, cfg=cfg,
                    notes=[f"{kind} writes fixed output parameters into its output tensor"])
        self.finish(op, pending, f"{kind} writes fixed output parameters")

    def _epsilon(self, op: ir.Op, x: MliTensor) -> str:
        """l2_normalize epsilon: a rank-0 tensor with the input's parameters holding one LSB
        above the input's zero (the smallest positive value), keeping the root away from 0."""
        m = MliTensor(name=f"{self._base(op.outputs[0])}_epsilon", role=Role.PARAM, shape=(),
                      el_type=x.el_type, frac_bits=x.frac_bits)
        if x.el_type.is_sa:
            m.zero_point, m.scale = x.zero_point.copy(), x.scale.copy()
            m.scale_frac_bits, m.dim = x.scale_frac_bits.copy(), -1
            m.data = np.array(min(int(x.zero_point[0]) + 1, 127), np.int8).reshape(())
        else:
            m.data = np.array(1, x.el_type.dtype).reshape(())
        m.notes.append("epsilon: one LSB of the input")
        return self._add(m)

    def _arg_max(self, op: ir.Op, fmt: str) -> None:
        """mli_krn_argmax reports the memory offset of each maximum from the tensor start.
        One row (the axis is the only non-unit dimension): a dense input makes that the index.
        Several rows: the input is viewed as (rows, size), argmax along axis 0 (top 1) writes
        each row's offset i * size + index; a view of that buffer with per-row zero points
        i * size (SA32, scale 1) and mli_hlp_convert_tensor into a per-tensor SA32 tensor
        subtract the row starts exactly."""
        el = _act_el(fmt)
        rows, size = argmax_rows(self.g, op)
        x = self.use(op, op.inputs[0], el)
        x = self._dense_view(op, fmt, x, (rows, size) if rows > 1 else self.tensors[x].shape,
                             "argmax offsets are indices only in a contiguous tensor")
        out_idx = op.outputs[0]
        src = self.g.tensors[out_idx]
        shape = (1, 1) if rows == 1 else self.mli_shape(src.shape)
        out = self._sa32_index_tensor(self._base(out_idx), shape, out_idx)
        out.role = Role.OUTPUT if out_idx in self.g.outputs else Role.ACTIVATION
        if src.dtype != "int32":
            out.notes.append(f"MLI writes int32 indices; the model's output is {src.dtype}")
        self.primary[out_idx] = self._add(out)
        ties = "of equal maxima MLI returns the last index, TFLite the first"
        if rows == 1:
            self._layer(op, "argmax", fmt, [x], [out.name], cfg_type="mli_argmax_cfg",
                        cfg={"axis": -1, "topk": 1}, notes=[ties])
            return
        offs = self._sa32_index_tensor(f"{out.name}_offsets", (rows, 1), out_idx)
        offs.notes.append("argmax output: offsets from the input's start (row * size + index)")
        self._add(offs)
        self._layer(op, "argmax", fmt, [x], [offs.name], cfg_type="mli_argmax_cfg",
                    cfg={"axis": 0, "topk": 1},
                    notes=[f"argmax over {rows} rows of {size}: one top-1 per row along axis 0",
                           ties])
        rel = self._sa32_index_tensor(f"{out.name}_rows", (rows,), out_idx)
        rel.zero_point = (np.arange(rows, dtype=np.int64) * size).astype(np.int16)
        rel.scale, rel.scale_frac_bits = np.ones(rows, np.int16), np.zeros(rows, np.int8)
        rel.dim = 0
        rel.notes.append("the offsets with zero point = each row's start: real value = index")
        self._add(rel)
        self._view_layer(op, offs.name, rel.name, "the same offsets with per-row zero points "
                         "(the argmax kernel resets its output's parameters)")
        dst = out.name
        if out.shape != (rows,):
            dst = self._add(dataclasses.replace(out, name=f"{out.name}_flat", shape=(rows,),
                                                role=Role.ACTIVATION, mem_stride=(1,),
                                                notes=[]))
        self._convert(op, rel.name, dst, "offsets minus row starts = indices (exact: SA32 to "
                      "SA32, scale 1)")
        if dst != out.name:
            self._view_layer(op, dst, out.name, f"indices in the model's shape {list(src.shape)}")

    def _sa32_index_tensor(self, name: str, shape: tuple[int, ...], idx: int) -> MliTensor:
        """An SA32 tensor of integer indices: per-tensor zero point 0, scale 1 (what argmax
        writes into its output's parameters)."""
        return MliTensor(name=name, role=Role.ACTIVATION, shape=shape, el_type=ElType.SA32,
                         source=self.g.tensors[idx].name, source_index=idx,
                         zero_point=np.zeros(1, np.int16), scale=np.ones(1, np.int16),
                         scale_frac_bits=np.zeros(1, np.int8), dim=-1)

    # -- data movement ----------------------------------------------------------------------
    def _transpose(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        perm = _axis_list(self.g, op)
        p = [a - 1 for a in perm[1:]] if len(perm) >= 2 else perm
        if self.layout == "chw" and len(p) == 3:
            c, cinv = (2, 0, 1), (1, 2, 0)
            p = [cinv[p[c[i]]] for i in range(3)]
        kout, pending = self.kernel_output(op, op.outputs[0], el, self.copy_params(
            self.tensors[x]))
        cfg = {f"perm_dim{i}": (p[i] if i < len(p) else 0) for i in range(4)}
        self._layer(op, "permute", fmt, [x], [kout], cfg_type="mli_permute_cfg", cfg=cfg)
        self.finish(op, pending, "permute copies its input's parameters")

    def _reshape(self, op: ir.Op, fmt: str) -> None:
        idx = op.inputs[0]
        if idx not in self.primary:
            self.use(op, idx, _act_el(fmt))
        src = self.tensors[self.primary[idx]]
        if self.layout == "chw" and len(src.shape) == 3 and src.shape[0] > 1 \
                and src.shape[1] * src.shape[2] > 1:
            src = self._chw_to_hwc(op, src, fmt)
        src = self._dense(op, fmt, src, f"{op.type} of a strided view needs a contiguous tensor")
        out_shape = self.mli_shape(self.g.tensors[op.outputs[0]].shape)
        if self.layout == "chw" and len(out_shape) == 3 and out_shape[0] > 1 \
                and out_shape[1] * out_shape[2] > 1 and out_shape != src.shape:
            raise UnsupportedError(f"{op.label}: a reshape into a multi-channel map has no CHW "
                                   "view; use --layout hwc")
        out = self.produce(op.outputs[0], src.el_type)
        self.copy_params(src)(out)
        self._view_layer(op, src.name, out.name, f"{op.type} to {list(out.shape)}")

    _squeeze = _reshape

    def _chw_to_hwc(self, op: ir.Op, src: MliTensor, fmt: str) -> MliTensor:
        c, h, w = src.shape
        t = dataclasses.replace(src, name=f"{src.name}_hwc", role=Role.ACTIVATION,
                                shape=(h, w, c), layout="HWC", mem_stride=None, notes=[])
        t.__post_init__()
        self._add(t)
        self._layer(op, "permute", fmt, [src.name], [t.name], cfg_type="mli_permute_cfg",
                    cfg={"perm_dim0": 1, "perm_dim1": 2, "perm_dim2": 0, "perm_dim3": 0},
                    notes=["inserted: CHW -> HWC so the flattening order matches TFLite's"])
        return t

    # -- slices and concatenation: views of one buffer where MLI can address them ----------
    def _consumer_needs_dense(self, idx: int, skip: ir.Op | None = None) -> str | None:
        """Why TFLite tensor `idx` must stay contiguous (a model output, or a consumer whose
        kernel needs it), or None."""
        if idx in self.g.outputs:
            return "model outputs are dense buffers the application reads"
        for c in self.g.consumers().get(idx, []):
            if c is skip or c.type in SLICE_OPS or c.type == "CONCATENATION":
                continue                       # views of strided tensors / mov copies are fine
            kind = layer_kind(self.g, c)
            if V.needs_dense_input(kind, self.target):
                return f"its consumer {c.label} ({kind}) needs a contiguous input"
        return None

    def _mov(self, op: ir.Op, fmt: str, src: str, dst: str, offset, size, step, why: str) -> None:
        kernel = K.kernel_name("copy", fmt, self.target, self.layout)
        if kernel is None:
            raise UnsupportedError(f"{op.label}: {why}; MLI {self.target} has no copy kernel "
                                   "(mli_mov_* is MLI 2.x" + (", --layout chw makes channel "
                                   "slices contiguous" if self.layout == "hwc" else "") + ")")
        self.layers.append(MliLayer(index=op.index, op_type=op.type, kind="copy", kernel=kernel,
                                    inputs=[src], outputs=[dst], cfg_type="mli_mov_cfg_t",
                                    cfg=V.mov_cfg(list(offset), list(size), list(step)),
                                    notes=[f"copy: {why}"]))

    def _slice_view(self, x: MliTensor, box: V.Box, tfl_rank: int, out_idx: int
                    ) -> tuple[MliTensor | None, str]:
        """A create_subtensor view of `x` for `box`, or (None, why not)."""
        if not box.unit_steps:
            return None, f"steps {list(box.step)}: a view cannot skip elements"
        want = self.mli_shape(self.g.tensors[out_idx].shape)
        off, size = self.mli_shape(box.begin), self.mli_shape(box.size)
        try:
            v = create_subtensor(x, off, size, len(want), name=self._base(out_idx))
        except SubtensorError as exc:
            return None, exc.message
        if v.shape != want:
            return None, (f"create_subtensor gives shape {list(v.shape)} (it drops leading "
                          f"size-1 axes), the model wants {list(want)}")
        if not V.is_dense(v):
            if self.target != "2.0":
                return None, f"a strided view, and MLI {self.target} kernels ignore mem_stride"
            why = self._consumer_needs_dense(out_idx)
            if why:
                return None, f"a strided view, and {why}"
        return v, ""

    def _slice_op(self, op: ir.Op, fmt: str) -> None:
        """SPLIT / SPLIT_V / SLICE / STRIDED_SLICE: each output a view of the input where MLI can
        address it, else a copy (mli_mov_tensor_sync)."""
        el = _act_el(fmt)
        x_idx, boxes = slice_boxes(self.g, op)
        x = self.tensors[self.use(op, x_idx, el)]
        tfl_rank = len(self.g.tensors[x_idx].shape)
        views, notes, copies = [], [], []
        for out_idx, box in zip(op.outputs, boxes):
            v, why = self._slice_view(x, box, tfl_rank, out_idx)
            if v is None:
                copies.append((out_idx, box, why))
                continue
            src = self.g.tensors[out_idx]
            v.role = Role.OUTPUT if out_idx in self.g.outputs else Role.ACTIVATION
            v.source, v.source_index = src.name, out_idx
            if not self.same_params(v, self._new_act(out_idx, el)):
                v.notes.append("carries its input's parameters (the data is not requantized); "
                               "the model gives this tensor other ones")
            self.primary[out_idx] = self._add(v)
            views.append(v.name)
            kind = "contiguous" if V.is_dense(v) else f"strided {list(v.mem_stride)}"
            notes.append(f"{v.name}: {kind} view of {v.buffer} at element {v.offset}")
        if views:
            self.layers.append(MliLayer(index=op.index, op_type=op.type, kind="view", kernel="",
                                        inputs=[x.name], outputs=views,
                                        notes=["view: no call; " + "; ".join(notes)]))
        for out_idx, box, why in copies:
            off, size, step = (self.mli_shape(v) for v in (box.begin, box.size, box.step))
            out = self.produce(out_idx, el)
            self.copy_params(x)(out)
            if out.shape == tuple(size):
                self._mov(op, fmt, x.name, out.name, off, size, step, why)
                continue
            # Shrunk axes: mov keeps the rank, a dense reshape view gives the model's shape.
            tmp = dataclasses.replace(out, name=f"{out.name}_box", role=Role.ACTIVATION,
                                      shape=tuple(size), mem_stride=None, notes=[])
            tmp.__post_init__()
            self._add(tmp)
            self._mov(op, fmt, x.name, tmp.name, off, size, step, why)
            self._view_layer(op, tmp.name, out.name, f"{op.type} drops size-1 axes")

    _split = _split_v = _slice = _strided_slice = _slice_op

    def _concat_piece(self, op: ir.Op, idx: int, t: MliTensor, cand: MliTensor,
                      seen: set) -> str | None:
        """Why input `t` of a concatenation cannot be written in place as view `cand` of the
        output buffer (None: it can)."""
        if t.name in seen:
            return "the same tensor is concatenated more than once"
        if t.role == Role.INPUT:
            return "a model input: the application owns its buffer"
        if t.buffer is not None:
            return f"it is already a view of '{t.buffer}'"
        if any(o.buffer == t.name for o in self.tensors.values()):
            return "other tensors are views of its memory"
        if not self.same_params(t, cand):
            return "its quantization differs from the output's"
        producer = next((lay for lay in reversed(self.layers) if t.name in lay.outputs), None)
        if producer is None or producer.kind == "view":
            return "no kernel writes it"
        if not V.is_dense(cand):
            if self.target != "2.0":
                return f"its slice is strided and MLI {self.target} kernels ignore mem_stride"
            if V.needs_dense_output(producer.kind, self.target):
                return f"its slice is strided and {producer.kernel} needs a contiguous output"
            why = self._consumer_needs_dense(idx, skip=op)
            if why:
                return f"its slice is strided and {why}"
        return None

    def _concatenation(self, op: ir.Op, fmt: str) -> None:
        """The output is one buffer; each input becomes a view of its slice that the producer
        writes in place, or is requantized (mli_hlp_convert_tensor) / copied (mli_mov) into
        it. A "view" layer (no call) then stands for the whole output."""
        el = _act_el(fmt)
        out = self.produce(op.outputs[0], el)
        ins = [self.use(op, i, el) for i in op.inputs]
        kout = self.tensors[self.separate_relu(op, fmt, out.name)]
        axis = self.mli_axis(int(op.options.get("axis", 0)),
                             len(self.g.tensors[op.outputs[0]].shape))
        plans, acc, seen = [], 0, set()
        for idx, name in zip(op.inputs, ins):
            t = self.tensors[name]
            off = [0] * kout.rank
            off[axis] = acc
            acc += t.shape[axis]
            try:
                cand = create_subtensor(kout, off, list(t.shape), kout.rank,
                                        name=f"{kout.name}_part{len(plans)}")
                why = self._concat_piece(op, idx, t, cand, seen)
            except SubtensorError as exc:
                cand, why = None, exc.message
            seen.add(name)
            plans.append((t, cand, why))
        if self.target != "2.0" and any(why for _, _, why in plans):
            return self._concat_kernel(op, fmt, out, kout.name, ins, axis)
        pieces, notes = [], []
        for k, (t, cand, why) in enumerate(plans):
            if why is None:
                t.buffer, t.offset, t.mem_stride, t.capacity = (
                    cand.buffer, cand.offset, cand.mem_stride, cand.capacity)
                t.notes.append(f"written in place into '{kout.name}' at element {cand.offset}")
                pieces.append(t.name)
                notes.append(f"input {k} '{t.name}': written in place by its producer")
                continue
            cand.role = Role.ACTIVATION
            cand.notes = [f"slice {k} of '{kout.name}'"]
            self._add(cand)
            if self.same_params(t, cand):
                self._mov(op, fmt, t.name, cand.name, [0] * t.rank, t.shape, [1] * t.rank, why)
                notes.append(f"input {k} '{t.name}': copied (mli_mov_tensor_sync): {why}")
            else:
                self._convert(op, t.name, cand.name, "concatenation inputs must carry the "
                              "output's parameters: requantized into its slice")
                notes.append(f"input {k} '{t.name}': requantized into its slice "
                             "(mli_hlp_convert_tensor)")
            pieces.append(cand.name)
        self.layers.append(MliLayer(index=op.index, op_type=op.type, kind="view", kernel="",
                                    inputs=pieces, outputs=[kout.name],
                                    notes=["view: no call; the inputs are slices of this buffer"]
                                    + notes))
        self.flush_relu(op)

    def _concat_kernel(self, op: ir.Op, fmt: str, out: MliTensor, kout: str, ins: list[str],
                       axis: int) -> None:
        """MLI 1.x concatenation kernel (the inputs carry the output's parameters)."""
        names = []
        for i, name in zip(op.inputs, ins):
            if not self.same_params(self.tensors[name], out):
                conv = dataclasses.replace(out, name=f"{self.tensors[name].name}_as_out",
                                           role=Role.ACTIVATION, shape=self.tensors[name].shape,
                                           mem_stride=None, notes=[], source_index=i,
                                           source=self.g.tensors[i].name)
                conv.__post_init__()
                self._add(conv)
                self._convert(op, name, conv.name, "concatenation inputs must carry the "
                                                   "output's parameters")
                name = conv.name
            names.append(name)
        self._layer(op, "concat", fmt, names, [kout], cfg_type="mli_concat_cfg",
                    cfg={"axis": axis, "tensors_num": len(names)},
                    notes=["not all inputs can be written in place (contiguous slices only "
                           f"on MLI {self.target})"])
        self.flush_relu(op)

    def _pad_value(self, op: ir.Op) -> int | None:
        """The int8 value a PAD / PADV2 of int8 data fills with (None: real zero)."""
        if op.type == "PADV2":
            v = np.asarray(_const_values(self.g, op.inputs[2])).reshape(-1)[0]
            if v.dtype.kind in "iu":
                return int(v)
        return None

    def _pad_fused_into(self, op: ir.Op) -> tuple[ir.Op, list[int]] | None:
        """(conv, [top, bottom, left, right] padding it then needs) when this PAD's only
        consumer is a convolution that can take the padding in its config: MLI convolutions
        treat their padding as real zero, which is what PAD fills."""
        out_idx = op.outputs[0]
        cons = self.g.consumers().get(out_idx, [])
        if self.target != "2.0" or out_idx in self.g.outputs or len(cons) != 1:
            return None
        conv = cons[0]
        if conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or conv.inputs[0] != out_idx \
                or out_idx in conv.inputs[1:]:
            return None
        zp = self.g.tensors[op.inputs[0]].quant
        value = self._pad_value(op)
        if value is not None and (zp is None or value != int(zp.zero_point[0])):
            return None                                    # not real zero
        pads = np.asarray(_const_values(self.g, op.inputs[1]), dtype=np.int64)
        o, wt = conv.options, self.g.tensors[conv.inputs[1]]
        padded = self.g.tensors[out_idx].shape
        total = []
        for axis, (k, s, d) in ((1, (wt.shape[1], o.get("stride_h", 1), o.get("dilation_h", 1))),
                                (2, (wt.shape[2], o.get("stride_w", 1), o.get("dilation_w", 1)))):
            _, before, after = tflite_padding(o.get("padding", "VALID"), padded[axis], k, s, d)
            eff = (k - 1) * d + 1
            pair = [int(pads[axis, 0]) + before, int(pads[axis, 1]) + after]
            if max(pair) >= eff:                   # MLI: padding smaller than the kernel
                return None
            total += pair
        return conv, total

    def _pad(self, op: ir.Op, fmt: str) -> None:
        fused = self._pad_fused_into(op)
        if fused is not None:
            conv, total = fused
            self.fused_pads[conv.index] = (op, total)
            return
        el = _act_el(fmt)
        x = self.use(op, op.inputs[0], el)
        xt = self.tensors[x]
        value = self._pad_value(op)
        pads = np.asarray(_const_values(self.g, op.inputs[1]), dtype=np.int64)
        cfg = {"padding_left": int(pads[2, 0]), "padding_right": int(pads[2, 1]),
               "padding_top": int(pads[1, 0]), "padding_bottom": int(pads[1, 1])}
        cfg_type = "mli_mov_cfg_t" if self.target == "2.0" else "mli_padding2d_cfg"
        if el.is_sa:
            fill = int(xt.zero_point[0]) if value is None else value    # raw SA8 pad value
            if fill != 0:
                return self._pad_wide(op, fmt, x, fill, cfg_type, cfg)
        elif value is not None and value != int(self.g.tensors[op.inputs[0]].quant.zero_point[0]):
            raise UnsupportedError(f"{op.label}: PADV2 value {value} is not real zero, and MLI "
                                   f"{fmt} padding fills zeros; use --format sa8 for this layer")
        kout, pending = self.kernel_output(op, op.outputs[0], el, self.copy_params(xt))
        self._layer(op, "padding", fmt, [x], [kout], cfg_type=cfg_type, cfg=cfg)
        self.finish(op, pending, "padding copies its input's parameters")

    def _pad_wide(self, op: ir.Op, fmt: str, x: str, fill: int, cfg_type: str, cfg: dict
                  ) -> None:
        """SA8 padding with `fill` != raw 0: MLI's copy pads raw zeros. Through SA32 with the
        same scale and zero point zp - fill, raw 0 stands for `fill`; both converts only add
        integers (scale ratio 1), so the result is exact."""
        if self.target != "2.0":
            raise UnsupportedError(f"{op.label}: SA8 padding with raw value {fill} (not 0) "
                                   "needs MLI 2.x (SA32 copies)")
        xt = self.tensors[x]
        zp32 = int(xt.zero_point[0]) - fill

        def wide(name: str, shape, why: str) -> MliTensor:
            t = dataclasses.replace(xt, name=name, role=Role.ACTIVATION, shape=tuple(shape),
                                    el_type=ElType.SA32, layout="HWC", mem_stride=None,
                                    buffer=None, offset=0, capacity=None,
                                    zero_point=np.array([zp32], np.int16), notes=[why])
            t.__post_init__()
            self._add(t)
            return t

        out_shape = self.mli_shape(self.g.tensors[op.outputs[0]].shape)
        src = wide(f"{xt.name}_sa32", xt.shape, f"SA32 copy of '{xt.name}' in which raw 0 is "
                   f"the pad value {fill}")
        dst = wide(f"{self._base(op.outputs[0])}_sa32", out_shape, "padded in SA32")
        out = self.produce(op.outputs[0], ElType.SA8)
        extra = (src.size + dst.size) * 4
        note = (f"zero point {int(xt.zero_point[0])}: MLI pads raw zeros, so the copy pads an "
                f"SA32 version (zero point {zp32}, raw 0 = {fill}) between two exact converts; "
                f"{extra} bytes of extra activation RAM")
        self._convert(op, x, src.name, "SA8 -> SA32, same scale (exact)")
        self._layer(op, "padding", fmt, [src.name], [dst.name], cfg_type=cfg_type, cfg=cfg,
                    notes=[note])
        self._convert(op, dst.name, out.name, "SA32 -> SA8 (exact)")

    _padv2 = _pad

    def _quantize(self, op: ir.Op, fmt: str) -> None:
        el = _act_el(fmt)
        i_t, o_t = self.g.tensors[op.inputs[0]], self.g.tensors[op.outputs[0]]
        in_el = ElType.FP32 if i_t.dtype == "float32" else el
        out_el = ElType.FP32 if o_t.dtype == "float32" else el
        if i_t.dtype == "float32" and o_t.dtype == "float32":
            in_el = out_el = el
        x = self.use(op, op.inputs[0], in_el)
        out = self.produce(op.outputs[0], out_el)
        self._layer(op, "convert", fmt, [x], [out.name])

    _dequantize = _quantize
