"""Checks an `MliModel` against what the emitted C can express, and resolves views to the buffer
they live in. Shared by the C writers and the manifest so both describe the same objects.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from mlitool.emit.dialect import Dialect
from mlitool.emit.symbols import Symbols, TensorSymbols
from mlitool.errors import UnsupportedError
from mlitool.mli.types import MliModel, MliTensor

MAX_RANK = 4
MAX_CAPACITY = (1 << 32) - 1


@dataclass(frozen=True)
class TensorInfo:
    key: str
    tensor: MliTensor
    sym: TensorSymbols
    root: str | None  # key of the buffer a view lives in (None: owns its memory)
    offset: int  # element offset into `root`
    capacity: int  # bytes (0 for a rank-0 inline scalar)

    @property
    def is_const(self) -> bool:
        return self.tensor.role.is_constant

    @property
    def is_view(self) -> bool:
        return self.root is not None

    @property
    def inline(self) -> bool:
        return self.tensor.rank == 0

    @property
    def has_own_data(self) -> bool:
        return self.is_const and not self.is_view and not self.inline


def _where(model: MliModel, key: str) -> str:
    t = model.tensors[key]
    src = f" (TFLite tensor {t.source_index})" if t.source_index is not None else ""
    return f"{model.source}: tensor '{key}'{src}"


def _check_tensor(model: MliModel, key: str, dialect: Dialect) -> None:
    t, where = model.tensors[key], _where(model, key)
    if t.rank > MAX_RANK:
        raise UnsupportedError(f"{where}: rank {t.rank} exceeds MLI_MAX_RANK ({MAX_RANK})")
    if t.rank and t.size == 0:
        raise UnsupportedError(f"{where}: empty tensor (shape {list(t.shape)})")
    if len(t.mem_stride) != t.rank or any(int(s) <= 0 for s in t.mem_stride):
        raise ValueError(
            f"{where}: mem_stride {list(t.mem_stride)} does not fit shape {list(t.shape)}"
        )
    if t.role.is_constant and t.buffer is None:
        if t.data is None:
            raise ValueError(f"{where}: constant without data")
        if t.data.dtype != t.el_type.dtype or tuple(t.data.shape) != t.shape:
            raise ValueError(
                f"{where}: data {t.data.dtype}{list(t.data.shape)} does not match "
                f"{t.el_type.name}{list(t.shape)}"
            )
    if t.el_type.is_fx and t.frac_bits is None:
        raise ValueError(f"{where}: FX tensor without frac_bits")
    if t.el_type.is_sa:
        n = 1 if t.dim < 0 else (t.shape[t.dim] if t.dim < t.rank else -1)
        shared_frac = not dialect.target.int16_scales  # 1.1: one frac bits per tensor
        for name in ("zero_point", "scale", "scale_frac_bits"):
            arr = getattr(t, name)
            sizes = {n, 1} if name == "scale_frac_bits" and shared_frac else {n}
            if arr is None or np.asarray(arr).size not in sizes:
                raise ValueError(f"{where}: SA {name} needs {n} value(s) for dim {t.dim}")
    if t.nbytes > MAX_CAPACITY:
        raise UnsupportedError(f"{where}: {t.nbytes} bytes exceed the uint32_t capacity field")
    dialect.check(t, where)


def _resolve(model: MliModel, key: str) -> tuple[str | None, int]:
    t, seen, offset = model.tensors[key], [key], 0
    if t.buffer is None:
        return None, 0
    while t.buffer is not None:
        if t.buffer not in model.tensors:
            raise ValueError(f"{_where(model, key)}: views unknown buffer '{t.buffer}'")
        if t.buffer in seen:
            raise ValueError(f"{_where(model, key)}: circular views {seen + [t.buffer]}")
        offset += int(t.offset)
        seen.append(t.buffer)
        t = model.tensors[t.buffer]
    return seen[-1], offset


@dataclass(frozen=True)
class Emission:
    """What every writer of one model's C reads: the model, its analysed tensors (`analyze`), its
    C symbols and dialect, and the base name of the files."""

    model: MliModel
    infos: list[TensorInfo]
    syms: Symbols
    dialect: Dialect
    base_name: str

    @functools.cached_property
    def by_key(self) -> dict[str, TensorInfo]:
        return {i.key: i for i in self.infos}


def analyze(model: MliModel, dialect: Dialect, syms: Symbols) -> list[TensorInfo]:
    if model.target is not dialect.target:
        raise ValueError(
            f"model lowered for MLI {model.mli_version}, writer for {dialect.target.version}"
        )
    infos = []
    for key, t in model.tensors.items():
        _check_tensor(model, key, dialect)
        root, offset = _resolve(model, key)
        if root is not None:
            r, where = model.tensors[root], _where(model, key)
            if r.el_type.c_type != t.el_type.c_type:
                raise UnsupportedError(
                    f"{where}: a {t.el_type.name} view of the "
                    f"{r.el_type.name} buffer '{root}' cannot be expressed"
                )
            if t.rank == 0 or r.rank == 0:
                raise UnsupportedError(
                    f"{where}: rank-0 tensors hold their value inline and cannot be views"
                )
            if t.role.is_constant != r.role.is_constant:
                raise ValueError(
                    f"{where}: a view and its buffer '{root}' must both be constants "
                    "or both be activations"
                )
            span = t.nbytes // t.el_type.dtype.itemsize
            if offset < 0 or offset + span > r.nbytes // r.el_type.dtype.itemsize:
                raise ValueError(
                    f"{where}: view [{offset}, {offset + span}) lies outside buffer '{root}'"
                )
        capacity = 0 if t.rank == 0 else t.nbytes
        infos.append(TensorInfo(key, t, syms.tensors[key], root, offset, capacity))
    for i, layer in enumerate(model.layers):
        for name in (
            layer.inputs
            + layer.outputs
            + [n for n in (layer.weights, layer.bias) if n]
            + list(layer.params.values())
        ):
            if name not in model.tensors:
                raise ValueError(
                    f"{model.source}: layer {i} ({layer.op_type}) names unknown tensor '{name}'"
                )
    return infos


def inline_value(t: MliTensor) -> int | float:
    v = np.asarray(t.data).reshape(-1)[0]
    return float(v) if t.el_type.dtype.kind == "f" else int(v)
