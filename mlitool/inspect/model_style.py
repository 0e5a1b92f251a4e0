"""Name the quantization style of a model: int8, int16x8, float32, float16-weights, dynamic-range...

The style is read from the ops that carry weights (convolutions, fully connected, LSTM...): the type of
their activations (input 0) and of their weights (the constant behind input 1, looked up through a
DEQUANTIZE when the weights are stored compressed). Models without such ops fall back to the types of
all activation tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlitool import ir
from mlitool.ops import spec as opspec

# Ops mlitool does not lower that carry weights (its own name their weight slots in their
# OpSpec): their input 1 is a weight tensor; the LSTMs' first gate weights among inputs 1-4.
FOREIGN_WEIGHTED_OPS = frozenset(
    {
        "CONV_3D",
        "CONV_3D_TRANSPOSE",
        "LSTM",
        "BIDIRECTIONAL_SEQUENCE_LSTM",
        "UNIDIRECTIONAL_SEQUENCE_RNN",
        "RNN",
    }
)
_INDEX_TYPES = frozenset({"int32", "int64", "bool", "string", "resource", "variant"})

STYLES = ("int8", "int16x8", "uint8", "float32", "float16-weights", "dynamic-range", "mixed/other")


@dataclass(frozen=True)
class Style:
    name: str  # one of STYLES
    weights: str | None = None  # quantized weights: "per-axis" (any per-axis) | "per-tensor"

    @property
    def label(self) -> str:
        return f"{self.name} ({self.weights} weights)" if self.weights else self.name

    def as_dict(self) -> dict:
        return {"name": self.name, "weights": self.weights, "label": self.label}


def weight_input(op: ir.Op) -> int:
    """Index of the weight tensor among the op's inputs' tensor indices, or -1: the first of
    its OpSpec's weight slots present (CIFG LSTMs omit the input-to-input weights)."""
    spec = opspec.get(op.type)
    if spec is not None and spec.weights:
        return (
            next((i for i in map(op.input, spec.weights) if i >= 0), -1)
            if len(op.inputs) >= 2
            else -1
        )
    if op.type not in FOREIGN_WEIGHTED_OPS or len(op.inputs) < 2:
        return -1
    if op.type in ("LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM"):
        return next((i for i in op.inputs[1:5] if i >= 0), -1)
    return op.inputs[1]


def activation_input(op: ir.Op) -> int:
    """Index of the op's main activation input (its OpSpec's "input" slot; else input 0)."""
    spec = opspec.get(op.type)
    pos = spec.data_slot if spec is not None and spec.slots else 0
    return op.inputs[pos] if len(op.inputs) > pos else -1


def stored_constant(
    graph: ir.Graph, index: int, producers: dict[int, ir.Op] | None = None
) -> tuple[ir.Tensor | None, bool]:
    """(constant tensor, True when reached through a DEQUANTIZE) for tensor `index`.

    A constant tensor is returned as is; the output of a DEQUANTIZE of a constant yields that constant
    (float16 / int8 weight compression). Anything else gives (None, False).
    """
    t = graph.tensor(index)
    if t is None:
        return None, False
    if t.is_constant:
        return t, False
    producer = (graph.producers() if producers is None else producers).get(index)
    if producer is not None and producer.type == "DEQUANTIZE" and producer.inputs:
        src = graph.tensor(producer.inputs[0])
        if src is not None and src.is_constant:
            return src, True
    return None, False


def detect_style(graph: ir.Graph) -> Style:
    """The quantization style of `graph` (see module docstring)."""
    producers = graph.producers()
    acts: set[str] = set()
    weights: list[tuple[ir.Tensor, bool]] = []  # (stored tensor, reached through DEQUANTIZE)
    for op in graph.ops:
        w, via = stored_constant(graph, weight_input(op), producers)
        if w is None:
            continue
        weights.append((w, via))
        src = graph.tensor(activation_input(op))
        if src is not None and src.dtype not in _INDEX_TYPES:
            acts.add(src.dtype)
    if not weights:
        acts = {
            t.dtype
            for i, t in enumerate(graph.tensors)
            if not t.is_constant
            and t.dtype not in _INDEX_TYPES
            and (i in producers or i in graph.inputs)
        }
    wtypes = {w.dtype for w, _ in weights}
    via_dequant = {w.dtype for w, via in weights if via}
    granularity = _granularity([w for w, _ in weights if w.quant is not None])

    if acts and acts <= {"float32", "float16"}:
        if not wtypes or wtypes == {"float32"}:
            return Style("float32")
        if wtypes <= {"float16", "float32"} and "float16" in via_dequant:
            return Style("float16-weights")
        if wtypes <= {"int8", "float32", "int4"} and not via_dequant:
            return Style("dynamic-range", granularity)
        return Style("mixed/other", granularity)
    quant_acts = acts - {"float32"}  # integer models may take float at the edges (QUANTIZE)
    if quant_acts == {"int8"} and wtypes <= {"int8", "int4"}:
        return Style("int8", granularity)
    if quant_acts == {"int16"} and wtypes and wtypes <= {"int8"}:
        return Style("int16x8", granularity)
    if quant_acts == {"uint8"} and wtypes <= {"uint8"}:
        return Style("uint8", granularity)
    if quant_acts == {"int8", "int16"} and wtypes <= {"int8", "int16"}:
        return Style("int8", granularity)  # int8 model with int16 internals (LSTM cell state)
    return Style("mixed/other", granularity)


def _granularity(tensors: list[ir.Tensor]) -> str | None:
    # Per-channel conv with per-tensor fully connected is TFLite's usual int8 recipe: call it per-axis.
    if not tensors:
        return None
    return "per-axis" if any(t.quant.per_axis for t in tensors) else "per-tensor"
