"""The MLI kernels of each MLI version (which TFLite ops become which layer kinds: ops.py).

Tables: layer kind -> {"<layout>:<format>" or "*:<format>" (any layout): C function}; each
`mlitool.mli.target.Target` holds one and answers `kernel(kind, fmt, layout)` (None when that
version has no such kernel: lowering then refuses the layer and names `formats_for`).
"""

from __future__ import annotations

# MLI 2.x look-up tables (`mli_lut`, int16 entries): layer kind -> table length. Their kernels take
# the table that `mli_krn_<kind>_create_lut` fills in; MLI 1.x kernels have their tables built in.
LUT_LENGTHS: dict[str, int] = {"sigm": 320, "tanh": 344, "softmax": 358, "l2_normalize": 97}
# Kernels that take the tables of other kinds, in argument order.
_LUT_ARGS: dict[str, tuple[str, ...]] = {"lstm_cell": ("tanh", "sigm")}


def luts_of(kind: str) -> tuple[str, ...]:
    """The look-up tables a layer kind's MLI 2.x kernel takes, in argument order."""
    return _LUT_ARGS.get(kind, (kind,) if kind in LUT_LENGTHS else ())


# MLI relu_type enum values (mli_relu_type).
RELU_NONE, RELU_GEN, RELU_1, RELU_6 = 0, 1, 2, 3

_MAC_SUFFIX_2 = {"sa8": "sa8_sa8_sa32", "fx16": "fx16", "fx8w16d": "fx16_fx8_fx8"}
# Activation-only kernels: fx8w16d layers use the FX16 activation kernel.
_ACT_SUFFIX = {"sa8": "sa8", "fx16": "fx16", "fx8w16d": "fx16", "fx8": "fx8"}
_ELT = ("eltwise_add", "eltwise_sub", "eltwise_mul", "eltwise_min", "eltwise_max")


def mli2_kernels() -> dict[str, dict[str, str]]:
    """MLI 2.x names: every kernel takes any layout (HWC activations)."""
    t: dict[str, dict[str, str]] = {}
    for kind in ("conv2d", "depthwise_conv2d", "group_conv2d", "transpose_conv2d"):
        t[kind] = {f: f"mli_krn_{kind}_hwcn_{s}" for f, s in _MAC_SUFFIX_2.items()}
    # fx8 fully connected is deprecated but still in the 2.0.2 library; fx8w16d is declared
    # in the headers but absent from the library (mli-arithmetic.md 8b), so 2.x uses fx16_fx8_fx8.
    t["fully_connected"] = {f: f"mli_krn_fully_connected_{s}" for f, s in _MAC_SUFFIX_2.items()}
    t["fully_connected"]["fx8"] = "mli_krn_fully_connected_fx8"
    t["lstm_cell"] = {f: f"mli_krn_lstm_cell_{s}" for f, s in _MAC_SUFFIX_2.items()}
    for kind in ("avepool", "maxpool"):
        t[kind] = {f: f"mli_krn_{kind}_hwc_{s}" for f, s in _ACT_SUFFIX.items()}
    for kind in _ELT + ("relu", "leaky_relu", "prelu", "permute"):
        t[kind] = {f: f"mli_krn_{kind}_{s}" for f, s in _ACT_SUFFIX.items()}
    for kind in ("sigm", "tanh", "softmax", "l2_normalize", "argmax"):
        t[kind] = {f: f"mli_krn_{kind}_{s}" for f, s in _ACT_SUFFIX.items() if s != "fx8"}
    for kind in ("concat", "padding", "copy"):
        t[kind] = {f: "mli_mov_tensor_sync" for f in _ACT_SUFFIX}
    t["convert"] = {f: "mli_hlp_convert_tensor" for f in _ACT_SUFFIX}
    t["view"] = {f: "" for f in _ACT_SUFFIX}
    # Ops MLI lacks: mlitool's own C on SA8 tensors (mlitool.fallback; the layer names it).
    t["fallback"] = {f: "mlitool_fallback" for f in _ACT_SUFFIX}
    return {kind: {f"*:{f}": name for f, name in by_fmt.items()} for kind, by_fmt in t.items()}


def mli1_kernels(with_sa8: bool) -> dict[str, dict[str, str]]:
    """MLI 1.x names; keys are "<layout>:<format>" or "*:<format>" (any layout)."""
    fx = ("fx8", "fx16", "fx8w16d")
    act = {"fx8": "fx8", "fx16": "fx16", "fx8w16d": "fx16"}
    t: dict[str, dict[str, str]] = {
        "conv2d": {f"{lay}:{f}": f"mli_krn_conv2d_{lay}_{f}" for lay in ("chw", "hwc") for f in fx},
        "depthwise_conv2d": {f"chw:{f}": f"mli_krn_depthwise_conv2d_chw_{f}" for f in fx},
        "fully_connected": {f"*:{f}": f"mli_krn_fully_connected_{f}" for f in fx},
    }
    for kind in ("avepool", "maxpool"):
        t[kind] = {
            f"{lay}:{f}": f"mli_krn_{kind}_{lay}_{s}"
            for lay in ("chw", "hwc")
            for f, s in act.items()
        }
    for kind in _ELT + ("relu", "leaky_relu", "sigm", "tanh", "softmax", "permute", "concat"):
        t[kind] = {f"*:{f}": f"mli_krn_{kind}_{s}" for f, s in act.items()}
    t["padding"] = {
        f"{lay}:{f}": f"mli_krn_padding2d_{lay}_{s}"
        for lay in ("chw", "hwc")
        for f, s in act.items()
    }
    t["convert"] = {f"*:{f}": "mli_hlp_convert_tensor" for f in act}
    t["view"] = {f"*:{f}": "" for f in act}
    if with_sa8:
        t["conv2d"]["hwc:sa8"] = "mli_krn_conv2d_nhwc_sa8_sa8_sa32"
        t["depthwise_conv2d"]["hwc:sa8"] = "mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32"
        t["fully_connected"]["*:sa8"] = "mli_krn_fully_connected_sa8_sa8_sa32"
        t["avepool"]["hwc:sa8"] = "mli_krn_avepool_hwc_sa8"
        t["maxpool"]["hwc:sa8"] = "mli_krn_maxpool_hwc_sa8"
        t["view"]["*:sa8"] = ""
    return t
