"""MLI 1.1 and 1.0 `mli_tensor` initializers.

1.1: `{ void *data; uint32_t capacity; int32_t mem_stride[4]; uint32_t shape[4]; uint32_t rank;
mli_element_type el_type; mli_element_params el_params; }`, element types FX8=0, FX16=1,
ASYM_I8=2, ASYM_I32=3; asym params hold int32 scales (`pi32` / `i32`), int16 zero points and one
int8 frac-bits value per tensor (the lowering stores equal frac bits per axis).
1.0: FX only, no `mem_stride` (tensors must be dense), `fx.frac_bits` is uint8.
"""

from __future__ import annotations

import numpy as np

from mlitool.emit.c_mli2 import _in_range, _padded
from mlitool.emit.symbols import TensorSymbols
from mlitool.errors import UnsupportedError
from mlitool.mli.target import MLI10, MLI11
from mlitool.mli.types import ElType, MliTensor, row_major_strides

_EL_NAMES = {
    ElType.FX8: "MLI_EL_FX_8",
    ElType.FX16: "MLI_EL_FX_16",
    ElType.SA8: "MLI_EL_ASYM_I8",
    ElType.SA32: "MLI_EL_ASYM_I32",
}


class Mli11:
    """MLI 1.1 structs (a `Dialect`)."""

    target = MLI11
    el_types = (ElType.FX8, ElType.FX16, ElType.SA8, ElType.SA32)
    misaligned_status = "MLI_STATUS_ARGUMENT_ERROR"  # 1.x has no MLI_STATUS_MISALIGNMENT_ERROR

    def el_type_name(self, t: MliTensor) -> str:
        return _EL_NAMES[t.el_type]

    def check(self, t: MliTensor, where: str) -> None:
        if t.el_type not in self.el_types:
            raise UnsupportedError(
                f"{where}: MLI {self.target.version} cannot hold {t.el_type.name} tensors "
                f"(it has {', '.join(e.name for e in self.el_types)})"
            )
        if t.rank == 0:
            raise UnsupportedError(
                f"{where}: MLI {self.target.version} tensors have a data pointer; a "
                "rank-0 inline scalar cannot be expressed (use shape (1,))"
            )
        if t.el_type.is_fx and not 0 <= int(t.frac_bits) <= 255:
            raise UnsupportedError(
                f"{where}: MLI {self.target.version} frac_bits are unsigned; "
                f"{t.frac_bits} cannot be expressed"
            )
        if t.el_type.is_sa:
            if not _in_range(t.zero_point, -(1 << 15), (1 << 15) - 1):
                raise UnsupportedError(f"{where}: zero point outside int16_t")
            if not _in_range(t.scale, 1, (1 << 31) - 1):
                raise UnsupportedError(f"{where}: scale must be an int32_t > 0 for MLI 1.1")
            sfb = np.asarray(t.scale_frac_bits)
            if sfb.size and (sfb != sfb.reshape(-1)[0]).any():
                raise UnsupportedError(
                    f"{where}: MLI 1.1 has one scale_frac_bits per tensor, "
                    f"got {sorted(set(sfb.reshape(-1).tolist()))}"
                )
            if not _in_range(sfb, -128, 127):
                raise UnsupportedError(f"{where}: scale_frac_bits outside int8_t")

    def param_arrays(self, t: MliTensor, sym: TensorSymbols) -> list[tuple[str, str, np.ndarray]]:
        if not t.per_axis:
            return []
        return [("int16_t", sym.zero_point, t.zero_point), ("int32_t", sym.scale, t.scale)]

    def data_items(self, t: MliTensor, pointer: str | None, capacity: int, inline) -> str:
        ptr = f"(void *)({pointer})" if pointer else "NULL"
        return f".data = {ptr}, .capacity = {capacity}u"

    def tensor_items(self, t: MliTensor, sym: TensorSymbols, data_item: str) -> list[str]:
        items = [data_item]
        if self.target.has_mem_stride:
            items.append(f".mem_stride = {{ {_padded(t.mem_stride)} }}")
        items += [
            f".shape = {{ {_padded(t.shape)} }}",
            f".rank = {t.rank}u",
            f".el_type = {self.el_type_name(t)}",
            f".el_params = {self._el_params(t, sym)}",
        ]
        return items

    def _el_params(self, t: MliTensor, sym: TensorSymbols) -> str:
        if t.el_type.is_fx:
            return f"{{ .fx = {{ .frac_bits = {int(t.frac_bits)}u }} }}"
        if t.per_axis:
            zp, sc = (
                f"{{ .pi16 = (int16_t *){sym.zero_point} }}",
                f"{{ .pi32 = (int32_t *){sym.scale} }}",
            )
        else:
            zp = f"{{ .i16 = {int(t.zero_point[0])} }}"
            sc = f"{{ .i32 = {int(t.scale[0])} }}"
        frac = int(np.asarray(t.scale_frac_bits).reshape(-1)[0])
        dim = int(t.dim) if t.per_axis else -1
        return (
            f"{{ .asym = {{\n        .zero_point = {zp},\n        .scale = {sc},\n"
            f"        .dim = {dim},\n        .scale_frac_bits = {frac} }} }}"
        )

    def bind_statement(self, view: str, root: str, c_type: str, offset: int | str) -> str:
        return f"{view}.data = (void *)(({c_type} *){root}.data + {offset});"

    def arena_bind(self, tensor: str, c_type: str, offset: int) -> str:
        return f"{tensor}.data = (void *)(base + {offset}u);"

    def input_arg(self, kind: str, ref: str) -> str:
        # 1.x declares mli_hlp_convert_tensor's input non-const
        return f"(mli_tensor *){ref}" if kind == "convert" else ref


class Mli10(Mli11):
    """MLI 1.0 structs (a `Dialect`)."""

    target = MLI10
    el_types = (ElType.FX8, ElType.FX16)

    def check(self, t: MliTensor, where: str) -> None:
        super().check(t, where)
        if tuple(t.mem_stride) != row_major_strides(t.shape):
            raise UnsupportedError(
                f"{where}: MLI 1.0 tensors have no mem_stride; this tensor's "
                f"strides {list(t.mem_stride)} are not dense (use --mli 1.1 or 2.0)"
            )
