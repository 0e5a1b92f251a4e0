"""Read a .tflite file into the IR (`mlitool.ir.Model`). The only module that imports `tflite`.

The file is untrusted input. Every offset, length and vector size read from it is checked against the
file size before anything is sliced or allocated; constant data is a read-only numpy view of the file
bytes. Whatever the flatbuffer accessors raise on corrupt data becomes a `ModelFormatError` naming the
file. Untidy but accepted models (TFLite / TFLite Micro run them) are normalised, and each
normalisation is recorded in `Model.warnings`. The tensors are decoded by read_tensors.py.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from mlitool import ir
from mlitool.errors import ModelFormatError
from mlitool.ops import spec as opspec

# Checked reads; the schema's vtable slots and layouts (checked by tests/reader/test_reader_slots)
from mlitool.tflite.checked import (
    _MODEL_BUFFERS,
    _MODEL_DESCRIPTION,
    _MODEL_OPCODES,
    _MODEL_SIGNATURES,
    _MODEL_SUBGRAPHS,
    _OP_CUSTOM_OPTIONS,
    _OP_INPUTS,
    _OP_INTERMEDIATES,
    _OP_OUTPUTS,
    _OPCODE_CUSTOM,
    _SIGNATURE_KEY,
    _SUBGRAPH_INPUTS,
    _SUBGRAPH_NAME,
    _SUBGRAPH_OPS,
    _SUBGRAPH_OUTPUTS,
    _SUBGRAPH_TENSORS,
    Checked,
    Corrupt,
)
from mlitool.tflite.options import name_enums, option_fields
from mlitool.tflite.read_tensors import TensorReader, empty_constant
from mlitool.tflite.validate import normalise_output_shapes

IDENTIFIER = b"TFL3"
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
        n_buffers = self.chk.tables(m, _MODEL_BUFFERS, "the buffer table")
        self.tensors = TensorReader(self.buf, self.chk, m, n_buffers, self.warnings)
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
        tensors = [self.tensors.tensor(sg.Tensors(i), i, where) for i in range(n_t)]
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
            empty_constant(t)
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
            spec = opspec.get(op.type)
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
        options, table, custom_options = {}, None, b""
        if op_type == "CUSTOM":  # decoded by the op's family (flexbuffers) where it knows the op
            raw = self.chk.array(op, _OP_CUSTOM_OPTIONS, "u1", f"the custom options of {label}")
            custom_options = b"" if raw is None else raw.tobytes()
        else:
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
            custom_options=custom_options,
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
