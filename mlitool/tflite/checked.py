"""Bounds-checked reads of a .tflite flatbuffer (the reader's `Checked`), the vtable slots of the
fields it reads and the element type codes. A contradiction in the file raises `Corrupt`."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np


class Corrupt(Exception):
    """Internal: the file contradicts itself; turned into ModelFormatError with the path."""


# --------------------------------------------------------------------------------------------------
# Checked access to the flatbuffer


_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")
_I8 = struct.Struct("<b")
_U8 = struct.Struct("<B")


class Checked:
    """Bounds checks for spans inside the file bytes, and direct reads of table fields.

    `offset` and `scalar` read what the generated accessors (`Table.Offset`, `Get`) read, without
    their generic per-read overhead, which is most of the time of reading a model's tables.
    """

    def __init__(self, buf: bytes):
        self.buf = buf
        self.size = len(buf)

    def offset(self, obj: Any, slot: int) -> int:
        """`obj._tab.Offset(slot)`: the field's offset from its table, 0 when it is absent."""
        pos = obj._tab.Pos
        vtable = pos - _I32.unpack_from(self.buf, pos)[0]
        if vtable < 0:  # unpack_from would count from the end
            raise Corrupt(
                f"a vtable lies outside the file (byte {vtable}): the file is truncated or corrupt"
            )
        if slot < _U16.unpack_from(self.buf, vtable)[0]:
            return _U16.unpack_from(self.buf, vtable + slot)[0]
        return 0

    def scalar(self, obj: Any, slot: int, fmt: struct.Struct, default: int = 0) -> int:
        """A scalar field (`fmt` its little-endian layout), or `default` when absent."""
        o = self.offset(obj, slot)
        return fmt.unpack_from(self.buf, obj._tab.Pos + o)[0] if o else default

    def span(self, start: int, nbytes: int, what: str) -> None:
        if start < 0 or nbytes < 0 or start + nbytes > self.size:
            raise Corrupt(
                f"{what} lies outside the file (bytes {start}..{start + nbytes} of "
                f"{self.size}): the file is truncated or corrupt"
            )

    def vector(self, obj: Any, slot: int, elem_size: int, what: str) -> tuple[int, int] | None:
        """(start, length) of the vector in `slot` of table `obj`, checked; None when absent."""
        o = self.offset(obj, slot)
        if o == 0:
            return None
        at = obj._tab.Pos + o
        self.span(at, 4, what)
        start = at + _U32.unpack_from(self.buf, at)[0] + 4
        self.span(start - 4, 4, what)
        n = _U32.unpack_from(self.buf, start - 4)[0]
        self.span(start, n * elem_size, f"{what} ({n} entries)")
        return start, n

    def array(self, obj: Any, slot: int, dtype: str, what: str) -> np.ndarray | None:
        """A numpy view of a scalar vector field, or None when absent."""
        dt = np.dtype(dtype)
        vec = self.vector(obj, slot, dt.itemsize, what)
        if vec is None:
            return None
        start, n = vec
        return np.frombuffer(self.buf, dtype=dt, count=n, offset=start)

    def tables(self, obj: Any, slot: int, what: str) -> int:
        """Number of entries of a vector of tables (offsets are 4 bytes each)."""
        vec = self.vector(obj, slot, 4, what)
        return 0 if vec is None else vec[1]

    def string(self, obj: Any, slot: int, what: str) -> str:
        o = self.offset(obj, slot)
        if o == 0:
            return ""
        off = obj._tab.Pos + o
        self.span(off, 4, what)
        off += struct.unpack_from("<I", self.buf, off)[0]
        self.span(off, 4, what)
        n = struct.unpack_from("<I", self.buf, off)[0]
        self.span(off + 4, n, what)
        return self.buf[off + 4 : off + 4 + n].decode("utf-8", errors="replace")


# Vtable slots (4 + 2 * field id) of the fields read through Checked, from schema.fbs.
_MODEL_OPCODES, _MODEL_SUBGRAPHS, _MODEL_DESCRIPTION, _MODEL_BUFFERS, _MODEL_SIGNATURES = (
    6,
    8,
    10,
    12,
    18,
)
_SUBGRAPH_TENSORS, _SUBGRAPH_INPUTS, _SUBGRAPH_OUTPUTS, _SUBGRAPH_OPS, _SUBGRAPH_NAME = (
    4,
    6,
    8,
    10,
    12,
)
_TENSOR_SHAPE, _TENSOR_TYPE, _TENSOR_BUFFER, _TENSOR_NAME = 4, 6, 8, 10
_TENSOR_QUANT, _TENSOR_IS_VARIABLE, _TENSOR_SHAPE_SIGNATURE = 12, 14, 18
_QUANT_SCALE, _QUANT_ZERO_POINT, _QUANT_DIMENSION = 8, 10, 16
_OP_INPUTS, _OP_OUTPUTS, _OP_CUSTOM_OPTIONS, _OP_INTERMEDIATES = 6, 8, 14, 20
_OPCODE_CUSTOM = 6
_BUFFER_DATA = 4
_SIGNATURE_KEY = 8

# TensorType code -> (IR dtype name, numpy storage dtype or None when data is not decoded).
TYPES: dict[int, tuple[str, str | None]] = {
    0: ("float32", "<f4"),
    1: ("float16", "<f2"),
    2: ("int32", "<i4"),
    3: ("uint8", "u1"),
    4: ("int64", "<i8"),
    5: ("string", None),
    6: ("bool", "?"),
    7: ("int16", "<i2"),
    8: ("complex64", "<c8"),
    9: ("int8", "i1"),
    10: ("float64", "<f8"),
    11: ("complex128", "<c16"),
    12: ("uint64", "<u8"),
    13: ("resource", None),
    14: ("variant", None),
    15: ("uint32", "<u4"),
    16: ("uint16", "<u2"),
    17: ("int4", "int4"),
    18: ("bfloat16", None),
}
STORAGE = dict(TYPES.values())
