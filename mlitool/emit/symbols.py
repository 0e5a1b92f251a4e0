"""Every C identifier one emitted model uses, chosen once so the .h, .c and manifest agree.

Names say where a tensor sits in the network, not what TFLite called it (fused TFLite names such
as `cnn_1/conv1_1/Relu;cnn_1/conv1_1/BiasAdd;...` make unreadable C): `NAME_L3_conv_weights`,
`NAME_L3_conv_bias`, `NAME_L3_conv_cfg`, `NAME_L3_conv_out` (the activation layer 3 writes),
`NAME_in0` (model inputs), `NAME_L5_lut_...` for other layer parameters; L is the layer's position
in NAME_run, the word its MLI kernel family. They depend only on the graph, so renaming TFLite
tensors changes no symbol; the TFLite name stays in the comment next to each symbol and in the
manifest. Global names are reserved first, then one base name per tensor (in model order)
together with the names derived from it (data array, parameter arrays, size macros), then one
config name per layer; collisions get deterministic suffixes from `NameTable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlitool.emit.names import NameTable, c_identifier, join
from mlitool.errors import OptionError
from mlitool.mli import fallback, zero_points
from mlitool.mli.kernels import LUT_LENGTHS, luts_of
from mlitool.mli.kinds import KINDS
from mlitool.mli.types import MliModel

# Suffixes of the names derived from a tensor's base name.
DATA, ZP, SCALE, SFB, BYTES, ELEMS = "_data", "_zp", "_scale", "_sfb", "_BYTES", "_ELEMS"
_DERIVED = (DATA, ZP, SCALE, SFB, BYTES, ELEMS)

_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _derived(suffix: str, doc: str) -> property:
    return property(lambda self: self.name + suffix, doc=doc)


@dataclass(frozen=True)
class TensorSymbols:
    name: str  # the mli_tensor object
    shared_zero_points: str = ""  # the shared array of zeros its zero points are in, if any

    data = _derived(DATA, "static data array (constants)")
    zero_point = _derived(ZP, "per-axis zero point array")
    scale = _derived(SCALE, "per-axis scale array")
    scale_frac_bits = _derived(SFB, "per-axis scale frac bits array")
    bytes_macro = _derived(BYTES, "size macro, bytes")
    elems_macro = _derived(ELEMS, "size macro, elements")


@dataclass(frozen=True)
class RuntimeSymbols:
    """Names of the runtime (`mlitool.emit.runtime`): API functions, macros, static objects."""

    init: str
    run: str
    input: str
    output: str
    arena_bytes: str  # macros
    arena_align: str
    num_inputs: str
    num_outputs: str
    build: str
    layer_hook: str  # the macro an application defines to get a per-layer call
    after_layer: str  # internal macro: the hook call or nothing
    ready: str  # static flag: NAME_init succeeded
    luts: dict[str, tuple[str, str]]  # layer kind -> (mli_lut object, its int16 data array)


@dataclass(frozen=True)
class FastSymbols:
    """Names of the fast-memory runtime (`mlitool.emit.fast_runtime`)."""

    fast_bytes: str  # macros
    slow_bytes: str
    check_operands: str  # the macro an application defines to check every operand
    fast: str  # static pointers to the two buffers NAME_init was given
    slow: str
    stage: str  # static mli_tensor array: the staged constants of the current layer
    stage_fn: str  # static helpers
    in_fast: str
    in_fast_bytes: str
    stage_channels: str  # a slice of output channels of a weight or bias tensor


@dataclass
class Symbols:
    prefix: str
    macro_prefix: str
    guard: str
    unused_macro: str
    bind_views: str
    totals: dict[str, str]  # total key -> macro name
    tensors: dict[str, TensorSymbols] = field(default_factory=dict)
    cfgs: list[str | None] = field(default_factory=list)  # per layer, None if no config
    runtime: RuntimeSymbols | None = None
    fast: FastSymbols | None = None  # with a fast-memory plan
    input_lists: list[str | None] = field(default_factory=list)  # per layer: MLI 1.x concat
    scratch: list[str | None] = field(default_factory=list)  # per layer: recurrent cell scratch
    # fallback kernels (mlitool.mli.fallback): generic name -> this model's C function / cfg type
    fallbacks: dict[str, str] = field(default_factory=dict)
    fallback_types: dict[str, str] = field(default_factory=dict)
    fallback_helpers: str = ""  # prefix of their static helpers (NAME_fb_count, ...)
    zero_points: str = ""  # the shared array of zero points (mlitool.mli.zero_points), if any

    def call(self, kernel: str) -> str:
        """The C function a layer with `kernel` calls (a fallback's is the model's own)."""
        return self.fallbacks.get(kernel, kernel)

    def c_type(self, cfg_type: str) -> str:
        """The C type of a layer's config struct (a fallback's is the model's own)."""
        return self.fallback_types.get(cfg_type, cfg_type)


TOTALS = (
    "NUM_TENSORS",
    "NUM_LAYERS",
    "WEIGHT_BYTES",
    "BIAS_BYTES",
    "PARAM_BYTES",
    "ACTIVATION_BYTES",
    "LARGEST_ACTIVATION_BYTES",
)


def check_file_name(name: str) -> str:
    if not _FILE_NAME.fullmatch(name) or len(name) > 100:
        raise OptionError(
            f"--name {name!r}: use letters, digits, '_', '-' and '.', starting with a "
            "letter or digit (it names the output files and prefixes the C symbols)"
        )
    return name


def _runtime_symbols(model: MliModel, table: NameTable, prefix: str, macro: str) -> RuntimeSymbols:
    def fn(part: str) -> str:
        return table.reserve(join(prefix, part))

    def mac(part: str) -> str:
        return table.reserve(join(macro, part))

    kinds = [
        k
        for k in LUT_LENGTHS
        if model.target.lut_kernels and any(k in luts_of(layer.kind) for layer in model.layers)
    ]
    # Named after their fields: functions NAME_<field>, macros NAME_<FIELD> (in this order).
    functions = {f: fn(f) for f in ("init", "run", "input", "output")}
    macros = {
        f: mac(f.upper()) for f in ("arena_bytes", "arena_align", "num_inputs", "num_outputs")
    }
    return RuntimeSymbols(
        **functions,
        **macros,
        build=mac("MLI_BUILD"),
        layer_hook=mac("LAYER_HOOK"),
        after_layer=mac("AFTER_LAYER"),
        ready=fn("ready"),
        luts={k: (fn(f"{k}_lut"), fn(f"{k}_lut_data")) for k in kinds},
    )


# Headers the emitted files reach with `#include "..."` or that an `-I OUTDIR` would let NAME.h
# shadow: those of MLI 2.0.2, 1.1 and 1.0 (api/ included), the C standard library's and
# <stdfix.h>, which every MLI version includes.
SHADOWED_HEADERS = frozenset(
    """
mli_api mli_types mli_config mli_helpers_api mli_kernels_api mli_mov_api mli_krn_avepool_spec_api
mli_krn_conv2d_spec_api mli_krn_depthwise_conv2d_spec_api mli_krn_maxpool_spec_api arc_vector
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign
stdarg stdatomic stdbool stddef stdfix stdint stdio stdlib stdnoreturn string tgmath threads time
uchar wchar wctype
""".split()
)


def check_not_shadowing(name: str, header: str) -> None:
    """Refuse a base name whose NAME.h would be found instead of a header the C includes."""
    stem = name.lower()
    own = header.strip("<>").rsplit("/", 1)[-1].lower().removesuffix(".h")
    if stem in SHADOWED_HEADERS or stem == own:
        raise OptionError(
            f"--name {name!r}: {name}.h would shadow the header {stem}.h that the "
            "generated C includes (from MLI or the C library); choose another name"
        )


def layer_word(pos: int, kind: str) -> str:
    """The word of layer `pos`'s C symbols: its kind's short word (`mlitool.mli.kinds`)."""
    entry = KINDS.get(kind)
    word = entry.symbol_word if entry is not None else kind
    return f"L{pos}_{c_identifier(word, fallback='layer')}"


def tensor_roles(model: MliModel) -> dict[str, str]:
    """Tensor key -> its name by position: model inputs first, then each layer's outputs,
    weights, bias and parameters in run order (a tensor shared by several layers is named by the
    first); buffers that views live in, by the first layer writing into them; the slices a layer
    calls its kernel on one by one, by that layer; views that are only read, by their first
    reader."""
    roles: dict[str, str] = {}
    for k, key in enumerate(model.inputs):
        roles.setdefault(key, f"in{k}")
    for pos, layer in enumerate(model.layers):  # a recurrent cell's state, reset before it
        if layer.kind == "lstm_cell":
            word = layer_word(pos, layer.kind)
            roles.setdefault(layer.inputs[1], f"{word}_prev_out")
            roles.setdefault(layer.inputs[2], f"{word}_state")
            resets = [la.inputs[0] for la in model.layers if la.outputs == [layer.inputs[2]]]
            for key in resets:
                roles.setdefault(key, f"{word}_state_zero")
    for pos, layer in enumerate(model.layers):
        word = layer_word(pos, layer.kind)
        outs = layer.outputs
        for j, key in enumerate(outs):
            roles.setdefault(key, f"{word}_out" + (str(j) if len(outs) > 1 else ""))
        for role, key in (
            ("weights", layer.weights),
            ("bias", layer.bias),
            *sorted(layer.params.items()),
        ):
            if key is not None:
                roles.setdefault(key, f"{word}_{c_identifier(role, fallback='param')}")
        if layer.calls:  # the views one call per slice moves
            *ins, out = layer.calls.views
            roles.setdefault(out, f"{word}_out_slice")
            for j, key in enumerate(ins):
                roles.setdefault(key, f"{word}_in{j}_slice")
        for key in outs:
            buffer = model.tensors[key].buffer
            while buffer is not None and buffer in model.tensors:
                roles.setdefault(buffer, f"{word}_buf")
                buffer = model.tensors[buffer].buffer
    for pos, layer in enumerate(model.layers):  # views only read: by their first reader
        for j, key in enumerate(layer.inputs):
            roles.setdefault(key, f"{layer_word(pos, layer.kind)}_in{j}")
    return roles


def make_symbols(model: MliModel, name: str, runtime: bool = False, fast: bool = False) -> Symbols:
    """Every identifier; `runtime` reserves the runtime's names too (before any tensor's, so a
    tensor called "run" or "input" gets a suffix instead), `fast` those of the fast-memory
    runtime."""
    check_file_name(name)
    table = NameTable()
    prefix = c_identifier(name, fallback="model")
    macro_prefix = prefix.upper()
    guard = table.reserve(join(macro_prefix, "H"))
    unused = table.reserve(join(macro_prefix, "UNUSED"))
    totals = {k: table.reserve(join(macro_prefix, k)) for k in TOTALS}
    bind = table.reserve(join(prefix, "bind_views"))
    syms = Symbols(prefix, macro_prefix, guard, unused, bind, totals)
    if runtime:
        syms.runtime = _runtime_symbols(model, table, prefix, macro_prefix)
    if runtime and fast:
        syms.fast = FastSymbols(
            *(table.reserve(join(macro_prefix, m)) for m in ("FAST_BYTES", "SLOW_BYTES")),
            table.reserve(join(macro_prefix, "CHECK_OPERANDS")),
            *(table.reserve(join(prefix, f)) for f in ("fast", "slow", "stage")),
            *(
                table.reserve(join(prefix, f))
                for f in ("stage_constant", "in_fast", "in_fast_bytes", "stage_channels")
            ),
        )
    kernels = fallback.used(model)
    for k in kernels:
        syms.fallbacks[k.kernel] = table.reserve(join(prefix, k.name))
        if k.cfg_type:
            syms.fallback_types[k.cfg_type] = table.reserve(join(prefix, k.name, "cfg"))
    if kernels:
        syms.fallback_helpers = join(prefix, "fb")
        for name in fallback.helper_names(fallback.helpers(kernels)):
            table.reserve(join(syms.fallback_helpers, name))
    if zero_points.shared_length(model):
        syms.zero_points = table.reserve(join(prefix, "zero_points"))
    roles = tensor_roles(model)
    for key, t in model.tensors.items():
        base = join(prefix, roles.get(key) or f"t_{c_identifier(key)}")
        shared = syms.zero_points if zero_points.shares_zeros(model, t) else ""
        syms.tensors[key] = TensorSymbols(table.claim(base, _DERIVED), shared)
    for pos, layer in enumerate(model.layers):
        cfg = join(prefix, layer_word(pos, layer.kind), "cfg")
        syms.cfgs.append(table.claim(cfg) if layer.cfg_type else None)
    for pos, layer in enumerate(model.layers):
        scratch = join(prefix, layer_word(pos, layer.kind), "scratch")
        syms.scratch.append(table.claim(scratch) if "scratch_bytes" in layer.cfg else None)
    for pos, layer in enumerate(model.layers):
        many = runtime and model.target.concat_kernel and layer.kind == "concat"
        inputs = join(prefix, layer_word(pos, layer.kind), "inputs")
        syms.input_lists.append(table.claim(inputs) if many else None)
    return syms
