"""Every C identifier one emitted model uses, chosen once so the .h, .c and manifest agree.

Global names are reserved first, then one base name per tensor (in model order) together with
all the names derived from it (data array, parameter arrays, size macros), then one config name
per layer. Collisions are resolved with deterministic suffixes by `NameTable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlitool.emit.names import NameTable, c_identifier, join
from mlitool.errors import OptionError
from mlitool.mli.types import MliModel

# Suffixes of the names derived from a tensor's base name.
DATA, ZP, SCALE, SFB, BYTES, ELEMS = "_data", "_zp", "_scale", "_sfb", "_BYTES", "_ELEMS"
_DERIVED = (DATA, ZP, SCALE, SFB, BYTES, ELEMS)

_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class TensorSymbols:
    name: str                       # the mli_tensor object

    @property
    def data(self) -> str:          # static data array (constants)
        return self.name + DATA

    @property
    def zero_point(self) -> str:    # per-axis parameter arrays
        return self.name + ZP

    @property
    def scale(self) -> str:
        return self.name + SCALE

    @property
    def scale_frac_bits(self) -> str:
        return self.name + SFB

    @property
    def bytes_macro(self) -> str:
        return self.name + BYTES

    @property
    def elems_macro(self) -> str:
        return self.name + ELEMS


@dataclass
class Symbols:
    prefix: str
    macro_prefix: str
    guard: str
    unused_macro: str
    bind_views: str
    totals: dict[str, str]                          # total key -> macro name
    tensors: dict[str, TensorSymbols] = field(default_factory=dict)
    cfgs: list[str | None] = field(default_factory=list)   # per layer, None if no config


TOTALS = ("NUM_TENSORS", "NUM_LAYERS", "WEIGHT_BYTES", "BIAS_BYTES", "PARAM_BYTES",
          "ACTIVATION_BYTES", "LARGEST_ACTIVATION_BYTES")


def check_file_name(name: str) -> str:
    if not _FILE_NAME.fullmatch(name) or len(name) > 100:
        raise OptionError(f"--name {name!r}: use letters, digits, '_', '-' and '.', starting with a "
                          "letter or digit (it names the output files and prefixes the C symbols)")
    return name


def make_symbols(model: MliModel, name: str) -> Symbols:
    check_file_name(name)
    table = NameTable()
    prefix = c_identifier(name, fallback="model")
    macro_prefix = prefix.upper()
    guard = table.reserve(join(macro_prefix, "H"))
    unused = table.reserve(join(macro_prefix, "UNUSED"))
    totals = {k: table.reserve(join(macro_prefix, k)) for k in TOTALS}
    bind = table.reserve(join(prefix, "bind_views"))
    syms = Symbols(prefix, macro_prefix, guard, unused, bind, totals)
    for key in model.tensors:
        base = join(prefix, c_identifier(key))
        syms.tensors[key] = TensorSymbols(table.claim(base, _DERIVED))
    for pos, layer in enumerate(model.layers):
        syms.cfgs.append(table.claim(join(prefix, f"layer{pos}_cfg")) if layer.cfg_type else None)
    return syms
