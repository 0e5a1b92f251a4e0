"""sizeof the MLI C structs on the target, from their layouts (mli-arithmetic.md section 1).

C layout rules: each member sits at the next multiple of its alignment, a struct's alignment is
its largest member alignment and its size is padded to a multiple of it; a union's size is its
largest member padded likewise. Enums are `int`-sized (the MLI headers force a large enumerator
and ARC GCC does not use -fshort-enums by default).

On a 32-bit ARC target (pointers 4 bytes, int32 aligned on 4) this gives:

| struct | MLI 2.x | MLI 1.1 | MLI 1.0 |
|---|---|---|---|
| `mli_data_container` | 8 (capacity + 4-byte union) | 4 (bare union) | – |
| `mli_element_params` | 32 (`sa`: type 4 + 3 containers 24 + dim 4) | 16 (`asym`: 4+4+4+1, padded) | 1 |
| `mli_tensor` | **80** = 8 + 16 + 16 + 4 + 4 + 32 | **64** = 4 + 4 + 16 + 16 + 4 + 4 + 16 | **36** = 4 + 4 + 16 + 4 + 4 + 1, padded |
| `mli_conv2d_cfg` | 12 (relu 4 + 8 x uint8) | 12 (relu 4 + 6 x uint8, padded) | 12 |
| `mli_pool_cfg` | 8 | 8 | 8 |
| `mli_fully_connected_cfg`, `mli_relu_cfg`, `mli_prelu_cfg`, `mli_softmax_cfg`, `mli_l2_normalize_cfg`, `mli_permute_cfg`, `mli_padding2d_cfg` | 4 | 4 (where declared) | 4 |
| `mli_argmax_cfg` | 8 | – | – |
| `mli_concat_cfg` | 2 | 2 | 2 |
| `mli_rnn_dense_cfg` | 1 | – | – |
| `mli_mov_cfg_t` | 92 (5 x 4 uint32/int32 + 3 x 4 uint8) | – | – |

The config struct fields come from the target's `cfg_structs` (`mlitool.mli.cfg_structs`, one
source of truth with the C emitter). `tests/report/test_report_memory.py` checks every number against `sizeof` as compiled by
`gcc -m32` (and with 8-byte pointers against `gcc -m64`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlitool.mli.target import Target


@dataclass(frozen=True)
class CType:
    size: int
    align: int


def scalar(size: int) -> CType:
    return CType(size, size)


def array(t: CType, n: int) -> CType:
    return CType(t.size * n, t.align)


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def struct(*members: CType) -> CType:
    offset, align = 0, 1
    for m in members:
        offset = _round_up(offset, m.align) + m.size
        align = max(align, m.align)
    return CType(_round_up(offset, align), align)


def union(*members: CType) -> CType:
    align = max(m.align for m in members)
    return CType(_round_up(max(m.size for m in members), align), align)


I8, I16, I32 = scalar(1), scalar(2), scalar(4)
ENUM = I32
MAX_RANK = 4


def tensor_struct(target: Target, pointer_bytes: int = 4) -> CType:
    """`mli_tensor` of an MLI version: data, (mem_stride), shape, rank, el_type, el_params."""
    ptr = scalar(pointer_bytes)
    fx = struct(I8)  # frac_bits
    if target.data_container:
        container = _container(pointer_bytes)  # capacity + mem
        data = [container]
        sa = struct(ENUM, container, container, I32, container)  # type, zp, scale, dim, sfb
    else:
        data = [ptr, I32]  # void *data, capacity
        container = union(ptr, I32, I16, I8)
        sa = struct(container, container, I32, I8)  # asym: zp, scale, dim, sfb
    params = union(fx, sa) if target.sa_tensors else union(fx)
    stride = [array(I32, MAX_RANK)] if target.has_mem_stride else []
    return struct(*data, *stride, array(I32, MAX_RANK), I32, ENUM, params)


_FIELD = {
    "relu": struct(ENUM),
    "relu_type": ENUM,
    "u8": I8,
    "i32": I32,
    "u8x4": array(I8, MAX_RANK),
    "u32[4]": array(I32, MAX_RANK),
    "i32[4]": array(I32, MAX_RANK),
    "u8[4]": array(I8, MAX_RANK),
}


def _container(pointer_bytes: int) -> CType:
    """mli_data_container: capacity, then a union of pointers and values."""
    return struct(I32, union(scalar(pointer_bytes), I32, I16, I8))


def cfg_struct(target: Target, cfg_type: str, pointer_bytes: int = 4) -> CType:
    """A kernel config struct of an MLI version (KeyError when it has no such struct)."""
    fields = target.cfg_structs[cfg_type]
    return struct(
        *(
            ENUM
            if kind.startswith("enum:")
            else _container(pointer_bytes)
            if kind == "scratch"
            else _FIELD[kind]
            for _, kind, _, _ in fields
        )
    )


def tensor_struct_bytes(target: Target) -> int:
    return tensor_struct(target).size


def cfg_struct_bytes(target: Target, cfg_type: str | None) -> int:
    """0 when the layer has no config struct (or the version does not declare it)."""
    if not cfg_type or cfg_type not in target.cfg_structs:
        return 0
    return cfg_struct(target, cfg_type).size
