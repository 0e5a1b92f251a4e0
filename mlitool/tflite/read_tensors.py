"""Decode the tensors of a .tflite file (reader.py reads the rest): each tensor's element type,
shape, quantization and constant data, every offset and size checked against the file first
(`Checked`); constant data is a read-only numpy view of the file bytes. Untidy but accepted
quantization is normalised, each normalisation recorded in the reader's warnings."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlitool import ir

# Checked reads; the schema's vtable slots and layouts (checked by tests/reader/test_reader_slots)
from mlitool.tflite.checked import (
    _BUFFER_DATA,
    _I8,
    _I32,
    _QUANT_DIMENSION,
    _QUANT_SCALE,
    _QUANT_ZERO_POINT,
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

MAX_TENSOR_ELEMENTS = 2**31 - 1  # TFLite(-Micro) element counts are int; more is hostile


class TensorReader:
    """The tensors of one model: shares the reader's file bytes, checked reads and warnings."""

    def __init__(self, buf: bytes, chk: Checked, m: Any, n_buffers: int, warnings: list[str]):
        self.buf = buf
        self.chk = chk
        self.m = m
        self.n_buffers = n_buffers
        self.warnings = warnings

    def tensor(self, t: Any, i: int, where: str) -> ir.Tensor:
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
        with np.errstate(invalid="ignore"):  # a signalling NaN, reported below
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


def empty_constant(t: ir.Tensor) -> ir.Tensor:
    """`t` (no elements) with empty constant data, when its element type is decoded at all."""
    storage = STORAGE.get(t.dtype)
    if storage is None:
        return t
    data = np.zeros(t.shape, np.int8 if storage == "int4" else storage)
    data.flags.writeable = False  # as the file's other constants
    return dataclasses.replace(t, data=data)
