"""Build tiny single-op .tflite models in tests (flatbuffer object API shipped with ai-edge-litert).

Used to check `tflite` mode against the interpreter on ops the shared models do not contain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
flatbuffers = pytest.importorskip("flatbuffers")

_TYPES = {"float32": schema.TensorType.FLOAT32, "int8": schema.TensorType.INT8,
          "int32": schema.TensorType.INT32, "uint8": schema.TensorType.UINT8,
          "int16": schema.TensorType.INT16, "int64": schema.TensorType.INT64}


@dataclass
class Spec:
    shape: tuple
    dtype: str = "int8"
    scale: object = None          # float or sequence (per-axis)
    zp: object = 0
    axis: int = 0
    data: np.ndarray | None = None


def options(name: str, **fields):
    """(BuiltinOptions type code, options object) for e.g. options('Conv2DOptions', padding=0)."""
    obj = getattr(schema, name + "T")()
    for k, v in fields.items():
        setattr(obj, k, v)
    return getattr(schema.BuiltinOptions, name), obj


def single_op_model(op: str, inputs: list, outputs: list, opts=None) -> bytes:
    tensors, buffers, ins, graph_ins = [], [schema.BufferT()], [], []
    for i, spec in enumerate(list(inputs) + list(outputs)):
        if spec is None:
            ins.append(-1)
            continue
        t = schema.TensorT()
        t.shape = list(spec.shape)
        t.type = _TYPES[spec.dtype]
        t.name = f"t{i}"
        t.buffer = 0
        if spec.scale is not None:
            q = schema.QuantizationParametersT()
            q.scale = list(np.atleast_1d(np.asarray(spec.scale, dtype=np.float32)).tolist())
            q.zeroPoint = list(np.broadcast_to(np.atleast_1d(spec.zp), (len(q.scale),)).astype(int).tolist())
            q.quantizedDimension = spec.axis
            t.quantization = q
        if spec.data is not None:
            b = schema.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(spec.data, dtype=spec.dtype).tobytes(), dtype=np.uint8)
            t.buffer = len(buffers)
            buffers.append(b)
        index = len(tensors)
        tensors.append(t)
        if i < len(inputs):
            ins.append(index)
            if spec.data is None:
                graph_ins.append(index)
    n_out = len(outputs)
    outs = list(range(len(tensors) - n_out, len(tensors)))

    code = schema.OperatorCodeT()
    builtin = getattr(schema.BuiltinOperator, op)
    code.builtinCode = builtin
    code.deprecatedBuiltinCode = min(builtin, 127)
    code.version = 1
    operator = schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs = ins
    operator.outputs = outs
    if opts is not None:
        operator.builtinOptionsType, operator.builtinOptions = opts
    sub = schema.SubGraphT()
    sub.tensors, sub.inputs, sub.outputs, sub.operators = tensors, graph_ins, outs, [operator]
    sub.name = "main"
    model = schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.subgraphs = [sub]
    model.buffers = buffers
    model.description = "mlitool test model"
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())
