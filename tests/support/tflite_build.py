"""Build .tflite flatbuffers for tests: small models of one or a few ops, and deliberately odd or
hostile files.

Uses the `flatbuffers` builder with the generated `tflite` schema functions, so a test can state every
field it writes and compare the reader's result against those values. `build` writes a `Spec` field
by field; `graph_model` and `single_op_model` build the `Spec` of a graph of named ops, giving each
constant tensor its own buffer.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field

import flatbuffers
import numpy as np
import tflite


def _m(name: str):
    return importlib.import_module(f"tflite.{name}")


@dataclass
class T:
    """A tensor to write. `scale` is a float or a per-axis sequence (None: not quantized);
    `zero_point` an int (one per scale), a sequence written as given, or None (no zero points);
    `data` the contents of a constant (for `graph_model`; `build` writes `buffer`)."""

    shape: list[int]
    dtype: str = "int8"
    scale: object = None
    zero_point: object = 0
    axis: int = 0
    data: np.ndarray | None = None
    buffer: int = 0
    name: str | None = None  # None: "t<index>"
    is_variable: bool = False
    shape_signature: list[int] | None = None


@dataclass
class Options:
    """A builtin options table, e.g. Options("Conv2DOptions", {"padding": 0, "strideW": 2})."""

    name: str
    fields: dict


def options(name: str, **fields) -> Options:
    return Options(name, fields)


@dataclass
class Op:
    opcode: int
    inputs: list[int]
    outputs: list[int]
    options: Options | None = None
    intermediates: list[int] | None = None
    custom_options: bytes | None = None  # a custom op's options (flexbuffer bytes)


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
    SigDef = _m("SignatureDef")

    def ivec(values, dtype=np.int32):
        return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def table_vec(start_fn, offsets):
        start_fn(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    buffers = []
    for buf in spec.buffers:
        data = (
            b.CreateNumpyVector(np.frombuffer(buf.data, np.uint8)) if buf.data is not None else None
        )
        Buffer.Start(b)
        if data is not None:
            Buffer.AddData(b, data)
        if buf.offset is not None:
            Buffer.AddOffset(b, buf.offset)
            Buffer.AddSize(b, buf.size)
        buffers.append(Buffer.End(b))

    tensors = []
    for i, t in enumerate(spec.tensors):
        name = b.CreateString(t.name if t.name is not None else f"t{i}")
        shape = ivec(t.shape)
        sig = ivec(t.shape_signature) if t.shape_signature is not None else None
        quant = None
        if t.scale is not None:
            scales = np.atleast_1d(np.asarray(t.scale, np.float32))
            scale = b.CreateNumpyVector(scales)
            zp = None
            if t.zero_point is not None:
                zps = t.zero_point if np.ndim(t.zero_point) else [t.zero_point] * len(scales)
                zp = ivec(zps, np.int64)
            QP.Start(b)
            QP.AddScale(b, scale)
            if zp is not None:
                QP.AddZeroPoint(b, zp)
            QP.AddQuantizedDimension(b, t.axis)
            quant = QP.End(b)
        Tensor.Start(b)
        Tensor.AddShape(b, shape)
        Tensor.AddType(b, getattr(tflite.TensorType, t.dtype.upper()))
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
        inter = ivec(op.intermediates) if op.intermediates is not None else None
        opts = _options_table(b, op.options) if op.options is not None else None
        custom_opts = None
        if op.custom_options is not None:
            custom_opts = ivec(np.frombuffer(op.custom_options, np.uint8), np.uint8)
        Operator.Start(b)
        Operator.AddOpcodeIndex(b, op.opcode)
        Operator.AddInputs(b, ins)
        Operator.AddOutputs(b, outs)
        if inter is not None:
            Operator.AddIntermediates(b, inter)
        if opts is not None:
            Operator.AddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, op.options.name))
            Operator.AddBuiltinOptions(b, opts)
        if custom_opts is not None:
            Operator.AddCustomOptions(b, custom_opts)  # format 0: flexbuffers
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


def _options_table(b: flatbuffers.Builder, opts: Options) -> int:
    """Write `opts` with its table's generated Add<Field> functions (list values as int32 vectors)."""
    table = _m(opts.name)
    vectors = {
        k: b.CreateNumpyVector(np.asarray(v, np.int32))
        for k, v in opts.fields.items()
        if isinstance(v, (list, tuple))
    }
    table.Start(b)
    for k, v in opts.fields.items():
        getattr(table, "Add" + k[0].upper() + k[1:])(b, vectors.get(k, v))
    return table.End(b)


def graph_model(
    tensors: list[T],
    ops: list[tuple],
    inputs: list[int],
    outputs: list[int],
    versions: dict[str, int] | None = None,
) -> bytes:
    """A one-subgraph model: `ops` are (BuiltinOperator name, input indices, output indices,
    Options or None[, intermediate indices]); each tensor with `data` gets a buffer of its own.
    `versions`: op code versions other than 1 (LiteRT registers e.g. int8 ELU as version 2)."""
    buffers, written = [Buf()], []
    for t in tensors:
        if t.data is not None:
            data = np.ascontiguousarray(t.data, dtype=t.dtype).tobytes()
            t = dataclasses.replace(t, buffer=len(buffers))
            buffers.append(Buf(data))
        written.append(t)
    builtins = []
    for name, *_ in ops:
        if getattr(tflite.BuiltinOperator, name) not in builtins:
            builtins.append(getattr(tflite.BuiltinOperator, name))
    return build(
        Spec(
            tensors=written,
            ops=[
                Op(
                    builtins.index(getattr(tflite.BuiltinOperator, name)),
                    list(ins),
                    list(outs),
                    opts,
                    list(rest[0]) if rest else None,
                )
                for name, ins, outs, opts, *rest in ops
            ],
            codes=[Code(builtin=code, version=_version(code, versions or {})) for code in builtins],
            buffers=buffers,
            inputs=list(inputs),
            outputs=list(outputs),
        )
    )


def _version(code: int, versions: dict[str, int]) -> int:
    return next((v for k, v in versions.items() if getattr(tflite.BuiltinOperator, k) == code), 1)


def single_op_model(
    op: str, inputs: list, outputs: list, opts: Options | None = None, version: int = 1
) -> bytes:
    """A model of one `op`: `inputs` (None for an omitted optional input) and `outputs` are
    tensors; the inputs without data are the model's inputs."""
    tensors = [t for t in inputs if t is not None] + list(outputs)
    indices = iter(range(len(tensors)))
    ins = [-1 if t is None else next(indices) for t in inputs]
    outs = list(range(len(tensors) - len(outputs), len(tensors)))
    graph_inputs = [i for i, t in zip(ins, inputs) if t is not None and t.data is None]
    return graph_model(tensors, [(op, ins, outs, opts)], graph_inputs, outs, {op: version})


def fc_spec(weights: np.ndarray | None = None) -> Spec:
    """A one-op int8 FULLY_CONNECTED model: input [1,4], weights [3,4], bias [3], output [1,3]."""
    w = np.arange(-6, 6, dtype=np.int8).reshape(3, 4) if weights is None else weights
    bias = np.array([100, -200, 300], np.int32)
    return Spec(
        tensors=[
            T([1, 4], name="input", scale=[0.5], zero_point=[-3], shape_signature=[-1, 4]),
            T([3, 4], buffer=1, name="weights", scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0]),
            T(
                [3],
                dtype="int32",
                buffer=2,
                name="bias",
                scale=[0.05, 0.1, 0.15],
                zero_point=[0, 0, 0],
            ),
            T([1, 3], name="output", scale=[0.25], zero_point=[7]),
        ],
        ops=[
            Op(
                0,
                [0, 1, 2],
                [3],
                options("FullyConnectedOptions", fusedActivationFunction=1, keepNumDims=True),
            )
        ],
        codes=[Code(builtin=9)],
        buffers=[Buf(), Buf(w.tobytes()), Buf(bias.tobytes()), Buf()],
        inputs=[0],
        outputs=[3],
        signature="serving_default",
    )


def int32_const(values) -> T:
    """A constant int32 tensor of `values` (axes, sizes, paddings...)."""
    v = np.asarray(values, np.int32)
    return T(list(v.shape), dtype="int32", data=v)


def activation(shape, dtype: str = "int8", q: tuple[float, int] = (0.05, 3)) -> T:
    """An activation of `shape`: float32, int16 (scale q[0], zero point 0) or int8 (q)."""
    if dtype == "float32":
        return T(list(shape), dtype="float32")
    if dtype == "int16":
        return T(list(shape), dtype="int16", scale=[q[0]], zero_point=[0])
    return T(list(shape), scale=[q[0]], zero_point=[q[1]])


def unsupported_op_model() -> bytes:
    """A valid int8 model of one op neither MLI nor a fallback runs (SIGN: TFLite has it, TFLite Micro does not): what refusals are
    tested on."""
    return single_op_model(
        "SIGN", [T([1, 4], scale=[0.1], zero_point=[0])], [T([1, 4], scale=[0.1], zero_point=[0])]
    )


def dynamic_flatten_model(dtype: str = "int8", signatures: bool = True) -> bytes:
    """A Keras Flatten + Dense exported with a dynamic batch, as the converter writes it: x [1, 4,
    4, 2] (signature [-1, 4, 4, 2]) -> SHAPE -> STRIDED_SLICE (the batch, shrunk to a scalar) ->
    PACK(batch, -1) -> RESHAPE (stored [1, 1], signature [-1, -1]: placeholders) ->
    FULLY_CONNECTED [3, 32] -> y [1, 3]. `dtype` int8 (quantized) or float32; without
    `signatures`, only the non-constant shape input says the shape is computed at run time."""
    q8 = dtype == "int8"

    def act(shape, name, scale, zp, sig):
        return T(
            shape,
            dtype,
            scale if q8 else None,
            zp,
            name=name,
            shape_signature=sig if signatures else None,
        )

    rng = np.random.default_rng(23)
    if q8:
        w = T([3, 32], "int8", 0.01, 0, name="w", data=rng.integers(-127, 128, (3, 32)))
        b = T([3], "int32", 0.0005, 0, name="b", data=rng.integers(-900, 900, 3))
    else:
        w = T([3, 32], "float32", name="w", data=(np.arange(96).reshape(3, 32) - 48) / 64)
        b = T([3], "float32", name="b", data=np.array([0.5, -0.25, 1.0]))
    tensors = [
        act([1, 4, 4, 2], "x", 0.05, -3, [-1, 4, 4, 2]),
        T([4], "int32", name="shape"),
        T([1], "int32", name="begin", data=np.array([0])),
        T([1], "int32", name="end", data=np.array([1])),
        T([1], "int32", name="strides", data=np.array([1])),
        T([], "int32", name="batch"),
        T([], "int32", name="minus_one", data=np.array(-1)),
        T([2], "int32", name="packed"),
        act([1, 1], "flat", 0.05, -3, [-1, -1]),
        w,
        b,
        act([1, 3], "y", 0.08, 5, [-1, 3]),
    ]
    ops = [
        ("SHAPE", [0], [1], options("ShapeOptions", outType=2)),
        ("STRIDED_SLICE", [1, 2, 3, 4], [5], options("StridedSliceOptions", shrinkAxisMask=1)),
        ("PACK", [5, 6], [7], options("PackOptions", valuesCount=2, axis=0)),
        ("RESHAPE", [0, 7], [8], None),
        ("FULLY_CONNECTED", [8, 9, 10], [11], options("FullyConnectedOptions")),
    ]
    return graph_model(tensors, ops, [0], [11])
