"""The MLI layer kinds: one declarative table (`KINDS`) of what mlitool knows about each kind an
`MliLayer` can have ("conv2d", "sigm", "fallback", ...), and of the fallback kernels.

Per kind: its C functions on each MLI version, the config structs its layers carry, what its
kernel leaves in its output tensor, how it tiles for the fast-memory plan, the module whose
`LAYER_RUNNERS` run it in the `mli` executor, its multiply-accumulates per output, its look-up
tables and its colour in the arena charts. The per-kind views other modules name
(`ops.MAC_KINDS`, `ops.OUTPUT_PARAMS`, `kernels.LUT_LENGTHS`, the targets' kernel tables...) are
derived from it.

Fallback kernels (`mlitool.mli.fallback.FallbackKernel`s, run by layers of kind "fallback" whose
`kernel` names them) are entries too, keyed by that name: whoever defines them calls
`register_fallback`. `kind_of(layer)` gives a layer's entry, its fallback kernel's for a
fallback layer.

This module imports nothing of the stages that read it (mli/ never imports the executor): a
runner is named by its module and loaded on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# --- what a kernel leaves in its output tensor -------------------------------------------------


@dataclass(frozen=True)
class FixedParams:
    """Parameters a kernel writes into its output tensor, whatever it held before
    (golden `*_post_*` values): SA (zero point, scale, scale frac bits), FX frac bits."""

    zero_point: int
    scale: int
    scale_frac_bits: int
    fx_frac_bits: int | None = None


COPIES_INPUT = "copies the input's"  # the kernel copies its input's parameters
# MLI refuses FX input and output frac bits that differ (MLI_STATUS_SPEC_PARAM_MISMATCH): the
# output takes the input's; SA8 outputs keep the model's parameters.
SAME_FX_FRAC_BITS = "the input's FX frac bits"

# --- tiling classes (mlitool.mli.memory.tiling) ----------------------------------------------
WINDOW = "window"  # output row o reads input rows o*stride - padding_top + k*dilation
ELEMENTWISE = "elementwise"  # operands of one shape: each tile reads the rows it writes
PER_ELEMENT = "per element"  # one input; output element i a function of input element i alone

MacCount = Callable[[tuple[int, ...], tuple[int, int]], int]


@dataclass(frozen=True)
class LayerKind:
    """One layer kind (or one fallback kernel: `fallback` set)."""

    name: str  # MliLayer.kind; a fallback kernel's: the layer's `kernel`
    chart: str  # its colour group in the arena charts (mlitool.report.arena_charts)
    # C functions: {"<layout>:<format>" or "*:<format>" (any layout): function}
    mli2: Mapping[str, str] = field(default_factory=dict)  # MLI 2.x
    mli1: Mapping[str, str] = field(default_factory=dict)  # MLI 1.1 and 1.0
    mli1_sa8: Mapping[str, str] = field(default_factory=dict)  # MLI 1.1 only (SA8 tensors)
    cfg_structs: tuple[str, ...] = ()  # the config structs its layers carry (by target)
    output_params: FixedParams | str | None = None  # what its kernel leaves in its output
    row_tiling: str | None = None  # WINDOW | ELEMENTWISE | PER_ELEMENT; None: not by rows
    channel_tiling: bool = False  # one call per slice of output channels gives the same bits
    runner_module: str | None = None  # the mli executor module whose LAYER_RUNNERS runs it
    # multiply-accumulates per output element, from the TFLite (OHWI / MN) weights shape and
    # the (height, width) stride; None: no weights to multiply
    macs: MacCount | None = None
    mac: bool = False  # multiply-accumulates weights (weights + bias tensors, MAC headroom)
    weighted: bool = False  # does an op's weighted work (MAC kinds and the LSTM cell)
    lut: int = 0  # entries of its own MLI 2.x look-up table (0: none)
    lut_args: tuple[str, ...] | None = None  # tables its MLI 2.x kernel takes (default: its own)
    # MLI 2.x kernels that require a contiguous input / output (1.x: every kernel)
    dense_input: bool = False
    dense_output: bool = False
    word: str = ""  # the short word of its C symbols ("conv": NAME_L3_conv_out); "": its name
    fallback: Any = None  # the FallbackKernel of a fallback entry

    @property
    def symbol_word(self) -> str:
        return self.word or self.name

    @property
    def luts(self) -> tuple[str, ...]:
        """The look-up tables its MLI 2.x kernel takes, in argument order."""
        if self.lut_args is not None:
            return self.lut_args
        return (self.name,) if self.lut else ()

    def runner(self) -> Callable | None:
        """Its runner in the mli executor `(layer, model, xs, arith) -> array`, None if none."""
        if self.fallback is not None:
            return self.fallback.run
        if self.runner_module is None:
            return None
        return importlib.import_module(self.runner_module).LAYER_RUNNERS.get(self.name)


# --- C function names ------------------------------------------------------------------------
_MAC_SUFFIX_2 = {"sa8": "sa8_sa8_sa32", "fx16": "fx16", "fx8w16d": "fx16_fx8_fx8"}
# Activation-only kernels: fx8w16d layers use the FX16 activation kernel.
_ACT_SUFFIX = {"sa8": "sa8", "fx16": "fx16", "fx8w16d": "fx16", "fx8": "fx8"}
_FX_1 = ("fx8", "fx16", "fx8w16d")
_ACT_SUFFIX_1 = {"fx8": "fx8", "fx16": "fx16", "fx8w16d": "fx16"}
_LAYOUTS_1 = ("chw", "hwc")


def _any_layout(by_fmt: Mapping[str, str]) -> dict[str, str]:
    return {f"*:{f}": name for f, name in by_fmt.items()}


def _mac2(pattern: str) -> dict[str, str]:
    """MLI 2.x weighted kernels: `pattern` with the sa8_sa8_sa32 / fx16 / fx16_fx8_fx8 suffix."""
    return _any_layout({f: pattern.format(s) for f, s in _MAC_SUFFIX_2.items()})


def _act2(pattern: str, fx8: bool = True) -> dict[str, str]:
    """MLI 2.x activation kernels (fx8 only where the library has it)."""
    return _any_layout({f: pattern.format(s) for f, s in _ACT_SUFFIX.items() if fx8 or s != "fx8"})


def _one2(name: str) -> dict[str, str]:
    """One MLI 2.x function for every format."""
    return _any_layout({f: name for f in _ACT_SUFFIX})


def _act1(pattern: str) -> dict[str, str]:
    return _any_layout({f: pattern.format(s) for f, s in _ACT_SUFFIX_1.items()})


def _by_layout1(pattern: str) -> dict[str, str]:
    """MLI 1.x kernels per layout: `pattern` with {lay} and the activation suffix {s}."""
    return {
        f"{lay}:{f}": pattern.format(lay=lay, s=s)
        for lay in _LAYOUTS_1
        for f, s in _ACT_SUFFIX_1.items()
    }


# --- MACs per output element (TFLite weights: OHWI convolutions, MN fully connected) ----------
def _conv_macs(w: tuple[int, ...], stride: tuple[int, int]) -> int:
    return int(w[1] * w[2] * w[3])


def _depthwise_macs(w: tuple[int, ...], stride: tuple[int, int]) -> int:
    return int(w[1] * w[2])  # depthwise / group: one input channel per output


def _group_macs(w: tuple[int, ...], stride: tuple[int, int]) -> int:
    # a DEPTHWISE_CONV_2D's (1, Kh, Kw, C*m): one input channel per output; a grouped
    # CONV_2D's (O, Kh, Kw, C/groups), O >= 2: its group's channels
    return int(w[1] * w[2]) if w[0] == 1 else _conv_macs(w, stride)


def _transpose_macs(w: tuple[int, ...], stride: tuple[int, int]) -> int:
    # one output sums ceil(K / stride) taps per axis
    return int(-(-w[1] // stride[0]) * -(-w[2] // stride[1]) * w[3])


def _fc_macs(w: tuple[int, ...], stride: tuple[int, int]) -> int:
    return int(w[1])


# --- the table ---------------------------------------------------------------------------------
def _mac_kind(name: str, mli2: dict, mli1: dict, mli1_sa8: dict, cfg: str, macs, **kw):
    return LayerKind(
        name,
        mli2=mli2,
        mli1=mli1,
        mli1_sa8=mli1_sa8,
        cfg_structs=(cfg,),
        runner_module="mlitool.execute.mli.kernels.mac",
        macs=macs,
        mac=True,
        weighted=True,
        **kw,
    )


_CONV_1 = {f"{lay}:{f}": f"mli_krn_conv2d_{lay}_{f}" for lay in _LAYOUTS_1 for f in _FX_1}
_ELT_OPS = ("add", "sub", "mul", "min", "max")
_MODULE = "mlitool.execute.mli.kernels."

_TABLE: list[LayerKind] = [
    _mac_kind(
        "conv2d",
        _mac2("mli_krn_conv2d_hwcn_{}"),
        _CONV_1,
        {"hwc:sa8": "mli_krn_conv2d_nhwc_sa8_sa8_sa32"},
        "mli_conv2d_cfg",
        _conv_macs,
        word="conv",
        chart="conv",
        row_tiling=WINDOW,
        channel_tiling=True,
    ),
    _mac_kind(
        "depthwise_conv2d",
        _mac2("mli_krn_depthwise_conv2d_hwcn_{}"),
        {f"chw:{f}": f"mli_krn_depthwise_conv2d_chw_{f}" for f in _FX_1},
        {"hwc:sa8": "mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32"},
        "mli_conv2d_cfg",
        _depthwise_macs,
        word="dwconv",
        chart="depthwise",
        row_tiling=WINDOW,
    ),
    _mac_kind(
        "group_conv2d",
        _mac2("mli_krn_group_conv2d_hwcn_{}"),
        {},
        {},
        "mli_conv2d_cfg",
        _group_macs,
        word="gconv",
        chart="conv",
    ),
    _mac_kind(
        "transpose_conv2d",
        _mac2("mli_krn_transpose_conv2d_hwcn_{}"),
        {},
        {},
        "mli_conv2d_cfg",
        _transpose_macs,
        word="tconv",
        chart="conv",
    ),
    # fx8 fully connected is deprecated but still in the 2.0.2 library; fx8w16d is declared in
    # the headers but absent from the library (mli-arithmetic.md 8b), so 2.x uses fx16_fx8_fx8.
    _mac_kind(
        "fully_connected",
        {**_mac2("mli_krn_fully_connected_{}"), "*:fx8": "mli_krn_fully_connected_fx8"},
        _any_layout({f: f"mli_krn_fully_connected_{f}" for f in _FX_1}),
        {"*:sa8": "mli_krn_fully_connected_sa8_sa8_sa32"},
        "mli_fully_connected_cfg",
        _fc_macs,
        word="fc",
        chart="fc",
        channel_tiling=True,
        dense_input=True,
        dense_output=True,
    ),
    LayerKind(
        "lstm_cell",
        "recurrent",
        mli2=_mac2("mli_krn_lstm_cell_{}"),
        cfg_structs=("mli_rnn_cell_cfg",),
        runner_module=_MODULE + "rnn",
        weighted=True,
        lut_args=("tanh", "sigm"),
        dense_input=True,
        dense_output=True,
        word="lstm",
    ),
    # executed (checked against the golden vectors), never lowered
    LayerKind(
        "gru_cell",
        "recurrent",
        runner_module=_MODULE + "rnn",
        dense_input=True,
        dense_output=True,
    ),
    LayerKind(
        "rnn_dense",
        "rnn_dense",
        cfg_structs=("mli_rnn_dense_cfg",),
        runner_module=_MODULE + "mac",
        dense_input=True,
        dense_output=True,
    ),
    *(
        LayerKind(
            kind,
            "pooling",
            mli2=_act2(f"mli_krn_{kind}_hwc_{{}}"),
            mli1=_by_layout1(f"mli_krn_{kind}_{{lay}}_{{s}}"),
            mli1_sa8={"hwc:sa8": f"mli_krn_{kind}_hwc_sa8"},
            cfg_structs=("mli_pool_cfg",),
            output_params=COPIES_INPUT if kind == "maxpool" else None,
            row_tiling=WINDOW,
            runner_module=_MODULE + "pool",
            word="avgpool" if kind == "avepool" else "",
        )
        for kind in ("avepool", "maxpool")
    ),
    *(
        LayerKind(
            f"eltwise_{op}",
            "eltwise",
            mli2=_act2(f"mli_krn_eltwise_{op}_{{}}"),
            mli1=_act1(f"mli_krn_eltwise_{op}_{{}}"),
            row_tiling=ELEMENTWISE,
            runner_module=_MODULE + "eltwise",
            word=op,
        )
        for op in _ELT_OPS
    ),
    LayerKind(
        "relu",
        "activation",
        mli2=_act2("mli_krn_relu_{}"),
        mli1=_act1("mli_krn_relu_{}"),
        cfg_structs=("mli_relu_cfg",),
        output_params=COPIES_INPUT,
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "activations",
    ),
    LayerKind(
        "leaky_relu",
        "activation",
        mli2=_act2("mli_krn_leaky_relu_{}"),
        mli1=_act1("mli_krn_leaky_relu_{}"),
        output_params=SAME_FX_FRAC_BITS,
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "activations",
    ),
    LayerKind(
        "prelu",
        "activation",
        mli2=_act2("mli_krn_prelu_{}"),
        cfg_structs=("mli_prelu_cfg",),
        output_params=SAME_FX_FRAC_BITS,
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "activations",
    ),
    LayerKind(
        "sigm",
        "activation",
        mli2=_act2("mli_krn_sigm_{}", fx8=False),
        mli1=_act1("mli_krn_sigm_{}"),
        output_params=FixedParams(-128, 1, 8, 15),
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "activations",
        lut=320,
    ),
    LayerKind(
        "tanh",
        "activation",
        mli2=_act2("mli_krn_tanh_{}", fx8=False),
        mli1=_act1("mli_krn_tanh_{}"),
        output_params=FixedParams(0, 1, 7, 15),
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "activations",
        lut=344,
    ),
    LayerKind(
        "softmax",
        "activation",
        mli2=_act2("mli_krn_softmax_{}", fx8=False),
        mli1=_act1("mli_krn_softmax_{}"),
        cfg_structs=("mli_softmax_cfg",),
        output_params=FixedParams(-128, 1, 8, 15),
        runner_module=_MODULE + "activations",
        lut=358,
    ),
    LayerKind(
        "l2_normalize",
        "activation",
        mli2=_act2("mli_krn_l2_normalize_{}", fx8=False),
        cfg_structs=("mli_l2_normalize_cfg",),
        output_params=FixedParams(0, 1, 7, 15),
        runner_module=_MODULE + "activations",
        lut=97,
        word="l2norm",
    ),
    LayerKind(
        "argmax",
        "activation",
        mli2=_act2("mli_krn_argmax_{}", fx8=False),
        cfg_structs=("mli_argmax_cfg",),
        output_params=FixedParams(0, 1, 0),  # SA32 indices
        runner_module=_MODULE + "movement",
        dense_output=True,
    ),
    LayerKind(
        "permute",
        "data movement",
        mli2=_act2("mli_krn_permute_{}"),
        mli1=_act1("mli_krn_permute_{}"),
        cfg_structs=("mli_permute_cfg",),
        output_params=COPIES_INPUT,  # a per-axis dim follows the permutation
        runner_module=_MODULE + "movement",
    ),
    LayerKind(
        "concat",
        "data movement",
        mli2=_one2("mli_mov_tensor_sync"),
        mli1=_act1("mli_krn_concat_{}"),
        cfg_structs=("mli_concat_cfg",),
        runner_module="mlitool.execute.mli.walker",
    ),
    LayerKind(
        "padding",
        "data movement",
        mli2=_one2("mli_mov_tensor_sync"),
        mli1=_by_layout1("mli_krn_padding2d_{lay}_{s}"),
        cfg_structs=("mli_mov_cfg_t", "mli_padding2d_cfg"),
        runner_module="mlitool.execute.mli.walker",
        word="pad",
    ),
    LayerKind(
        "copy",
        "data movement",
        mli2=_one2("mli_mov_tensor_sync"),
        cfg_structs=("mli_mov_cfg_t",),
        runner_module="mlitool.execute.mli.view_layers",
    ),
    LayerKind(
        "convert",
        "data movement",
        mli2=_one2("mli_hlp_convert_tensor"),
        mli1=_any_layout({f: "mli_hlp_convert_tensor" for f in _ACT_SUFFIX_1}),
        row_tiling=PER_ELEMENT,
        runner_module=_MODULE + "convert_tensor",
    ),
    # no call: its outputs are views of its input's buffer (the executor walks them itself)
    LayerKind(
        "view",
        "data movement",
        mli2=_one2(""),
        mli1=_any_layout({f: "" for f in _ACT_SUFFIX_1}),
        mli1_sa8={"*:sa8": ""},
        dense_input=True,
    ),
    # Ops MLI lacks: mlitool's own C on SA8 tensors; the layer's `kernel` names its entry.
    LayerKind("fallback", "fallback", mli2=_one2("mlitool_fallback")),
]

# Every layer kind by name, and every registered fallback kernel by the name its layers'
# `kernel` holds. The runtime creates the MLI 2.x look-up tables in this order (sigm, tanh,
# softmax, l2_normalize: `kernels.LUT_LENGTHS`).
KINDS: dict[str, LayerKind] = {k.name: k for k in _TABLE}


def register_fallback(kernel: Any, *, row_tiling: str | None = None) -> LayerKind:
    """Enter a fallback kernel (a `mlitool.mli.fallback.FallbackKernel`) in KINDS under its layers'
    `kernel` name; `row_tiling`: PER_ELEMENT where each output element is a function of its
    input element alone. Registering the same kernel again is a no-op; another kernel of the
    same name is a ValueError."""
    entry = LayerKind(
        kernel.kernel,
        KINDS["fallback"].chart,
        cfg_structs=(kernel.cfg_type,) if kernel.cfg_type else (),
        row_tiling=row_tiling,
        fallback=kernel,
    )
    known = KINDS.get(entry.name)
    if known is not None:
        if known.fallback is kernel and known.row_tiling == row_tiling:
            return known
        raise ValueError(f"layer kind or fallback kernel {entry.name!r} is registered twice")
    KINDS[entry.name] = entry
    return entry


def fallback_kernels() -> dict[str, Any]:
    """The registered fallback kernels by name (the layers' `kernel`)."""
    return {name: k.fallback for name, k in KINDS.items() if k.fallback is not None}


def kind_of(layer: Any) -> LayerKind | None:
    """A layer's entry: its fallback kernel's for a fallback layer; None for an unknown kind."""
    name = layer.kernel if layer.kind == "fallback" else layer.kind
    return KINDS.get(name)


def cfg_fields(structs: Mapping[str, list], cfg_type: str) -> list | None:
    """The fields of config struct `cfg_type` (as `cfg_structs` lists them): one of a target's
    `structs`, or a fallback kernel's (int32 fields, then its state container); None when
    neither has it."""
    if cfg_type in structs:
        return structs[cfg_type]
    for k in KINDS.values():
        if k.fallback is not None and k.fallback.cfg_type == cfg_type:
            fields = [(f, "i32", f, None) for f in k.fallback.cfg]
            stateful = getattr(k.fallback, "state", None)  # FallbackKernel.state
            state = [("state", "scratch", "scratch", None)] if stateful else []
            return fields + state
    return None


def kinds_where(test: Callable[[LayerKind], Any]) -> tuple[str, ...]:
    """The names of the layer kinds (not the fallback kernels) for which `test` holds."""
    return tuple(k.name for k in _TABLE if test(k))


def c_names(which: str, extra: Iterable[str] = ()) -> dict[str, dict[str, str]]:
    """A kernel table (kind -> {"layout:fmt" | "*:fmt": C function}) from the LayerKind fields
    `which` ("mli2" or "mli1") plus `extra` (e.g. "mli1_sa8"); kinds with none are left out."""
    table = {}
    for k in _TABLE:
        names = dict(getattr(k, which))
        if names:
            for more in extra:
                names.update(getattr(k, more))
            table[k.name] = names
    return table
