"""Read a .tflite file into the IR (`mlitool.ir.Model`). The only module that imports `tflite`.

The file is untrusted input. Every offset, length and vector size read from it is checked against the
file size before anything is sliced or allocated; constant data is a read-only numpy view of the file
bytes. Whatever the flatbuffer accessors raise on corrupt data becomes a `ModelFormatError` naming the
file. Untidy but accepted models (TFLite / TFLite Micro run them) are normalised, and each
normalisation is recorded in `Model.warnings`.
"""

from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from mlitool import ir, optable
from mlitool.errors import ModelFormatError

# Checked reads; the schema's vtable slots and layouts (checked by tests/reader/test_reader_slots)
from mlitool.tflite.checked import (
    _BUFFER_DATA,
    _I8,
    _I32,
    _MODEL_BUFFERS,
    _MODEL_DESCRIPTION,
    _MODEL_OPCODES,
    _MODEL_SIGNATURES,
    _MODEL_SUBGRAPHS,
    _OP_INPUTS,
    _OP_INTERMEDIATES,
    _OP_OUTPUTS,
    _OPCODE_CUSTOM,
    _QUANT_DIMENSION,
    _QUANT_SCALE,
    _QUANT_ZERO_POINT,
    _SIGNATURE_KEY,
    _SUBGRAPH_INPUTS,
    _SUBGRAPH_NAME,
    _SUBGRAPH_OPS,
    _SUBGRAPH_OUTPUTS,
    _SUBGRAPH_TENSORS,
    _TENSOR_BUFFER,
    _TENSOR_IS_VARIABLE,
    _TENSOR_NAME,
    _TENSOR_QUANT,
    _TENSOR_SHAPE,
    _TENSOR_SHAPE_SIGNATURE,
    _TENSOR_TYPE,
    _U8,
    _U32,
    STORAGE,
    TYPES,
    Checked,
    Corrupt,
)
from mlitool.tflite.options import name_enums, option_fields
from mlitool.tflite.validate import normalise_output_shapes

IDENTIFIER = b"TFL3"
MAX_TENSOR_ELEMENTS = 2**31 - 1  # TFLite(-Micro) element counts are int; more is hostile
_CUSTOM = 32

# Union type code -> options class, for BuiltinOptions and BuiltinOptions2.
_OPTION_CLASSES = {
    union: {
        code: getattr(tflite, name, None)
        for name, code in vars(union).items()
        if isinstance(code, int) and name != "NONE"
    }
    for union in (tflite.BuiltinOptions, tflite.BuiltinOptions2)
}
_OPTION_NAMES = {
    code: name
    for name, code in vars(tflite.BuiltinOptions).items()
    if isinstance(code, int) and name != "NONE"
}


# --------------------------------------------------------------------------------------------------
# Public entry point


def read_model(path: str | os.PathLike) -> ir.Model:
    """Parse a .tflite file into an `ir.Model` (all subgraphs; subgraph 0 is the main graph).

    Raises ModelFormatError (exit code 2) for a missing, unreadable, non-TFLite, truncated or
    internally inconsistent file.
    """
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise ModelFormatError("no such file", name)
    if p.is_dir():
        raise ModelFormatError("is a directory, not a .tflite file", name)
    try:
        buf = p.read_bytes()
    except OSError as exc:
        raise ModelFormatError(f"cannot read the file: {exc.strerror or exc}", name) from None
    return parse_model(buf, name)


def parse_model(buf: bytes, name: str = "<bytes>") -> ir.Model:
    """Parse the bytes of a .tflite file (see `read_model`); `name` is used in messages."""
    if len(buf) == 0:
        raise ModelFormatError("the file is empty", name)
    if len(buf) < 8 or buf[4:8] != IDENTIFIER:
        raise ModelFormatError(
            "not a TensorFlow Lite model (no 'TFL3' flatbuffer identifier at bytes 4..8)", name
        )
    try:
        return _Reader(buf, name).model()
    except Corrupt as exc:
        raise ModelFormatError(str(exc), name) from None
    except struct.error:
        raise ModelFormatError(
            f"truncated or corrupt: a flatbuffer field points outside the file ({len(buf)} bytes)",
            name,
        ) from None
    except (
        IndexError,
        ValueError,
        TypeError,
        OverflowError,
        KeyError,
        UnicodeDecodeError,
        RecursionError,
        MemoryError,
    ) as exc:
        detail = " ".join(str(exc).split())[:200]  # one line, bounded
        raise ModelFormatError(
            f"corrupt flatbuffer ({type(exc).__name__}: {detail})", name
        ) from None


# --------------------------------------------------------------------------------------------------
# The reader


class _Reader:
    def __init__(self, buf: bytes, name: str):
        self.buf = buf
        self.name = name
        self.chk = Checked(buf)
        self.warnings: list[str] = []

    def model(self) -> ir.Model:
        root = struct.unpack_from("<I", self.buf, 0)[0]
        self.chk.span(root, 4, "the root table")
        m = tflite.Model.GetRootAs(self.buf, 0)
        self.chk.span(
            m._tab.Pos - struct.unpack_from("<i", self.buf, m._tab.Pos)[0], 4, "the root vtable"
        )
        self.n_buffers = self.chk.tables(m, _MODEL_BUFFERS, "the buffer table")
        self.m = m
        opcodes = [
            self._opcode(m.OperatorCodes(i), i)
            for i in range(self.chk.tables(m, _MODEL_OPCODES, "the operator-code table"))
        ]
        n_sub = self.chk.tables(m, _MODEL_SUBGRAPHS, "the subgraph table")
        if n_sub == 0:
            raise Corrupt("the model has no subgraphs")
        subgraphs = [self._subgraph(m.Subgraphs(i), i, opcodes) for i in range(n_sub)]
        signatures = [
            self.chk.string(m.SignatureDefs(i), _SIGNATURE_KEY, "a signature key")
            for i in range(self.chk.tables(m, _MODEL_SIGNATURES, "the signature table"))
        ]
        return ir.Model(
            path=self.name,
            subgraphs=subgraphs,
            version=int(m.Version()),
            description=self.chk.string(m, _MODEL_DESCRIPTION, "the description"),
            signature_names=signatures,
            warnings=self.warnings,
        )

    # -- operator codes ----------------------------------------------------------------------------

    def _opcode(self, oc: Any, i: int) -> tuple[str, str | None, int]:
        # Schema 3a: builtin_code is authoritative, deprecated_builtin_code (int8) saturates at 127.
        tab = oc._tab
        o = tab.Offset(10)
        builtin = tab.Get(flatbuffers.number_types.Int32Flags, o + tab.Pos) if o else 0
        code = max(int(oc.DeprecatedBuiltinCode()), int(builtin))
        custom = (
            self.chk.string(oc, _OPCODE_CUSTOM, f"the custom code of operator code {i}") or None
        )
        if code == _CUSTOM:
            return "CUSTOM", custom, int(oc.Version())
        return BUILTIN_OPCODE2NAME.get(code, f"UNKNOWN_{code}"), None, int(oc.Version())

    # -- subgraphs ---------------------------------------------------------------------------------

    def _subgraph(self, sg: Any, gi: int, opcodes: list) -> ir.Graph:
        where = f"subgraph {gi}"
        n_t = self.chk.tables(sg, _SUBGRAPH_TENSORS, f"the tensor table of {where}")
        tensors = [self._tensor(sg.Tensors(i), i, where) for i in range(n_t)]
        inputs = self._indices(sg, _SUBGRAPH_INPUTS, n_t, f"the inputs of {where}", optional=False)
        outputs = self._indices(
            sg, _SUBGRAPH_OUTPUTS, n_t, f"the outputs of {where}", optional=False
        )
        n_ops = self.chk.tables(sg, _SUBGRAPH_OPS, f"the operator table of {where}")
        ops = [self._op(sg.Operators(i), i, opcodes, n_t, where) for i in range(n_ops)]
        name = self.chk.string(sg, _SUBGRAPH_NAME, f"the name of {where}")
        # An empty tensor that no op writes needs no data (TFLite runs such files): it is an
        # empty constant, so it is ready for every op that reads it.
        written = {i for op in ops for i in op.outputs} | set(inputs)
        tensors = [
            _empty_constant(t)
            if t.data is None and t.size == 0 and not t.is_variable and t.index not in written
            else t
            for t in tensors
        ]
        self._bias_scales(tensors, ops, where)
        graph = ir.Graph(
            name=name, tensors=tensors, ops=ops, inputs=list(inputs), outputs=list(outputs)
        )
        if gi == 0:  # the graph mlitool converts (its op labels carry no subgraph)
            self.warnings += normalise_output_shapes(graph)
        return graph

    def _bias_scales(self, tensors: list[ir.Tensor], ops: list[ir.Op], where: str) -> None:
        """A quantized bias with one scale for per-channel weights, or one per channel for
        per-tensor weights: TFLite runs it, its kernels never read the bias's scales but add
        it in units of input scale x weight scale. Those become its scales."""
        for op in ops:
            spec = optable.get(op.type)
            if spec is None or not spec.mac:  # MAC ops: integer bias in those units
                continue
            x, w, b = (
                tensors[i] if i >= 0 else None for i in map(op.input, ("input", "weights", "bias"))
            )
            if (
                any(t is None or t.quant is None for t in (x, w, b))
                or x.quant.per_axis
                or b.dtype not in ("int32", "int64")
            ):
                continue
            n_w, n_b = w.quant.scale.size, b.quant.scale.size
            if n_w == n_b or (n_w > 1 and b.shape != (n_w,)):  # validation names bad shapes
                continue
            scale = np.float32(x.quant.scale[0]) * w.quant.scale.astype(np.float32)
            b.quant = ir.Quant(
                scale=scale.astype(np.float64),
                zero_point=np.zeros(n_w, np.int64),
                axis=0 if n_w > 1 else None,
            )
            self.warnings.append(
                f"tensor {b.index} '{b.name}' of {where}, the bias of op "
                f"{op.index} ({op.type}): {n_b} quantization scale(s) for "
                f"weights with {n_w}; scales set to input scale x weight scale, "
                "the units TFLite's kernels add it in"
            )

    def _indices(self, obj: Any, slot: int, n_tensors: int, what: str, optional: bool) -> tuple:
        arr = self.chk.array(obj, slot, "<i4", what)
        if arr is None:
            return ()
        low = -1 if optional else 0
        bad = arr[(arr < low) | (arr >= n_tensors)]
        if bad.size:
            raise Corrupt(
                f"{what} refer to tensor {int(bad[0])}, but there are {n_tensors} tensors"
            )
        return tuple(int(v) for v in arr)

    # -- operators ---------------------------------------------------------------------------------

    def _op(self, op: Any, i: int, opcodes: list, n_t: int, where: str) -> ir.Op:
        idx = int(op.OpcodeIndex())
        if not 0 <= idx < len(opcodes):
            raise Corrupt(
                f"op {i} of {where} uses operator code {idx}, but there are {len(opcodes)}"
            )
        op_type, custom, version = opcodes[idx]
        label = f"op {i} ({custom or op_type}) of {where}"
        inputs = self._indices(op, _OP_INPUTS, n_t, f"the inputs of {label}", optional=True)
        outputs = self._indices(op, _OP_OUTPUTS, n_t, f"the outputs of {label}", optional=True)
        intermediates = self._indices(
            op, _OP_INTERMEDIATES, n_t, f"the intermediates of {label}", optional=True
        )
        options, table = {}, None
        if op_type != "CUSTOM":
            if op.BuiltinOptions() is not None:
                table = _OPTION_NAMES.get(op.BuiltinOptionsType())
            options = self._options(
                op.BuiltinOptionsType(), op.BuiltinOptions(), tflite.BuiltinOptions, label
            )
            o = op._tab.Offset(28)  # builtin_options_2 (StableHLO ops)
            if o:
                options.update(
                    self._options(
                        op.BuiltinOptions2Type(),
                        op.BuiltinOptions2(),
                        tflite.BuiltinOptions2,
                        label,
                    )
                )
        return ir.Op(
            index=i,
            type=op_type,
            inputs=inputs,
            outputs=outputs,
            options=options,
            custom_code=custom,
            version=version,
            options_table=table,
            intermediates=intermediates,
        )

    def _options(self, kind: int, table: Any, union: type, label: str) -> dict[str, Any]:
        if kind == 0 or table is None:
            return {}
        cls = _OPTION_CLASSES[union].get(kind)
        if cls is None:
            self.warnings.append(f"{label}: options of unknown type {kind} ignored")
            return {}
        obj = cls()
        obj.Init(table.Bytes, table.Pos)
        self.chk.span(table.Pos, 4, f"the options of {label}")
        return self._decode_options(obj, cls, label)

    def _decode_options(self, obj: Any, cls: type, label: str) -> dict[str, Any]:
        """Every scalar and scalar-vector field of an options table, under snake_case keys."""
        out: dict[str, Any] = {}
        for meth, key, is_vector in option_fields(cls):
            if is_vector:  # vector accessor Field(j)
                length = getattr(obj, meth + "Length")()
                self.chk.span(0, length, f"option {key} of {label}")
                arr = getattr(obj, meth + "AsNumpy")()
                out[key] = () if isinstance(arr, int) else tuple(arr.tolist())
                continue
            value = getattr(obj, meth)()
            if isinstance(value, (bool, int, float)):
                out[key] = value
        return name_enums(out)

    # -- tensors -----------------------------------------------------------------------------------

    def _tensor(self, t: Any, i: int, where: str) -> ir.Tensor:
        name = self.chk.string(t, _TENSOR_NAME, f"the name of tensor {i} of {where}")
        label = f"tensor {i} '{name}' of {where}"
        code = self.chk.scalar(t, _TENSOR_TYPE, _I8)
        if code not in TYPES:
            raise Corrupt(f"{label} has unknown element type {code}")
        dtype, storage = TYPES[code]
        shape_arr = self.chk.array(t, _TENSOR_SHAPE, "<i4", f"the shape of {label}")
        shape = () if shape_arr is None else tuple(shape_arr.tolist())
        if any(d < 0 for d in shape):
            raise Corrupt(f"{label} has a negative dimension in its shape {list(shape)}")
        n_elements = 1
        for d in shape:
            n_elements *= d
        if n_elements > MAX_TENSOR_ELEMENTS:
            raise Corrupt(f"{label} has an implausible shape {list(shape)} ({n_elements} elements)")
        sig_arr = self.chk.array(
            t, _TENSOR_SHAPE_SIGNATURE, "<i4", f"the shape signature of {label}"
        )
        signature = None if sig_arr is None else tuple(sig_arr.tolist())
        quant = self._quant(
            t.Quantization() if self.chk.offset(t, _TENSOR_QUANT) else None, shape, label
        )
        data = self._data(t, shape, n_elements, dtype, storage, label)
        return ir.Tensor(
            index=i,
            name=name,
            shape=shape,
            dtype=dtype,
            data=data,
            quant=quant,
            is_variable=bool(self.chk.scalar(t, _TENSOR_IS_VARIABLE, _U8)),
            shape_signature=signature,
        )

    def _quant(self, q: Any, shape: tuple[int, ...], label: str) -> ir.Quant | None:
        if q is None:
            return None
        self.chk.span(q._tab.Pos, 4, f"the quantization of {label}")
        scale = self.chk.array(q, _QUANT_SCALE, "<f4", f"the scales of {label}")
        zp = self.chk.array(q, _QUANT_ZERO_POINT, "<i8", f"the zero points of {label}")
        if scale is None or scale.size == 0:
            return None  # TFLite: no scales means not quantized
        scale = scale.astype(np.float64)
        n = scale.size
        if not np.all(np.isfinite(scale) & (scale > 0)):
            self.warnings.append(
                f"{label}: quantization scales include zero, negative or non-finite values"
            )
        if zp is None or zp.size == 0:
            self.warnings.append(
                f"{label}: quantization has scales but no zero points; zero points set to 0"
            )
            zp = np.zeros(n, np.int64)
        elif zp.size != n:
            if zp.size != 1:
                raise Corrupt(f"{label} has {n} quantization scales but {zp.size} zero points")
            self.warnings.append(f"{label}: one zero point for all its scales; broadcast to all")
            zp = np.full(n, zp[0], np.int64)
        else:
            zp = zp.astype(np.int64)
        axis = self.chk.scalar(q, _QUANT_DIMENSION, _I32)
        if n == 1:
            if axis != 0 and 0 <= axis < len(shape) and shape[axis] != 1:
                self.warnings.append(
                    f"{label}: one quantization scale with quantized_dimension "
                    f"{axis}; treated as per-tensor"
                )
            return ir.Quant(scale=scale, zero_point=zp, axis=None)
        if len(shape) == 1 and shape[0] == n and axis != 0:
            # TFLite Micro's person_detect biases: N scales for N elements, axis 3 (the
            # weights' output-channel axis). TFLite Micro reads them along axis 0.
            # The text after the label is the same for every such tensor: one kind on stderr.
            self.warnings.append(
                f"{label}: one quantization scale per element with "
                f"quantized_dimension {axis} on a 1-D tensor; read as per-axis "
                "along axis 0"
            )
            axis = 0
        if not 0 <= axis < len(shape):
            raise Corrupt(f"{label} is quantized along axis {axis}, but its shape is {list(shape)}")
        if shape[axis] != n:
            raise Corrupt(
                f"{label} has {n} quantization scales for dimension {axis} of size "
                f"{shape[axis]} (shape {list(shape)})"
            )
        return ir.Quant(scale=scale, zero_point=zp, axis=axis)

    def _data(
        self,
        t: Any,
        shape: tuple[int, ...],
        n_elements: int,
        dtype: str,
        storage: str | None,
        label: str,
    ) -> np.ndarray | None:
        b = self.chk.scalar(t, _TENSOR_BUFFER, _U32)
        if b == 0:
            return None  # buffer 0 is the empty sentinel
        if not 0 <= b < self.n_buffers:
            raise Corrupt(f"{label} uses buffer {b}, but the model has {self.n_buffers} buffers")
        span = self._buffer_span(b, label)
        if span is None:
            return None
        start, nbytes = span
        if t.Sparsity() is not None:
            self.warnings.append(f"{label}: sparse constant data is not decoded")
            return None
        if storage is None:
            self.warnings.append(f"{label}: constant data of type {dtype} is not decoded")
            return None
        if storage == "int4":  # two values per byte, low nibble first
            need = (n_elements + 1) // 2
            self._check_bytes(nbytes, need, shape, dtype, label)
            packed = np.frombuffer(self.buf, np.uint8, count=need, offset=start)
            nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(-1)[:n_elements]
            return ((nibbles.astype(np.int8) ^ 8) - 8).reshape(shape)
        dt = np.dtype(storage)
        self._check_bytes(nbytes, n_elements * dt.itemsize, shape, dtype, label)
        return np.frombuffer(self.buf, dt, count=n_elements, offset=start).reshape(shape)

    def _check_bytes(self, have: int, need: int, shape: tuple, dtype: str, label: str) -> None:
        if have != need:
            raise Corrupt(
                f"{label}: shape {list(shape)} of {dtype} needs {need} bytes, but its "
                f"buffer holds {have}"
            )

    def _buffer_span(self, b: int, label: str) -> tuple[int, int] | None:
        """(start, size) of buffer b's bytes in the file, or None when it is empty."""
        buffer = self.m.Buffers(b)
        self.chk.span(buffer._tab.Pos, 4, f"buffer {b} (of {label})")
        vec = self.chk.vector(buffer, _BUFFER_DATA, 1, f"buffer {b} (of {label})")
        if vec is not None and vec[1] > 0:
            return vec
        offset, size = int(buffer.Offset()), int(buffer.Size())
        if offset > 1:  # >2 GB models: data after the flatbuffer
            self.chk.span(offset, size, f"buffer {b} (of {label}, stored outside the flatbuffer)")
            return (offset, size) if size > 0 else None
        return None


def _empty_constant(t: ir.Tensor) -> ir.Tensor:
    """`t` (no elements) with empty constant data, when its element type is decoded at all."""
    storage = STORAGE.get(t.dtype)
    if storage is None:
        return t
    data = np.zeros(t.shape, np.int8 if storage == "int4" else storage)
    data.flags.writeable = False  # as the file's other constants
    return dataclasses.replace(t, data=data)
