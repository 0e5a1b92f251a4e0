"""Fallback kernels: portable C for the ops MLI has no kernel for, with their numpy twins, and the
registry the emitter and the `mli` executor read.

A fallback layer is an `MliLayer` of kind "fallback" whose `kernel` names one `FallbackKernel`
("mlitool_lut8", ...). The emitter writes that kernel's C (C99, no allocation, only for kernels
the model uses) into NAME.c under the model's prefix and `NAME_run` calls it like any MLI
kernel, with the same argument order (inputs, params, cfg, outputs) and the layer hook after
it. The `mli` executor runs `run`, the same integer arithmetic, from the same layer objects.

The arithmetic is TFLite's: lowering computes every number from the model's own quantization,
exactly as the tflite execution mode does, so C, executor and tflite mode agree by construction.
Each op family defines its kernels beside its op (`mlitool/ops/<family>/c_kernel.py`) and
registers them (`register_kernel`) when the families are loaded: each is an entry of the table of MLI
layer kinds (`mlitool.mli.kinds`), which the emitter, the tiling and the `mli` executor read.
Fallback kernels read and write SA8 tensors; in FX formats lowering converts around them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mlitool.mli.fallback_fixedpoint import FIXEDPOINT
from mlitool.mli.kinds import KINDS, register_fallback
from mlitool.mli.types import MliModel

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
    # C element type of a state that persists between inferences (SVDF's memory): the config's
    # last field `state`, an mli_data_container over the layer's own static array (its cfg's
    # "scratch_bytes" / "scratch_type"), which NAME_init zeroes.
    state: str | None = None

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
        return f"{PREFIX}{self.name}_cfg" if self.cfg or self.state else None


def register_kernel(k: FallbackKernel, *, row_tiling: str | None = None) -> FallbackKernel:
    """Enter `k` in the layer kinds table (`mlitool.mli.kinds.KINDS`) under the name its layers'
    `kernel` holds; `row_tiling`: `kinds.PER_ELEMENT` where each output element is a function of
    its input element alone (tiling may split it anywhere). Each family registers its own."""
    register_fallback(k, row_tiling=row_tiling)
    return k


def kernel(name: str) -> FallbackKernel:
    """The fallback kernel a layer's `kernel` names (KeyError for none)."""
    entry = KINDS.get(name)
    if entry is None or entry.fallback is None:
        raise KeyError(f"{name!r} is not a fallback kernel")
    return entry.fallback


def used(model: MliModel) -> list[FallbackKernel]:
    """The fallback kernels `model` calls, sorted by name."""
    names = sorted({la.kernel for la in model.layers if la.kind == "fallback"})
    return [kernel(n) for n in names]


def helpers(kernels: list[FallbackKernel]) -> str:
    """The C of the static helpers `kernels` share, defined once in NAME.c: the prelude, and the
    fixed-point helpers where one of them uses those."""
    return PRELUDE + (FIXEDPOINT if any(k.fixedpoint for k in kernels) else "")
