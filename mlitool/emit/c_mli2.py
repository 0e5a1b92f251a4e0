"""MLI 2.x `mli_tensor` initializers.

Field order is that of the real 2.0.2 header (data, mem_stride, shape, rank, el_type, el_params;
sa: type, zero_point, scale, dim, scale_frac_bits), one designator per level, so the same text is
valid C99 and C++20. Per-tensor SA parameters are inline with capacity 0, per-axis ones point to
arrays with capacity in bytes.
"""

from __future__ import annotations

import numpy as np

from mlitool.emit.cdata import int_list
from mlitool.emit.dialect import ptr_member, val_member
from mlitool.emit.symbols import TensorSymbols
from mlitool.errors import UnsupportedError
from mlitool.mli.target import MLI2
from mlitool.mli.types import ElType, MliTensor

MAX_RANK = 4


def _padded(values, n: int = MAX_RANK) -> str:
    vals = [int(v) for v in values] + [0] * (n - len(values))
    return int_list(vals)


def _in_range(arr: np.ndarray, lo: int, hi: int) -> bool:
    return arr.size == 0 or (int(arr.min()) >= lo and int(arr.max()) <= hi)


class Mli2:
    """MLI 2.x structs (a `Dialect`)."""

    target = MLI2
    el_types = (ElType.FX4, ElType.FX8, ElType.FX16, ElType.SA8, ElType.SA32, ElType.FP32)
    misaligned_status = "MLI_STATUS_MISALIGNMENT_ERROR"

    def el_type_name(self, t: MliTensor) -> str:
        return t.el_type.mli2_name

    def check(self, t: MliTensor, where: str) -> None:
        if t.el_type not in self.el_types:
            raise UnsupportedError(
                f"{where}: MLI {self.target.version} cannot hold {t.el_type.name} tensors"
            )
        if t.el_type.is_fx and not -128 <= int(t.frac_bits) <= 127:
            raise UnsupportedError(f"{where}: frac_bits {t.frac_bits} does not fit int8_t")
        if t.el_type.is_sa:
            if not _in_range(t.zero_point, -(1 << 15), (1 << 15) - 1):
                raise UnsupportedError(f"{where}: zero point outside int16_t")
            if not _in_range(t.scale, 1, (1 << 15) - 1):
                raise UnsupportedError(
                    f"{where}: scale must be an int16_t > 0 for MLI {self.target.version}"
                )
            if not _in_range(t.scale_frac_bits, -128, 127):
                raise UnsupportedError(f"{where}: scale_frac_bits outside int8_t")

    def param_arrays(self, t: MliTensor, sym: TensorSymbols) -> list[tuple[str, str, np.ndarray]]:
        """Per-axis parameter arrays: (C element type, identifier, values)."""
        if not t.per_axis:
            return []
        zp = [] if sym.shared_zero_points else [("int16_t", sym.zero_point, t.zero_point)]
        return [
            *zp,
            ("int16_t", sym.scale, t.scale),
            ("int8_t", sym.scale_frac_bits, t.scale_frac_bits),
        ]

    def data_items(
        self, t: MliTensor, pointer: str | None, capacity: int, inline: int | float | None
    ) -> str:
        ct = t.el_type.c_type
        if inline is not None:
            return f".data = {{ .capacity = 0u, .mem = {{ .{val_member(ct)} = {inline} }} }}"
        ptr = f"({ct} *)({pointer})" if pointer else "NULL"
        return f".data = {{ .capacity = {capacity}u, .mem = {{ .{ptr_member(ct)} = {ptr} }} }}"

    def tensor_items(self, t: MliTensor, sym: TensorSymbols, data_item: str) -> list[str]:
        items = [
            data_item,
            f".mem_stride = {{ {_padded(t.mem_stride if t.rank else [])} }}",
            f".shape = {{ {_padded(t.shape)} }}",
            f".rank = {t.rank}u",
            f".el_type = {self.el_type_name(t)}",
            f".el_params = {self._el_params(t, sym)}",
        ]
        return items

    def _container(self, per_axis: bool, c_type: str, ident: str, n: int, value) -> str:
        if per_axis:
            nbytes = n * np.dtype(c_type.removesuffix("_t")).itemsize
            return (
                f"{{ .capacity = {nbytes}u, .mem = {{ .{ptr_member(c_type)} = "
                f"({c_type} *){ident} }} }}"
            )
        return f"{{ .capacity = 0u, .mem = {{ .{val_member(c_type)} = {int(value)} }} }}"

    def _el_params(self, t: MliTensor, sym: TensorSymbols) -> str:
        if not t.el_type.is_sa:
            frac = int(t.frac_bits) if t.frac_bits is not None else 0
            return f"{{ .fx = {{ .frac_bits = {frac} }} }}"
        pa, n = t.per_axis, len(t.scale)
        zp_array = sym.shared_zero_points or sym.zero_point  # all zeros: the shared one
        zp = self._container(pa, "int16_t", zp_array, n, t.zero_point[0])
        sc = self._container(pa, "int16_t", sym.scale, n, t.scale[0])
        fb = self._container(pa, "int8_t", sym.scale_frac_bits, n, t.scale_frac_bits[0])
        return (
            "{ .sa = {\n        .type = MLI_EL_PARAM_SC16_ZP16,\n"
            f"        .zero_point = {zp},\n        .scale = {sc},\n"
            f"        .dim = {int(t.dim) if pa else -1},\n        .scale_frac_bits = {fb} }} }}"
        )

    def bind_statement(self, view: str, root: str, c_type: str, offset: int | str) -> str:
        m = ptr_member(c_type)
        return f"{view}.data.mem.{m} = {root}.data.mem.{m} + {offset};"

    def arena_bind(self, tensor: str, c_type: str, offset: int) -> str:
        return f"{tensor}.data.mem.{ptr_member(c_type)} = ({c_type} *)(base + {offset}u);"

    def input_arg(self, kind: str, ref: str) -> str:
        return ref
