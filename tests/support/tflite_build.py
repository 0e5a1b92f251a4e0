"""Build small (and deliberately odd or hostile) .tflite flatbuffers for tests.

Uses the `flatbuffers` builder with the generated `tflite` schema functions, so a test can state every
field it writes and compare the reader's result against those values.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import flatbuffers
import numpy as np


def _m(name: str):
    return importlib.import_module(f"tflite.{name}")


TYPE_CODES = {"float32": 0, "float16": 1, "int32": 2, "uint8": 3, "int64": 4, "string": 5, "bool": 6,
              "int16": 7, "int8": 9, "int4": 17}


@dataclass
class T:
    """A tensor to write."""
    shape: list[int]
    dtype: str = "int8"
    buffer: int = 0
    name: str = "t"
    scale: list[float] | None = None
    zero_point: list[int] | None = None
    axis: int = 0
    is_variable: bool = False
    shape_signature: list[int] | None = None


@dataclass
class Op:
    opcode: int
    inputs: list[int]
    outputs: list[int]
    fc_options: bool = False                   # attach FullyConnectedOptions (fused RELU)


@dataclass
class Code:
    builtin: int = 0
    deprecated: int | None = None
    custom: str | None = None
    version: int = 1


@dataclass
class Buf:
    """Buffer contents: inline bytes, or an (offset, size) pair pointing outside the flatbuffer."""
    data: bytes | None = None
    offset: int | None = None
    size: int | None = None


@dataclass
class Spec:
    tensors: list[T]
    ops: list[Op]
    codes: list[Code]
    buffers: list[Buf] = field(default_factory=lambda: [Buf()])
    inputs: list[int] = field(default_factory=lambda: [0])
    outputs: list[int] = field(default_factory=list)
    signature: str | None = None


def build(spec: Spec) -> bytes:
    b = flatbuffers.Builder(1024)
    Model, SubGraph, Tensor, Operator = _m("Model"), _m("SubGraph"), _m("Tensor"), _m("Operator")
    OperatorCode, Buffer, QP = _m("OperatorCode"), _m("Buffer"), _m("QuantizationParameters")
    FCO, SigDef = _m("FullyConnectedOptions"), _m("SignatureDef")

    def ivec(values, dtype=np.int32):
        return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def table_vec(start_fn, offsets):
        start_fn(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    buffers = []
    for buf in spec.buffers:
        data = b.CreateNumpyVector(np.frombuffer(buf.data, np.uint8)) if buf.data is not None else None
        Buffer.Start(b)
        if data is not None:
            Buffer.AddData(b, data)
        if buf.offset is not None:
            Buffer.AddOffset(b, buf.offset)
            Buffer.AddSize(b, buf.size)
        buffers.append(Buffer.End(b))

    tensors = []
    for t in spec.tensors:
        name = b.CreateString(t.name)
        shape = ivec(t.shape)
        sig = ivec(t.shape_signature) if t.shape_signature is not None else None
        quant = None
        if t.scale is not None:
            scale = b.CreateNumpyVector(np.asarray(t.scale, np.float32))
            zp = ivec(t.zero_point, np.int64) if t.zero_point is not None else None
            QP.Start(b)
            QP.AddScale(b, scale)
            if zp is not None:
                QP.AddZeroPoint(b, zp)
            QP.AddQuantizedDimension(b, t.axis)
            quant = QP.End(b)
        Tensor.Start(b)
        Tensor.AddShape(b, shape)
        Tensor.AddType(b, TYPE_CODES[t.dtype])
        Tensor.AddBuffer(b, t.buffer)
        Tensor.AddName(b, name)
        if quant is not None:
            Tensor.AddQuantization(b, quant)
        if t.is_variable:
            Tensor.AddIsVariable(b, True)
        if sig is not None:
            Tensor.AddShapeSignature(b, sig)
        tensors.append(Tensor.End(b))

    ops = []
    for op in spec.ops:
        ins, outs = ivec(op.inputs), ivec(op.outputs)
        opts = None
        if op.fc_options:
            FCO.Start(b)
            FCO.AddFusedActivationFunction(b, 1)
            FCO.AddKeepNumDims(b, True)
            opts = FCO.End(b)
        Operator.Start(b)
        Operator.AddOpcodeIndex(b, op.opcode)
        Operator.AddInputs(b, ins)
        Operator.AddOutputs(b, outs)
        if opts is not None:
            Operator.AddBuiltinOptionsType(b, 8)
            Operator.AddBuiltinOptions(b, opts)
        ops.append(Operator.End(b))

    sg_name = b.CreateString("main")
    t_vec = table_vec(SubGraph.StartTensorsVector, tensors)
    o_vec = table_vec(SubGraph.StartOperatorsVector, ops)
    in_vec, out_vec = ivec(spec.inputs), ivec(spec.outputs)
    SubGraph.Start(b)
    SubGraph.AddTensors(b, t_vec)
    SubGraph.AddInputs(b, in_vec)
    SubGraph.AddOutputs(b, out_vec)
    SubGraph.AddOperators(b, o_vec)
    SubGraph.AddName(b, sg_name)
    subgraph = SubGraph.End(b)

    codes = []
    for c in spec.codes:
        custom = b.CreateString(c.custom) if c.custom is not None else None
        OperatorCode.Start(b)
        deprecated = c.deprecated if c.deprecated is not None else min(c.builtin, 127)
        OperatorCode.AddDeprecatedBuiltinCode(b, deprecated)
        OperatorCode.AddBuiltinCode(b, c.builtin)
        OperatorCode.AddVersion(b, c.version)
        if custom is not None:
            OperatorCode.AddCustomCode(b, custom)
        codes.append(OperatorCode.End(b))

    sigs = []
    if spec.signature is not None:
        key = b.CreateString(spec.signature)
        SigDef.Start(b)
        SigDef.AddSignatureKey(b, key)
        sigs.append(SigDef.End(b))

    desc = b.CreateString("built by tests")
    code_vec = table_vec(Model.StartOperatorCodesVector, codes)
    sg_vec = table_vec(Model.StartSubgraphsVector, [subgraph])
    buf_vec = table_vec(Model.StartBuffersVector, buffers)
    sig_vec = table_vec(Model.StartSignatureDefsVector, sigs) if sigs else None
    Model.Start(b)
    Model.AddVersion(b, 3)
    Model.AddOperatorCodes(b, code_vec)
    Model.AddSubgraphs(b, sg_vec)
    Model.AddDescription(b, desc)
    Model.AddBuffers(b, buf_vec)
    if sig_vec is not None:
        Model.AddSignatureDefs(b, sig_vec)
    b.Finish(Model.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def fc_spec(weights: np.ndarray | None = None) -> Spec:
    """A one-op int8 FULLY_CONNECTED model: input [1,4], weights [3,4], bias [3], output [1,3]."""
    w = np.arange(-6, 6, dtype=np.int8).reshape(3, 4) if weights is None else weights
    bias = np.array([100, -200, 300], np.int32)
    return Spec(
        tensors=[
            T([1, 4], name="input", scale=[0.5], zero_point=[-3], shape_signature=[-1, 4]),
            T([3, 4], buffer=1, name="weights", scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0]),
            T([3], dtype="int32", buffer=2, name="bias", scale=[0.05, 0.1, 0.15],
              zero_point=[0, 0, 0]),
            T([1, 3], name="output", scale=[0.25], zero_point=[7]),
        ],
        ops=[Op(0, [0, 1, 2], [3], fc_options=True)],
        codes=[Code(builtin=9)],
        buffers=[Buf(), Buf(w.tobytes()), Buf(bias.tobytes()), Buf()],
        inputs=[0], outputs=[3], signature="serving_default",
    )
