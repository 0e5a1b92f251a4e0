"""Parameter, weight-byte and MAC counts per op (used by `inspect` and the reports).

Conventions:
* Parameters are the elements of an op's constant inputs that hold learned values: float or
  quantized constants (weights, biases, PReLU alpha, constant operands of ADD/MUL...). Unquantized
  integer constants (shapes, axes, paddings, permutations) are configuration, not parameters.
  Weights stored compressed behind a DEQUANTIZE are counted at the DEQUANTIZE, once.
* Weight bytes are the stored bytes of those parameters (int4 packs two per byte).
* MACs (multiply-accumulates per inference) are counted for the matrix ops only, by their
  OpSpec's `macs` (in their family; `FOREIGN_MACS` below for ops mlitool has no OpSpec for):
    CONV_2D           N*Ho*Wo*Co * Kh*Kw*Ci      (Ci from the filter, so grouped conv is right)
    DEPTHWISE_CONV_2D N*Ho*Wo*Co * Kh*Kw
    TRANSPOSE_CONV    N*Hi*Wi*Ci * Kh*Kw*Co
    FULLY_CONNECTED   (output elements) * Ci
    BATCH_MATMUL      (output elements) * K
    CONV_3D           N*Do*Ho*Wo*Co * Kd*Kh*Kw*Ci
    LSTM / RNN / SVDF (input rows) * sum of the weight matrix sizes
  Elementwise, pooling, activation and data-movement ops count 0 MACs.
* Shared constants are counted once in model totals (`graph_totals`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlitool import ir
from mlitool.inspect.model_style import stored_constant, weight_input
from mlitool.ops import spec as opspec

_FLOAT = frozenset({"float16", "float32", "float64", "bfloat16"})


@dataclass(frozen=True)
class OpStats:
    params: int
    weight_bytes: int
    macs: int
    param_tensors: tuple[int, ...]  # tensor indices counted as parameters


def is_parameter(t: ir.Tensor) -> bool:
    """A constant holding learned values (see module docstring)."""
    return t.is_constant and (t.dtype in _FLOAT or t.quant is not None)


def tensor_bytes(t: ir.Tensor) -> int:
    """Stored size of a tensor's data in the model file."""
    if t.dtype == "int4":
        return (t.size + 1) // 2
    return int(t.data.nbytes) if t.data is not None else 0


def op_stats(graph: ir.Graph, op: ir.Op, producers: dict[int, ir.Op] | None = None) -> OpStats:
    """Counts for one op; pass `graph.producers()` when calling for many ops."""
    producers = graph.producers() if producers is None else producers
    params = tuple(i for i in dict.fromkeys(op.inputs) if i >= 0 and is_parameter(graph.tensors[i]))
    return OpStats(
        params=sum(graph.tensors[i].size for i in params),
        weight_bytes=sum(tensor_bytes(graph.tensors[i]) for i in params),
        macs=op_macs(graph, op, producers),
        param_tensors=params,
    )


def op_macs(graph: ir.Graph, op: ir.Op, producers: dict[int, ir.Op] | None = None) -> int:
    """Multiply-accumulates of one op (0 for ops that are not matrix products)."""
    producers = graph.producers() if producers is None else producers
    w, _ = stored_constant(graph, weight_input(op), producers)
    wshape = w.shape if w is not None else _shape(graph, weight_input(op))
    out = _shape(graph, op.outputs[0] if op.outputs else -1)
    if wshape is None or out is None:
        return 0
    spec = opspec.get(op.type)
    count = spec.macs if spec is not None and spec.macs is not None else FOREIGN_MACS.get(op.type)
    return 0 if count is None else count(graph, op, tuple(wshape), tuple(out))


def sequence_macs(graph: ir.Graph, op: ir.Op, weights: tuple, out: tuple) -> int:
    """LSTM / RNN / SVDF: (input rows) * the sizes of its constant weight matrices."""
    inp = _shape(graph, op.inputs[0])
    rows = prod(inp[:-1]) if inp else 0
    matrices = (stored_constant(graph, i)[0] for i in op.inputs[1:])
    return rows * sum(m.size for m in matrices if m is not None and len(m.shape) == 2)


def _conv_3d_macs(graph: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    return prod(out) * w[0] * w[1] * w[2] * w[3] if len(w) == 5 else 0


# Ops mlitool has no OpSpec for, counted for inspect's statistics (the others: OpSpec.macs).
FOREIGN_MACS = {
    "CONV_3D": _conv_3d_macs,
    **dict.fromkeys(("LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "RNN", "SVDF"), sequence_macs),
}


def graph_totals(graph: ir.Graph, stats: list[OpStats] | None = None) -> dict[str, int]:
    """Totals over the graph: parameters and weight bytes of unique tensors, MACs of all ops."""
    if stats is None:
        producers = graph.producers()
        stats = [op_stats(graph, op, producers) for op in graph.ops]
    unique = {i for s in stats for i in s.param_tensors}
    return {
        "params": sum(graph.tensors[i].size for i in unique),
        "weight_bytes": sum(tensor_bytes(graph.tensors[i]) for i in unique),
        "macs": sum(s.macs for s in stats),
    }


def _shape(graph: ir.Graph, index: int) -> tuple[int, ...] | None:
    t = graph.tensor(index)
    return None if t is None else t.shape


def prod(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n
