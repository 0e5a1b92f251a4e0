"""What a fallback kernel is (`FallbackKernel`) and the C helpers every one may use."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mlitool.fallback.fixedpoint_c import FIXEDPOINT

PREFIX = "mlitool_"

# Static helpers every fallback kernel may use: element count, an input's int8 elements (a
# scalar constant's are in its container), and the element offset of the i-th element
# (row-major) of a tensor through its mem_stride (views, any rank <= 4).
PRELUDE = """\
static uint32_t @P@_count(const mli_tensor *t) {
    uint32_t d, n = 1u;
    for (d = 0u; d < t->rank; d++) {
        n *= t->shape[d];
    }
    return n;
}

/* A tensor's int8 elements: a rank-0 constant keeps its value in the data container itself
 * (capacity 0), as MLI's scalars do. */
static const int8_t *@P@_in8(const mli_tensor *t) {
    return (t->rank == 0u && t->data.capacity == 0u) ? &t->data.mem.i8 : t->data.mem.pi8;
}

static uint32_t @P@_offset(const mli_tensor *t, uint32_t i) {
    uint32_t d, off = 0u;
    for (d = t->rank; d > 0u; d--) {
        off += (i % t->shape[d - 1u]) * (uint32_t)t->mem_stride[d - 1u];
        i /= t->shape[d - 1u];
    }
    return off;
}
"""


def helper_names(text: str) -> list[str]:
    """The names the helper C `text` defines (`@P@_<name>`)."""
    return re.findall(r"^static [^(]*[ *]@P@_(\w+)\(", text, re.M)


_FIXEDPOINT_CALLS = tuple(f"@P@_{name}(" for name in helper_names(FIXEDPOINT))


@dataclass(frozen=True)
class FallbackKernel:
    """One fallback kernel. `c_source` defines the function `@FN@` (and uses `@CFG@`, its config
    struct, and `@P@_count` / `@P@_in8` / `@P@_offset` from the prelude); `run(layer, model, xs, arith)` is
    its numpy twin."""

    name: str  # short name: the C function is NAME_<name> in the emitted files
    doc: str  # one line for the header: what it computes
    c_source: str  # defines `@STORAGE@mli_status @FN@(...)`
    run: Callable
    cfg: tuple[str, ...] = ()  # int32 fields of its config struct, in order

    @property
    def signature(self) -> str:
        """The C function's parameter list (the prototype's), read from its definition."""
        params = re.search(r"@STORAGE@mli_status @FN@(\([^)]*\))", self.c_source)
        return " ".join(params.group(1).split())

    @property
    def fixedpoint(self) -> bool:
        """Whether its C calls the shared fixed-point helpers (`fixedpoint_c.FIXEDPOINT`)."""
        return any(call in self.c_source for call in _FIXEDPOINT_CALLS)

    @property
    def kernel(self) -> str:
        """The layer's `kernel`: the generic name the manifest shows."""
        return PREFIX + self.name

    @property
    def cfg_type(self) -> str | None:
        return f"{PREFIX}{self.name}_cfg" if self.cfg else None
