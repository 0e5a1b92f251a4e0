"""Graph walker: runs an `ir.Graph` op by op in `float` or `tflite` mode, batched over samples.

Batch convention: every activation array has shape `(N,) + tensor.shape` — a leading sample axis
in front of the model's own shape (whose batch dimension is usually 1). Kernels merge the sample
and model batch axes where they need NHWC. Model inputs may also be given as `(N,) + shape[1:]`
when the model batch is 1.

Values per mode:
* `float`: real values, float32. Quantized constants and quantized integer inputs are dequantized;
  QUANTIZE / DEQUANTIZE are identities and no activation is ever re-quantized, so float mode on a
  quantized model is the accuracy reference (the model's own real-valued arithmetic).
* `tflite`: the model's own dtypes (int8 activations, ...), computed with TFLite's integer
  reference arithmetic. Float inputs to an integer input tensor are quantized (TFLite rounding).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError, OptionError, UnsupportedError

MODES = ("float", "tflite")

Kernel = Callable[["Call"], list]


@dataclass
class Call:
    """One op invocation: the op, its tensors, and the values computed so far."""

    op: ir.Op
    graph: ir.Graph
    mode: str
    values: dict[int, np.ndarray]
    n: int
    consts: dict[int, np.ndarray] = field(default_factory=dict)

    def tin(self, i: int) -> ir.Tensor | None:
        if i >= len(self.op.inputs):
            return None
        return self.graph.tensor(self.op.inputs[i])

    def tout(self, j: int = 0) -> ir.Tensor:
        return self.graph.tensors[self.op.outputs[j]]

    def has(self, i: int) -> bool:
        return self.tin(i) is not None

    def opt(self, key: str, default=None):
        return self.op.options.get(key, default)

    def const(self, i: int) -> np.ndarray:
        """Data of constant input i, converted for the mode (float mode: real values)."""
        t = self.tin(i)
        if t is None:
            raise UnsupportedError(f"{self.op.label}: input {i} is missing")
        if not t.is_constant:
            raise UnsupportedError(f"{self.op.label}: input {i} ({t.name}) must be a constant tensor")
        if t.index not in self.consts:
            self.consts[t.index] = const_value(t, self.mode)
        return self.consts[t.index]

    def x(self, i: int) -> np.ndarray:
        """Batched value (N,)+shape of input i; constants are broadcast over samples."""
        t = self.tin(i)
        if t is None:
            raise UnsupportedError(f"{self.op.label}: input {i} is missing")
        if t.is_constant:
            c = self.const(i)
            return np.broadcast_to(c, (self.n,) + c.shape)
        try:
            return self.values[t.index]
        except KeyError:
            raise UnsupportedError(f"{self.op.label}: input tensor {t.name} has no value "
                                   "(not produced by an earlier op)") from None

    def aligned(self, *idx: int) -> list[np.ndarray]:
        """Inputs `idx`, batched and right-aligned to their common rank (TFLite broadcasting)."""
        rank = max(len(self.tin(i).shape) for i in idx)
        out = []
        for i in idx:
            shape, v = tuple(self.tin(i).shape), self.x(i)
            out.append(v.reshape((v.shape[0],) + (1,) * (rank - len(shape)) + shape))
        return out

    def out_shape(self, j: int = 0) -> tuple[int, ...]:
        return (self.n,) + tuple(self.tout(j).shape)

    def unsupported(self, what: str) -> UnsupportedError:
        return UnsupportedError(f"{self.op.label}: {what} is not supported in {self.mode} mode")


def const_value(t: ir.Tensor, mode: str) -> np.ndarray:
    data = np.asarray(t.data)
    if mode == "float" and t.quant is not None and data.dtype.kind in "iu":
        return t.quant.dequantize(data).astype(np.float32)
    return data


def _kernels(mode: str) -> dict[str, Kernel]:
    if mode == "float":
        from mlitool.execute.float_ops import KERNELS
    elif mode == "tflite":
        from mlitool.execute.tflite_ops import KERNELS
    else:
        raise OptionError(f"unknown execution mode {mode!r} (choose from {', '.join(MODES)})")
    return KERNELS


def unsupported_ops(graph: ir.Graph, mode: str) -> list[str]:
    """Labels of ops `mode` cannot run, in graph order (empty when the whole graph runs)."""
    kernels = _kernels(mode)
    return [op.label for op in graph.ops if op.type not in kernels]


def _find_input(graph: ir.Graph, key) -> int:
    if isinstance(key, (int, np.integer)):
        if 0 <= key < len(graph.inputs):
            return graph.inputs[int(key)]
        if int(key) in graph.inputs:
            return int(key)
        raise InputDataError(f"graph {graph.name!r} has no input {key}")
    for idx in graph.inputs:
        if graph.tensors[idx].name == key:
            return idx
    names = ", ".join(graph.tensors[i].name for i in graph.inputs)
    raise InputDataError(f"graph {graph.name!r} has no input named {key!r} (inputs: {names})")


def prepare_input(t: ir.Tensor, array, mode: str) -> np.ndarray:
    """Check and convert one batched input array to the mode's representation of tensor `t`."""
    a = np.asarray(array)
    shape = tuple(t.shape)
    if a.ndim == len(shape) and shape and shape[0] == 1 and a.shape[1:] == shape[1:]:
        a = a[:, None]              # (N,)+shape[1:] → (N,1)+shape[1:]
    if a.ndim != len(shape) + 1 or a.shape[1:] != shape:
        raise InputDataError(f"input {t.name!r}: expected a batch of shape (N, {', '.join(map(str, shape))}) "
                             f"or (N, {', '.join(map(str, shape[1:]))}), got {a.shape}")
    is_float = a.dtype.kind == "f"
    if a.dtype.kind not in "fiub":
        raise InputDataError(f"input {t.name!r}: unsupported array dtype {a.dtype}")
    model_is_int = np.dtype(t.dtype).kind in "iu"
    if mode == "float":
        if model_is_int and not is_float and t.quant is not None:
            _check_range(t, a)
            return t.quant.dequantize(a).astype(np.float32)
        return a.astype(np.float32) if np.dtype(t.dtype).kind == "f" or t.quant is not None else a
    if model_is_int and is_float:
        if t.quant is None:
            raise InputDataError(f"input {t.name!r}: float data given for an unquantized {t.dtype} input")
        from mlitool.execute.tflite_ops import affine_quantize
        return affine_quantize(a, t)
    if model_is_int:
        _check_range(t, a)
    return a.astype(t.dtype)


def _check_range(t: ir.Tensor, a: np.ndarray) -> None:
    info = np.iinfo(np.dtype(t.dtype))
    if a.size and (a.min() < info.min or a.max() > info.max):
        raise InputDataError(f"input {t.name!r}: values outside the {t.dtype} range "
                             f"[{info.min}, {info.max}]")


def run_graph(graph: ir.Graph, inputs: dict, mode: str, *, keep: bool = False) -> dict[int, np.ndarray]:
    """Run `graph` on a batch of inputs ({input name or position or tensor index: array}).

    Returns {tensor index: batched array} for the graph outputs, or for every tensor computed
    (inputs included) when `keep` is true.
    """
    kernels = _kernels(mode)
    values: dict[int, np.ndarray] = {}
    for key, array in inputs.items():
        idx = _find_input(graph, key)
        values[idx] = prepare_input(graph.tensors[idx], array, mode)
    missing = [graph.tensors[i].name for i in graph.inputs
               if i not in values and not graph.tensors[i].is_constant]
    if missing:
        raise InputDataError(f"no data given for input(s) {', '.join(missing)}")
    sizes = {v.shape[0] for v in values.values()}
    if len(sizes) > 1:
        raise InputDataError(f"inputs have different sample counts: {sorted(sizes)}")
    n = sizes.pop() if sizes else 1
    bad = [op.label for op in graph.ops if op.type not in kernels]
    if bad:
        raise UnsupportedError(f"graph {graph.name!r}: {mode} mode cannot run {', '.join(bad)}")

    last_use: dict[int, int] = {}
    for pos, op in enumerate(graph.ops):
        for t in op.inputs:
            last_use[t] = pos
    outputs = set(graph.outputs)
    consts: dict[int, np.ndarray] = {}
    for pos, op in enumerate(graph.ops):
        call = Call(op, graph, mode, values, n, consts)
        results = kernels[op.type](call)
        for j, (t, v) in enumerate(zip(op.outputs, results)):
            want = call.out_shape(j)
            if v.shape != want:
                v = v.reshape(want)
            values[t] = v
        if not keep:
            for t in set(op.inputs):
                if last_use.get(t) == pos and t not in outputs and t in values:
                    del values[t]
    if keep:
        return values
    return {t: values[t] for t in graph.outputs}
