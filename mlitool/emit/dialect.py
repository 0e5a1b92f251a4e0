"""The C struct dialect of an MLI version: how `mli_tensor` initializers and the runtime's
pointer statements are written. `Mli2` (c_mli2.py) and `Mli11` / `Mli10` (c_mli1.py) implement
`Dialect`; `writer.dialect_for(target)` picks one, and the writers only call these methods.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from mlitool.emit.symbols import TensorSymbols
from mlitool.mli.target import Target
from mlitool.mli.types import MliTensor

# Suffix of the members of MLI's data unions (`mli_data_container.mem`, 1.x `el_params`) per C
# element type: pointers `pi8` ... `pf32`, values `i8` ... `f32`.
_MEMBER = {"int8_t": "8", "int16_t": "16", "int32_t": "32", "float": "f32"}


def ptr_member(c_type: str) -> str:
    return "pf32" if c_type == "float" else "pi" + _MEMBER[c_type]


def val_member(c_type: str) -> str:
    return "f32" if c_type == "float" else "i" + _MEMBER[c_type]


@runtime_checkable
class Dialect(Protocol):
    target: Target
    misaligned_status: str  # what NAME_init returns for an arena that is NULL or misaligned

    def check(self, t: MliTensor, where: str) -> None:
        """UnsupportedError when the struct cannot hold `t`."""

    def param_arrays(self, t: MliTensor, sym: TensorSymbols) -> list[tuple[str, str, np.ndarray]]:
        """Per-axis parameter arrays: (C element type, identifier, values)."""

    def data_items(
        self, t: MliTensor, pointer: str | None, capacity: int, inline: float | None
    ) -> str:
        """The `.data` designator(s): a pointer with a capacity, or an inline scalar."""

    def tensor_items(self, t: MliTensor, sym: TensorSymbols, data_item: str) -> list[str]:
        """Every designator of the tensor's initializer, in field order."""

    def bind_statement(self, view: str, root: str, c_type: str, offset: int | str) -> str:
        """`view`'s data pointer set to `root`'s plus `offset` elements (a C expression)."""

    def arena_bind(self, tensor: str, c_type: str, offset: int) -> str:
        """`tensor`'s data pointer set to `offset` bytes into the arena (`base`)."""

    def input_arg(self, kind: str, ref: str) -> str:
        """The argument `ref` (&tensor) as a `kind` kernel takes its input."""
