"""The C of the fallback kernels a model uses (`mlitool.mli.fallback`): config typedefs and
prototypes for NAME.h, definitions for NAME.c, all under the model's prefix so that several
models link together."""

from __future__ import annotations

from mlitool.emit.symbols import Symbols
from mlitool.mli import fallback
from mlitool.mli.types import MliModel


def _fill(text: str, syms: Symbols, k: fallback.FallbackKernel, storage: str) -> str:
    text = text.replace("@STORAGE@", storage).replace("@FN@", syms.fallbacks[k.kernel])
    if k.cfg_type:
        text = text.replace("@CFG@", syms.fallback_types[k.cfg_type])
    return text.replace("@P@", syms.fallback_helpers)


def header_lines(model: MliModel, syms: Symbols, static: bool) -> list[str]:
    """Typedefs of the fallback configs, and (with external linkage) the prototypes."""
    kernels = fallback.used(model)
    if not kernels:
        return []
    lines = [
        "",
        "/* ---- Fallback kernels ----",
        " * Ops MLI has no kernel for run as mlitool's C (defined in the source, TFLite's integer",
        " * arithmetic on SA8 tensors); they take their arguments in MLI's order. */",
    ]
    for k in kernels:
        if k.cfg_type:
            fields = " ".join(f"int32_t {f};" for f in k.cfg)
            fields += " mli_data_container state;" if k.state else ""
            lines.append(f"typedef struct {{ {fields} }} {syms.fallback_types[k.cfg_type]};")
    if not static:
        for k in kernels:
            lines += [
                f"/* {k.doc} */",
                _fill(f"mli_status @FN@{k.signature};", syms, k, ""),
            ]
    return lines


def definitions(model: MliModel, syms: Symbols, static: bool) -> str:
    """The helpers and every fallback kernel the model calls."""
    kernels = fallback.used(model)
    if not kernels:
        return ""
    storage = f"static {syms.unused_macro} " if static else ""
    m = syms.unused_macro  # the helpers are static and not every kernel uses both
    parts = [
        "",
        "/* ---- fallback kernels ---- */",
        f"#ifndef {m}\n#if defined(__GNUC__)\n#define {m} __attribute__((unused))\n"
        f"#else\n#define {m}\n#endif\n#endif",
    ]
    helpers = fallback.helpers(kernels).replace("@P@", syms.fallback_helpers)
    parts.append(helpers.replace("static ", f"static {m} "))
    for k in kernels:
        parts += [f"/* {k.doc} */", _fill(k.c_source, syms, k, storage)]
    return "\n".join(parts)
