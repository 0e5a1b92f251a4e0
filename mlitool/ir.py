"""Framework-neutral graph IR. Nothing here knows about flatbuffers or MLI.

Conventions the rest of mlitool relies on:

* Tensor shapes are TFLite's own (activations NHWC, batch included); layout changes happen in
  lowering, never here.
* `Tensor.dtype` is a numpy dtype name: "int8", "uint8", "int16", "int32", "int64", "float16",
  "float32", "bool" (others as numpy names them, e.g. "complex64", or "string").
* `Op.inputs` may contain -1 for an omitted optional input.
* `Op.type` is the TFLite builtin name ("CONV_2D", ...), "CUSTOM" (see `custom_code`) or
  "UNKNOWN_<code>" for an opcode this version does not know; such ops are kept so `inspect` shows
  any model.
* `Op.options` holds decoded builtin options under these keys (only those that apply):
    padding           "SAME" | "VALID"
    stride_h, stride_w, dilation_h, dilation_w        ints
    filter_h, filter_w                                pooling window
    depth_multiplier                                  int
    fused_activation  "NONE" | "RELU" | "RELU_N1_TO_1" | "RELU6" | "TANH" | "SIGN_BIT"
    keep_num_dims     bool (FULLY_CONNECTED)
    weights_format    "DEFAULT" | ... (FULLY_CONNECTED)
    asymmetric_quantize_inputs  bool (hybrid ops)
    axis              int (CONCATENATION, ARG_MAX output axis is an input tensor, SOFTMAX n/a)
    beta              float (SOFTMAX)
    alpha             float (LEAKY_RELU)
    new_shape         tuple[int, ...] (RESHAPE, when given as an option)
    squeeze_dims      tuple[int, ...] (SQUEEZE)
    keep_dims         bool (MEAN and other reductions)
    output_type       dtype name (ARG_MAX / ARG_MIN)
    num_splits        int (SPLIT / SPLIT_V)
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, offset   (STRIDED_SLICE)
  Options of other ops are decoded generically into snake_case keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlitool.ops import spec as opspec

# The option a float island's op carries once fused onto int8 tensors (a graph pass): its 256
# results over -128..127, as DEQUANTIZE -> op -> QUANTIZE computes them; its tflite kernel reads it.
ISLAND_TABLE = "island_table"
# The option of a float island whose op is not element-wise (CUMSUM), fused onto int8 tensors:
# the 256 DEQUANTIZE results over -128..127 (float32 values); its tflite kernel runs its float32
# kernel on them and quantizes as QUANTIZE does to its output's parameters.
FLOAT_ISLAND = "float_island"
# The option of a CAST from int32 (or int64 indices) to float32 fused with the QUANTIZE that
# alone reads it (mlitool.passes.cast_quantize): the CAST writes the QUANTIZE's int8 output, the
# QUANTIZE of the cast float32 value.
QUANTIZED_CAST = "quantized_cast"
# A CAST of an int8 tensor's DEQUANTIZE values to an integer type (passes/cast_quantize.py):
# it reads the int8 tensor and casts its float32 dequantized values.
DEQUANTIZED_CAST = "dequantized_cast"
# The op a graph pass makes of an int8 model's float island of several ops (DEQUANTIZE ->
# ADD / SUB / MUL / LOGISTIC ... -> QUANTIZE, mlitool.passes.float_expressions) and its options:
# one 256-entry float32 table per int8 input (the island's float value of that input alone),
# and how the tables' values combine (one (op, activation) per input after the first).
ISLAND_OP = "FLOAT_ISLAND"
ISLAND_TERMS = "island_terms"
ISLAND_STEPS = "island_steps"
ISLAND_RUNS = "island_runs"  # one line for inspect: how the island runs
# The op a graph pass makes of an int8 model's float region that is no element-wise island
# (mlitool.passes.float_regions: PT2E's float FULLY_CONNECTED and GRU gates, DEQUANTIZE ->
# float32 ops -> QUANTIZEs), and its option: the region's own ops as an `ir.Graph`.
REGION_OP = "FLOAT_REGION"
REGION_GRAPH = "region_graph"


@dataclass(frozen=True)
class Quant:
    """Affine quantization: real = scale * (q - zero_point).

    `scale` (float64 1-D) and `zero_point` (int64 1-D) have one entry for per-tensor quantization
    (`axis is None`) or one per slice along `axis` for per-axis quantization.
    """

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None = None

    @property
    def per_axis(self) -> bool:
        return self.axis is not None

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        """Real values of `q` as float64 (per-axis scales broadcast along `axis`)."""
        scale, zp = self.scale, self.zero_point
        if self.axis is not None:
            shape = [1] * q.ndim
            shape[self.axis] = -1
            scale, zp = scale.reshape(shape), zp.reshape(shape)
        else:
            scale, zp = scale[0], zp[0]
        return (q.astype(np.float64) - zp) * scale


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    data: np.ndarray | None = None  # constant data, shape == self.shape, or None
    quant: Quant | None = None
    is_variable: bool = False
    shape_signature: tuple[int, ...] | None = None  # -1 marks a dynamic dimension
    # A float tensor's quantization as a QDQ file's QUANTIZE -> DEQUANTIZE pair gives it
    # (mlitool.passes.qdq): what lowering quantizes it with, exactly.
    qdq: Quant | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class Op:
    index: int
    type: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: dict[str, Any] = field(default_factory=dict)
    custom_code: str | None = None
    version: int = 1
    options_table: str | None = None  # the builtin options table's type, e.g. "Conv2DOptions"
    intermediates: tuple[int, ...] = ()  # tensors describing internal results (LSTM gates)
    # Set by a graph pass (mlitool.passes) on an op it made from a model's op (same index):
    # that op. Labels, layers' op types and per-layer overrides name it, not the rewrite.
    origin: Op | None = None
    # A custom op's custom_options bytes as the file holds them (flexbuffers for TFLite's own).
    custom_options: bytes = b""

    @property
    def label(self) -> str:
        """Human name for messages: 'op 3 (CONV_2D)'."""
        return f"op {self.index} ({self.shown_type})"

    @property
    def shown_type(self) -> str:
        """The op type as messages name it: a custom op by its custom code; a pass's op by the
        model's op it was made from."""
        if self.origin is not None:
            return self.origin.shown_type
        return self.custom_code if self.type == "CUSTOM" and self.custom_code else self.type

    @property
    def model_type(self) -> str:
        """The type of the model's op: `type`, or the origin's for an op a pass made."""
        return self.type if self.origin is None else self.origin.model_type

    def input(self, name: str) -> int:
        """Tensor index in input slot `name` (as its OpSpec names the slots); -1 when omitted."""
        return opspec.input_index(self, name)


@dataclass
class Graph:
    name: str
    tensors: list[Tensor]
    ops: list[Op]
    inputs: list[int]
    outputs: list[int]

    def tensor(self, index: int) -> Tensor | None:
        return None if index < 0 else self.tensors[index]

    def slot(self, op: Op, name: str) -> Tensor | None:
        """The tensor in `op`'s input slot `name`; None when omitted."""
        return self.tensor(op.input(name))

    def producers(self) -> dict[int, Op]:
        return {t: op for op in self.ops for t in op.outputs}

    @property
    def is_stream(self) -> bool:
        """Whether an op keeps state between inferences (`OpSpec.stream`): its samples are
        consecutive invocations of one stream, not independent inferences."""
        specs = (opspec.get(op.type) for op in self.ops)
        return any(s is not None and s.stream for s in specs)

    def consumers(self) -> dict[int, list[Op]]:
        out: dict[int, list[Op]] = {}
        for op in self.ops:
            for t in op.inputs:
                if t >= 0:
                    out.setdefault(t, []).append(op)
        return out


@dataclass
class Model:
    path: str
    subgraphs: list[Graph]
    version: int = 3
    description: str = ""
    signature_names: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the reader normalised
    # Constant folding at import (mlitool.passes.constant_fold): graph inputs whose dynamic
    # batch was fixed to 1, ops evaluated into constants, ops removed as left without a reader.
    batch_fixed: list[str] = field(default_factory=list)
    folded_ops: list[str] = field(default_factory=list)
    removed_ops: list[str] = field(default_factory=list)
    # Chains of ops rewritten at import as one op (mlitool.passes.upsampling): {label of the
    # new op: labels of the ops it replaces}.
    rewritten_ops: dict[str, list[str]] = field(default_factory=dict)

    @property
    def main(self) -> Graph:
        return self.subgraphs[0]
