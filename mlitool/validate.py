"""The graph validation pass: what a well-formed model graph satisfies, checked once after reading.

The reader only checks that the file is a consistent flatbuffer; this pass checks the graph it
describes, so no later stage (lowering, the executors, the emitter) meets a graph it cannot
handle: op arity, order (every consumed tensor is constant, a graph input or written by an earlier
op, which also rules out cycles), one writer per tensor, the options table and window options of
each op, shapes of activations, weights and bias, and quantization parameters.

Each check is a named function yielding `Problem`s. Ops this version does not know (custom,
unknown opcodes, ops no command executes) get only the graph-wide checks, so `inspect` still
summarises any model. `problems` lists them all (for `inspect`); `check_graph` raises the first as
a ModelFormatError (exit 2) for the commands that lower or execute the graph.

Only what TFLite itself refuses is malformed. A shape check that fails on an op touching a tensor
whose shape TFLite computes at run time (a -1 in its shape signature, a RESHAPE to a non-constant
shape; the converter writes 1 for the unknown dimensions) gives an unsupported problem instead
(UnsupportedError, exit 4): mlitool needs the static shapes the file does not have. TFLite
recomputes output shapes in Prepare: `normalise_output_shapes` (run by the reader) takes the shape
an op computes for a stored one that differs, with a warning; on a graph output that is
unsupported. Zero points outside their type, an infinite scale, a pooling filter below 1 and a
FULLY_CONNECTED input that is not whole rows are unsupported too: TFLite runs such files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from mlitool import ir
from mlitool import lstm_slots as lstm
from mlitool.errors import ModelFormatError, UnsupportedError


@dataclass(frozen=True)
class Problem:
    text: str
    op: ir.Op | None = None
    tensor: ir.Tensor | None = None
    unsupported: bool = False           # valid for TFLite (shapes known at run time only)
    # Only the stored output shape is wrong: the shape the op computes (TFLite recomputes it).
    computed: tuple[int, ...] | None = None

    def __str__(self) -> str:
        where = [self.op.label] if self.op is not None else []
        if self.tensor is not None:
            where.append(f"tensor {self.tensor.index} {self.tensor.name!r}")
        return f"{', '.join(where)}: {self.text}" if where else self.text


# --- the op table of this pass ------------------------------------------------------------------

# Op type -> (min inputs, max inputs, required input slots, min outputs, max outputs).
# Slots past the required ones are optional (-1 means omitted).
_ARITY: dict[str, tuple[int, int, int, int, int]] = {
    "CONV_2D": (2, 3, 2, 1, 1), "DEPTHWISE_CONV_2D": (2, 3, 2, 1, 1),
    "FULLY_CONNECTED": (2, 3, 2, 1, 1), "TRANSPOSE_CONV": (3, 4, 3, 1, 1),
    "AVERAGE_POOL_2D": (1, 1, 1, 1, 1), "MAX_POOL_2D": (1, 1, 1, 1, 1),
    "ADD": (2, 2, 2, 1, 1), "SUB": (2, 2, 2, 1, 1), "MUL": (2, 2, 2, 1, 1),
    "MAXIMUM": (2, 2, 2, 1, 1), "MINIMUM": (2, 2, 2, 1, 1), "PRELU": (2, 2, 2, 1, 1),
    "RELU": (1, 1, 1, 1, 1), "RELU6": (1, 1, 1, 1, 1), "RELU_N1_TO_1": (1, 1, 1, 1, 1),
    "LEAKY_RELU": (1, 1, 1, 1, 1), "LOGISTIC": (1, 1, 1, 1, 1), "TANH": (1, 1, 1, 1, 1),
    "SOFTMAX": (1, 1, 1, 1, 1), "L2_NORMALIZATION": (1, 1, 1, 1, 1),
    "QUANTIZE": (1, 1, 1, 1, 1), "DEQUANTIZE": (1, 1, 1, 1, 1),
    "MEAN": (2, 2, 2, 1, 1), "CONCATENATION": (1, 1 << 16, 1, 1, 1),
    "PAD": (2, 2, 2, 1, 1), "PADV2": (2, 3, 2, 1, 1),
    "RESHAPE": (1, 2, 1, 1, 1), "SQUEEZE": (1, 1, 1, 1, 1), "EXPAND_DIMS": (2, 2, 2, 1, 1),
    "TRANSPOSE": (2, 2, 2, 1, 1), "ARG_MAX": (2, 2, 2, 1, 1), "ARG_MIN": (2, 2, 2, 1, 1),
    "SLICE": (3, 3, 3, 1, 1), "STRIDED_SLICE": (4, 4, 4, 1, 1),
    "SPLIT": (2, 2, 2, 1, 1 << 16), "SPLIT_V": (3, 3, 3, 1, 1 << 16),
    # LSTM: optional slots sit between required ones; `lstm_shapes` checks which are present.
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (20, 24, 1, 1, 1),
}

# Op type -> the builtin options table it carries (when it carries one).
_OPTIONS_TABLE: dict[str, str] = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "TRANSPOSE_CONV": "TransposeConvOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
    "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
    "LEAKY_RELU": "LeakyReluOptions", "SOFTMAX": "SoftmaxOptions",
    "L2_NORMALIZATION": "L2NormOptions", "MEAN": "ReducerOptions",
    "QUANTIZE": "QuantizeOptions", "DEQUANTIZE": "DequantizeOptions",
    "CONCATENATION": "ConcatenationOptions", "PAD": "PadOptions", "PADV2": "PadV2Options",
    "RESHAPE": "ReshapeOptions", "SQUEEZE": "SqueezeOptions", "EXPAND_DIMS": "ExpandDimsOptions",
    "TRANSPOSE": "TransposeOptions", "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions",
    "SLICE": "SliceOptions", "STRIDED_SLICE": "StridedSliceOptions",
    "SPLIT": "SplitOptions", "SPLIT_V": "SplitVOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
}
# Ops whose options have no usable default: the table must be there.
_OPTIONS_REQUIRED = {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                     "TRANSPOSE_CONV"}
_WINDOW_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"}
_ELTWISE = {"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"}
_SAME_SHAPE = {"RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH", "SOFTMAX",
               "L2_NORMALIZATION", "QUANTIZE", "DEQUANTIZE", "PRELU"}
_SAME_SIZE = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
_MAC_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"}
_CONVERTS = {"QUANTIZE", "DEQUANTIZE", "ARG_MAX", "ARG_MIN"}
_INT8_TO_INT16 = {"SOFTMAX", "LOGISTIC", "TANH"}
_ARITHMETIC = (_WINDOW_OPS | _MAC_OPS | _ELTWISE | _SAME_SHAPE
               | {"MEAN", "CONCATENATION", "PAD", "PADV2"})
_QUANTIZED_TYPES = {"int8", "uint8", "int16"}
_BIAS_TYPES = {"int8": ("int32",), "uint8": ("int32",), "int16": ("int32", "int64")}
_DATA_SLOT = {"SPLIT": 1, "TRANSPOSE_CONV": 2}      # where the data input is not the first

OpCheck = Callable[[ir.Graph, ir.Op], Iterator[Problem]]
GraphCheck = Callable[[ir.Graph], Iterator[Problem]]


# --- graph-wide checks --------------------------------------------------------------------------

def tensors_defined_before_use(g: ir.Graph) -> Iterator[Problem]:
    """Ops run in file order: each consumed tensor must exist by then (also rules out cycles)."""
    ready = {i for i, t in enumerate(g.tensors) if t.is_constant or t.is_variable} | set(g.inputs)
    writer = g.producers()
    for op in g.ops:
        for i in op.inputs:
            if i < 0 or i in ready:
                continue
            t = g.tensors[i]
            if i not in writer:
                if op.type == "CUSTOM":          # a custom op's own buffers (e.g. Ethos-U scratch)
                    continue
                yield Problem("is read but no op writes it and it is neither constant nor a graph "
                              "input", op, t)
            elif writer[i].index >= op.index:
                yield Problem(f"is written by {writer[i].label}, which runs at or after this op "
                              "(a cycle or an out-of-order graph)", op, t)
        ready.update(op.outputs)


def one_writer_per_tensor(g: ir.Graph) -> Iterator[Problem]:
    written: dict[int, ir.Op] = {}
    inputs = set(g.inputs)
    for op in g.ops:
        for i in op.outputs:
            t = g.tensors[i] if i >= 0 else None
            if t is None:
                yield Problem("has an omitted (-1) output", op)
            elif i in written:
                yield Problem(f"is also written by {written[i].label}", op, t)
            elif i in inputs or t.is_constant:
                yield Problem("writes a graph input or constant tensor", op, t)
            written.setdefault(i, op)


def graph_outputs_defined(g: ir.Graph) -> Iterator[Problem]:
    written = {i for op in g.ops for i in op.outputs}
    for i in g.outputs:
        if i not in written and i not in g.inputs:
            yield Problem("is a graph output, but no op writes it", tensor=g.tensors[i])


def zero_points_in_range(g: ir.Graph) -> Iterator[Problem]:
    for t in g.tensors:
        limits = _int_range(t.dtype)
        if t.quant is None or limits is None:
            continue
        zp = t.quant.zero_point
        bad = zp[(zp < limits[0]) | (zp > limits[1])]
        if bad.size:
            # TFLite reads zero points as int64 and runs such files
            yield Problem(f"zero point {int(bad[0])} is outside the {t.dtype} range "
                          f"[{limits[0]}, {limits[1]}]", tensor=t, unsupported=True)


def _int_range(dtype: str) -> tuple[int, int] | None:
    """(min, max) of an integer element type, None for other types."""
    if dtype == "int4":
        return -8, 7
    try:
        info = np.iinfo(np.dtype(dtype))
    except (TypeError, ValueError):
        return None
    return int(info.min), int(info.max)


def scales_finite_positive(g: ir.Graph) -> Iterator[Problem]:
    for t in g.tensors:
        if t.quant is None:
            continue
        s = t.quant.scale
        bad = s[~(np.isfinite(s) & (s > 0))]
        if bad.size:            # TFLite's scale checks pass an infinite scale: it runs those
            yield Problem(f"quantization scale {float(bad[0])!r} is not finite and > 0", tensor=t,
                          unsupported=bool(np.all(bad == np.inf)))


def constants_finite(g: ir.Graph) -> Iterator[Problem]:
    for t in g.tensors:
        if t.data is not None and t.data.dtype.kind == "f":
            bad = np.count_nonzero(~np.isfinite(t.data))
            if bad:
                yield Problem(f"constant data holds {bad} NaN or inf value(s)", tensor=t)


GRAPH_CHECKS: tuple[GraphCheck, ...] = (tensors_defined_before_use, one_writer_per_tensor,
                                        graph_outputs_defined, zero_points_in_range,
                                        scales_finite_positive, constants_finite)


# --- per-op checks -------------------------------------------------------------------------------

def arity(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    lo, hi, required, out_lo, out_hi = _ARITY[op.type]
    if not lo <= len(op.inputs) <= hi:
        yield Problem(f"has {len(op.inputs)} inputs, expected {_span(lo, hi)}", op)
    elif any(i < 0 for i in op.inputs[:required]):
        yield Problem(f"omits a required input (the first {required} are required)", op)
    if not out_lo <= len(op.outputs) <= out_hi:
        yield Problem(f"has {len(op.outputs)} outputs, expected {_span(out_lo, out_hi)}", op)


def options_table(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    want = _OPTIONS_TABLE.get(op.type)
    if op.options_table is None:
        if op.type in _OPTIONS_REQUIRED:
            yield Problem(f"has no options table (expected {want})", op)
    elif want is None or op.options_table != want:
        yield Problem(f"has options of type {op.options_table}, expected {want or 'none'}", op)


def window_options(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    keys = ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w")
    for key in keys:
        if key in op.options and int(op.options[key]) < 1:
            # TFLite checks strides and dilations, not pooling filters (it runs those)
            yield Problem(f"option {key} is {op.options[key]}, must be >= 1", op,
                          unsupported=key.startswith("filter"))
            return
    if op.options.get("padding", "VALID") not in ("SAME", "VALID"):
        yield Problem(f"padding {op.options['padding']!r} is not SAME or VALID", op)


def window_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """conv / depthwise / pooling: ranks, channels, weights, bias and the output's size."""
    from mlitool.geometry import tflite_padding

    x, out = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    w = g.tensors[op.inputs[1]] if len(op.inputs) > 1 else None
    for t in (x, out) + ((w,) if w is not None else ()):
        if len(t.shape) != 4:
            yield Problem(f"has shape {list(t.shape)}, expected rank 4", op, t)
            return
    o = op.options
    if w is None:
        kh, kw, channels = o.get("filter_h", 1), o.get("filter_w", 1), x.shape[3]
    elif op.type == "CONV_2D":
        kh, kw, channels = w.shape[1], w.shape[2], w.shape[0]
        if w.shape[3] < 1 or x.shape[3] % w.shape[3]:
            yield Problem(f"weights have {w.shape[3]} input channels, the input "
                          f"{x.shape[3]}", op, w)
            return
    else:
        kh, kw, channels = w.shape[1], w.shape[2], w.shape[3]
        if w.shape[0] != 1 or x.shape[3] < 1 or channels % x.shape[3]:
            yield Problem(f"depthwise weights {list(w.shape)} do not fit an input of "
                          f"{x.shape[3]} channels", op, w)
            return
        mult = o.get("depth_multiplier", 0)
        if mult and mult * x.shape[3] != channels:
            yield Problem(f"depth_multiplier {mult} × {x.shape[3]} input channels is not the "
                          f"weights' {channels}", op, w)
            return
    if min(kh, kw) < 1:
        yield Problem(f"window {kh}x{kw} is empty", op, w)
        return
    oh, _, _ = tflite_padding(o.get("padding", "VALID"), x.shape[1], kh, o.get("stride_h", 1),
                              o.get("dilation_h", 1))
    ow, _, _ = tflite_padding(o.get("padding", "VALID"), x.shape[2], kw, o.get("stride_w", 1),
                              o.get("dilation_w", 1))
    want = (x.shape[0], oh, ow, channels)
    if min(oh, ow) < 1 or tuple(out.shape) != want:
        yield Problem(f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out,
                      computed=want if min(oh, ow) >= 1 else None)
    yield from _bias(g, op, channels)


def fc_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, w, out = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    keep_dims = bool(op.options.get("keep_num_dims", False))
    if len(w.shape) != 2 or w.shape[1] < 1 or (keep_dims and x.shape[-1:] != w.shape[1:]):
        yield Problem(f"weights {list(w.shape)} do not fit an input of shape {list(x.shape)}",
                      op, w)
        return
    if x.size % w.shape[1]:          # TFLite runs floor(size / columns) rows of the input
        yield Problem(f"weights {list(w.shape)} do not fit an input of shape {list(x.shape)} "
                      f"(TFLite reads {x.size // w.shape[1] * w.shape[1]} of its {x.size} "
                      "elements; mlitool takes whole rows)", op, w, unsupported=True)
        return
    rows = x.size // w.shape[1]
    if not out.shape or out.shape[-1] != w.shape[0] or out.size != rows * w.shape[0]:
        want = x.shape[:-1] + (w.shape[0],) if keep_dims else (rows, w.shape[0])
        yield Problem(f"has shape {list(out.shape)}, but the op computes {rows} row(s) of "
                      f"{w.shape[0]}", op, out, computed=want)
    yield from _bias(g, op, w.shape[0])


def transpose_conv_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """TRANSPOSE_CONV: output_shape, weights (O, KH, KW, I), input [N, H, W, I], bias [O]."""
    shape_t, w, x = (g.tensors[i] for i in op.inputs[:3])
    out = g.tensors[op.outputs[0]]
    for t in (w, x, out):
        if len(t.shape) != 4:
            yield Problem(f"has shape {list(t.shape)}, expected rank 4", op, t)
            return
    if min(w.shape[1:3]) < 1 or w.shape[3] != x.shape[3]:
        yield Problem(f"weights {list(w.shape)} do not fit an input of {x.shape[3]} channels",
                      op, w)
        return
    if shape_t.data is not None and [int(v) for v in np.asarray(shape_t.data).reshape(-1)] \
            != list(out.shape):
        yield Problem(f"output_shape {np.asarray(shape_t.data).reshape(-1).tolist()} is not "
                      f"the output's shape {list(out.shape)}", op, out)
        return
    if out.shape[0] != x.shape[0] or out.shape[3] != w.shape[0]:
        yield Problem(f"has shape {list(out.shape)}, but the op computes batch {x.shape[0]} "
                      f"and {w.shape[0]} channels", op, out)
        return
    yield from _bias(g, op, w.shape[0], x_slot=2, slot=3)


def lstm_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: the required inputs present, the input gate's three all or
    none, input [B, T, N] (time-major [T, B, N]), gate weights [M, N] and [M, P], biases [M],
    states of B·P and B·M elements, output [B, T, P] (P = M without projection)."""
    def t(slot: int) -> ir.Tensor | None:
        return g.tensors[op.inputs[slot]] if slot < len(op.inputs) and op.inputs[slot] >= 0 \
            else None

    missing = [k for k in lstm.REQUIRED if t(k) is None]
    if missing:
        yield Problem(f"omits required input(s) {missing}", op)
        return
    if len({t(k) is None for k in lstm.INPUT_GATE}) > 1:
        yield Problem("has only some of the input gate's tensors (inputs "
                      f"{', '.join(map(str, lstm.INPUT_GATE))})", op)
        return
    x, out = t(0), g.tensors[op.outputs[0]]
    if len(x.shape) != 3:
        yield Problem(f"has shape {list(x.shape)}, expected rank 3", op, x)
        return
    time_major = bool(op.options.get("time_major", False))
    steps, batch, features = x.shape if time_major else (x.shape[1], x.shape[0], x.shape[2])
    w = t(lstm.INPUT_WEIGHTS[3])             # the output gate's: never omitted
    if len(w.shape) != 2:
        yield Problem(f"input {lstm.INPUT_WEIGHTS[3]} has shape {list(w.shape)}, expected rank 2",
                      op, w)
        return
    cells = w.shape[0]
    proj = t(lstm.PROJECTION[0])
    outputs = proj.shape[0] if proj is not None and len(proj.shape) == 2 else cells
    want = {k: (cells, features) for k in lstm.INPUT_WEIGHTS}
    want.update({k: (cells, outputs) for k in lstm.RECURRENT_WEIGHTS})
    want.update({k: (cells,) for k in lstm.PEEPHOLE + lstm.BIASES})
    if proj is not None:
        want[lstm.PROJECTION[0]] = (outputs, cells)
    for k, shape in sorted(want.items()):
        if t(k) is not None and tuple(t(k).shape) != shape:
            yield Problem(f"input {k} has shape {list(t(k).shape)}, expected {list(shape)}",
                          op, t(k))
            return
    for k, size in ((lstm.OUTPUT_STATE, batch * outputs), (lstm.CELL_STATE, batch * cells)):
        if t(k).size != size:
            yield Problem(f"state input {k} has {t(k).size} elements, expected {size}", op, t(k))
            return
    want_out = (steps, batch, outputs) if time_major else (batch, steps, outputs)
    if tuple(out.shape) != want_out:
        yield Problem(f"has shape {list(out.shape)}, but the op computes {list(want_out)}",
                      op, out, computed=want_out)


def _bias(g: ir.Graph, op: ir.Op, channels: int, x_slot: int = 0, slot: int = 2
          ) -> Iterator[Problem]:
    if len(op.inputs) > slot and op.inputs[slot] >= 0:
        b = g.tensors[op.inputs[slot]]
        want = _BIAS_TYPES.get(g.tensors[op.inputs[x_slot]].dtype, ("float32",))
        if b.size != channels:
            yield Problem(f"bias of shape {list(b.shape)}, expected [{channels}]", op, b)
        elif b.dtype not in want:
            yield Problem(f"bias of type {b.dtype}, expected {' or '.join(want)}", op, b)
        elif len(b.shape) != 1:                  # TFLite counts only the bias's elements
            yield Problem(f"bias of shape {list(b.shape)}: mlitool takes a bias of shape "
                          f"[{channels}]", op, b, unsupported=True)


def eltwise_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    a, b, out = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    try:
        want = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        yield Problem(f"cannot broadcast {list(a.shape)} with {list(b.shape)}", op, b)
        return
    if tuple(out.shape) != want:
        yield Problem(f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out,
                      computed=want)


def same_shape(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, out = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if tuple(out.shape) != tuple(x.shape):
        yield Problem(f"has shape {list(out.shape)}, but the input's is {list(x.shape)}", op, out,
                      computed=tuple(x.shape))
        return
    if op.type == "PRELU":
        alpha = g.tensors[op.inputs[1]]
        try:
            np.broadcast_shapes(x.shape, alpha.shape)
        except ValueError:
            yield Problem(f"alpha {list(alpha.shape)} does not broadcast to {list(x.shape)}",
                          op, alpha)


def same_size(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, out = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if out.size != x.size:
        yield Problem(f"has {out.size} elements, the input {x.size}", op, out)


def concat_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """As TFLite's Prepare: the axis within input 0's rank, every input as input 0 but along the
    axis; the output's shape is computed from them."""
    out = g.tensors[op.outputs[0]]
    parts = [g.tensors[i] for i in op.inputs]
    first = parts[0]
    rank = len(first.shape)
    axis = int(op.options.get("axis", 0))
    if not -rank <= axis < rank:
        yield Problem(f"axis {axis} is outside the rank {rank} of input 0", op, first)
        return
    axis %= rank
    for t in parts:
        if len(t.shape) != rank or any(d != e for k, (d, e) in enumerate(zip(t.shape, first.shape))
                                       if k != axis):
            yield Problem(f"shape {list(t.shape)} does not fit {list(first.shape)} (input 0) "
                          f"along axis {axis}", op, t)
            return
    want = first.shape[:axis] + (sum(t.shape[axis] for t in parts),) + first.shape[axis + 1:]
    if tuple(out.shape) != want:
        yield Problem(f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out,
                      computed=want)


def activation_types(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """The data inputs and the outputs share one element type (but for type conversions), and
    integer activations of arithmetic ops carry quantization."""
    x = g.tensors[op.inputs[_DATA_SLOT.get(op.type, 0)]]
    data = [x] + [g.tensors[i] for i in op.inputs[1:] if op.type in _ELTWISE | {"CONCATENATION"}]
    outs = [g.tensors[i] for i in op.outputs]
    if op.type not in _CONVERTS:
        for t in data[1:] + outs:
            # TFLite (Micro) SOFTMAX and LOGISTIC also map int8 inputs to int16 outputs.
            widened = op.type in _INT8_TO_INT16 and (x.dtype, t.dtype) == ("int8", "int16")
            if t.dtype != x.dtype and not widened:
                yield Problem(f"has type {t.dtype}, the op's input {x.dtype}", op, t)
                return
    if op.type in _ARITHMETIC:
        for t in data + outs:
            if t.dtype in _QUANTIZED_TYPES and t.quant is None:
                yield Problem(f"is {t.dtype} without quantization parameters", op, t)
                return


def rescale_range(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """The real factor between quantized inputs and outputs (times the weight scale for MAC
    ops) is one TFLite's fixed-point multipliers hold: below 2^30 (TFLite runs larger ones with
    the multiplier saturated at about 2^30, which mlitool does not reproduce: unsupported; tiny
    factors, as in pruned channels, only round to zero)."""
    outs = [g.tensors[i] for i in op.outputs if _quantized(g.tensors[i])]
    ins = [g.tensors[i] for i in op.inputs if i >= 0 and _quantized(g.tensors[i])]
    if not outs or not ins or op.type in ("ARG_MAX", "ARG_MIN"):
        return
    if op.type in _MAC_OPS:
        if len(ins) < 2 or ins[0].index != op.inputs[0] or ins[1].index != op.inputs[1]:
            return
        factors = [ins[0].quant.scale[0] * ins[1].quant.scale]
    else:
        factors = [t.quant.scale for t in ins]
    for out in outs:
        for f in factors:
            with np.errstate(all="ignore"):      # bad scales are reported on their own
                ratio = f / out.quant.scale[0]
            bad = ratio[~(ratio < 2.0 ** 30)]
            if bad.size:
                yield Problem(f"rescale factor {float(bad[0]):.6g} from its inputs is 2^30 or "
                              "more, where TFLite's fixed-point multipliers saturate", op, out,
                              unsupported=True)
                return


def _quantized(t: ir.Tensor) -> bool:
    return t.quant is not None and t.dtype in _QUANTIZED_TYPES


def _op_checks(op_type: str) -> tuple[OpCheck, ...]:
    if op_type == "UNIDIRECTIONAL_SEQUENCE_LSTM":     # its rescales are internal to the op
        return (options_table, lstm_shapes, activation_types)
    checks: list[OpCheck] = [options_table, window_options, activation_types, rescale_range]
    if op_type in _WINDOW_OPS:
        checks.append(window_shapes)
    elif op_type == "FULLY_CONNECTED":
        checks.append(fc_shapes)
    elif op_type == "TRANSPOSE_CONV":
        checks.append(transpose_conv_shapes)
    elif op_type in _ELTWISE:
        checks.append(eltwise_shapes)
    elif op_type in _SAME_SHAPE:
        checks.append(same_shape)
    elif op_type in _SAME_SIZE:
        checks.append(same_size)
    elif op_type == "CONCATENATION":
        checks.append(concat_shapes)
    return tuple(checks)


OP_CHECKS: dict[str, tuple[OpCheck, ...]] = {t: _op_checks(t) for t in _ARITY}
_SHAPE_CHECKS = {window_shapes, fc_shapes, transpose_conv_shapes, lstm_shapes, eltwise_shapes,
                 same_shape, same_size, concat_shapes}


def runtime_shaped(g: ir.Graph) -> dict[int, str]:
    """Tensor index -> why TFLite knows its shape only at run time: a -1 in its shape signature,
    the output of a RESHAPE whose shape input is not a constant, or of an op reading such a
    tensor."""
    found = {t.index: f"shape signature {list(t.shape_signature)}" for t in g.tensors
             if t.shape_signature is not None and -1 in t.shape_signature}
    for op in g.ops:
        shape_in = op.inputs[1] if op.type == "RESHAPE" and len(op.inputs) > 1 else -1
        why = next((f"computed from tensor {i}" for i in op.inputs if i in found), None)
        if shape_in >= 0 and not g.tensors[shape_in].is_constant:
            why = f"computed from the non-constant tensor {shape_in}"
        for i in op.outputs:
            if why is not None and i >= 0:
                found.setdefault(i, why)
    return found


# --- entry points --------------------------------------------------------------------------------

def problems(g: ir.Graph) -> list[Problem]:
    """Every problem of `g`, graph-wide first, then per op in order. An op's shape checks run
    only when its arity and options are sound (they index its inputs and read its options)."""
    found = [p for check in GRAPH_CHECKS for p in check(g)]
    dynamic: dict[int, str] | None = None            # computed on the first failed shape check
    for op in g.ops:
        if op.type not in _ARITY:
            continue
        head = list(arity(g, op))
        found += head
        if head:
            continue
        for check in OP_CHECKS[op.type]:
            step = list(check(g, op))
            if step and check in _SHAPE_CHECKS:
                dynamic = runtime_shaped(g) if dynamic is None else dynamic
                step = [_unsupported_if_dynamic(g, op, p, dynamic) for p in step]
                step = [_unsupported_if_graph_output(g, p) for p in step]
            found += step
            if step:
                break
    return found


def normalise_output_shapes(g: ir.Graph) -> list[str]:
    """TFLite recomputes each op's output shape in Prepare, so it runs files whose stored output
    shape is not the one the op computes. Take the computed shape (in op order, so the next op
    checks against it), one warning each; but not for a graph output, whose stored shape users
    read (`problems` refuses it as unsupported), nor where shapes are known at run time only.
    Returns the warnings."""
    warnings = []
    keep = set(g.inputs) | set(g.outputs)
    dynamic: dict[int, str] | None = None
    for op in g.ops:
        if op.type not in _ARITY or any(True for c in (arity, options_table, window_options)
                                        for _ in c(g, op)):
            continue
        for check in OP_CHECKS[op.type]:
            if check not in _SHAPE_CHECKS:
                continue
            p = next(check(g, op), None)
            t = p and p.tensor
            if p is None or p.computed is None or t.index in keep or t.is_constant:
                break
            dynamic = runtime_shaped(g) if dynamic is None else dynamic
            if not any(i in dynamic for i in op.inputs + op.outputs):
                g.tensors[t.index] = replace(t, shape=tuple(p.computed))
                warnings.append(f"{op.label}: tensor {t.index} {t.name!r} is stored with shape "
                                f"{list(t.shape)}; the op computes {list(p.computed)} (as "
                                "TFLite does), which mlitool takes")
            break
    return warnings


def _unsupported_if_graph_output(g: ir.Graph, p: Problem) -> Problem:
    """A graph output's stored shape that the op does not compute: TFLite runs the file (it
    recomputes the shape), mlitool keeps the shape users read from the file."""
    if p.unsupported or p.computed is None or p.tensor.index not in g.outputs:
        return p
    return replace(p, text=p.text + " (TFLite recomputes it); mlitool does not change the shape "
                   "of a graph output", unsupported=True)


def _unsupported_if_dynamic(g: ir.Graph, op: ir.Op, p: Problem, dynamic: dict[int, str]
                            ) -> Problem:
    """`p` as an unsupported problem when the op touches a tensor of run-time shape (the one
    `p` names first, else its inputs, else its outputs)."""
    first = () if p.tensor is None else (p.tensor.index,)
    i = next((i for i in first + op.inputs + op.outputs if i in dynamic), None)
    if i is None:
        return p
    why = (f"; the shape of tensor {i} {g.tensors[i].name!r} is only known at run time "
           f"({dynamic[i]}), and mlitool needs static shapes")
    return replace(p, text=p.text + why, unsupported=True)


def check_graph(g: ir.Graph, path: str) -> None:
    """Raise ModelFormatError (exit 2) naming the file and the first malformed problem of `g`,
    else UnsupportedError (exit 4) naming the first op whose shapes are known at run time only."""
    found = problems(g)
    malformed = [p for p in found if not p.unsupported]
    if malformed:
        more = f" (and {len(malformed) - 1} more problem(s); `mlitool inspect` lists them)" \
            if len(malformed) > 1 else ""
        raise ModelFormatError(f"malformed graph: {malformed[0]}{more}", path=path)
    if found:
        raise UnsupportedError(str(found[0]), path=path)


def _span(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    return f"at least {lo}" if hi >= 1 << 16 else f"{lo} to {hi}"
