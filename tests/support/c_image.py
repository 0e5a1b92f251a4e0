"""The writable part of an emitted model's image read from its C text, independently of
`mlitool.footprint.image`: the tests' own count of what the footprint's RAM parts must be.

On a 32-bit ARC target sizeof(mli_tensor) is 80 and sizeof(mli_lut) 32 (MLI 2.x; the cross-linked
map shows both: tests/support/arc_image.py); `static int` is 4 bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

MLI_TENSOR = 80
MLI_LUT = 32
_C_BYTES = {"int": 4, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "int32_t": 4, "unsigned char *": 4}


def arena_bytes(header: str) -> int:
    return int(re.search(r"#define \w+_ARENA_BYTES (\d+)u", header).group(1))


def writable_structs(c_text: str) -> int:
    """Bytes of the non-const `mli_tensor` definitions (the activation tensors: .data)."""
    return MLI_TENSOR * len(re.findall(r"^mli_tensor \w+ = \{", c_text, re.M))


def bss(c_text: str) -> int:
    """Bytes of the non-const file-scope statics the runtime defines without an initialiser."""
    total = 0
    for ctype, _, count in re.findall(
        r"^static (int|int8_t|uint8_t|int16_t|int32_t|mli_lut|mli_tensor|unsigned char \*) ?"
        r"(\w+)(?:\[(\d+)\])?;",
        c_text,
        re.M,
    ):
        size = {"mli_lut": MLI_LUT, "mli_tensor": MLI_TENSOR}.get(ctype) or _C_BYTES[ctype]
        total += size * int(count or 1)
    return total


def ram(out_dir: Path, name: str) -> dict[str, int]:
    """{"arena_bytes", "writable_structs", "bss"} of the model emitted as out_dir/name.{h,c}."""
    c_text = (out_dir / f"{name}.c").read_text()
    return {
        "arena_bytes": arena_bytes((out_dir / f"{name}.h").read_text()),
        "writable_structs": writable_structs(c_text),
        "bss": bss(c_text),
    }
