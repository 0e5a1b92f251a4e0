"""MLI 2.x kernel-size specializations, picked by TensorFlow Lite Micro's rule (issue 36).

MLI 2.0.2 ships, beside each generic SA8 kernel, versions for fixed kernel sizes whose inner loops
are unrolled (on VPX, and for depthwise on EM/HS DSP); on the portable code they compute the same
bytes. TFLite Micro's arc_mli kernels pick them at Prepare time
(`mli_function_specializations.h`); `specialize` picks the same for each layer:

| generic SA8 kernel | specialization | when |
|---|---|---|
| `mli_krn_conv2d_hwcn_sa8_sa8_sa32` | `_k1x1` | 1x1 weights, no padding |
| | `_k3x3`, `_k5x5` | 3x3, 5x5 weights |
| `mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32`, `mli_krn_group_conv2d_hwcn_sa8_sa8_sa32` | `_k3x3`, `_k5x5` | 3x3, 5x5 weights |
| `mli_krn_avepool_hwc_sa8`, `mli_krn_maxpool_hwc_sa8` | `_k2x2`, `_k3x3` | 2x2, 3x3 window |
| `mli_krn_transpose_conv2d_hwcn_sa8_sa8_sa32` | `_k2x2_str2`, `_k4x4_str2` | 2x2, 4x4 weights, stride 2 |

A dilated layer keeps the generic kernel (TFLite Micro's MLI kernels take no dilation). The
executor computes every layer the same whichever kernel the C calls.
"""

from __future__ import annotations

import dataclasses

from mlitool.mli.types import MliLayer, MliModel

_CONV = "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
_DEPTHWISE = "mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32"
_GROUP = "mli_krn_group_conv2d_hwcn_sa8_sa8_sa32"
_POOLS = ("mli_krn_avepool_hwc_sa8", "mli_krn_maxpool_hwc_sa8")
_TRANSPOSE = "mli_krn_transpose_conv2d_hwcn_sa8_sa8_sa32"
_PADDINGS = ("padding_left", "padding_right", "padding_top", "padding_bottom")


def specialized_kernel(model: MliModel, layer: MliLayer) -> str:
    """The function TFLite Micro's rule calls for `layer` (its generic kernel where none fits)."""
    k, cfg = layer.kernel, layer.cfg
    if not model.target.size_specializations:
        return k
    if cfg.get("dilation_width", 1) != 1 or cfg.get("dilation_height", 1) != 1:
        return k
    if k in _POOLS:
        size = (cfg.get("kernel_height"), cfg.get("kernel_width"))
        return {(2, 2): f"{k}_k2x2", (3, 3): f"{k}_k3x3"}.get(size, k)
    if k not in (_CONV, _DEPTHWISE, _GROUP, _TRANSPOSE) or not layer.weights:
        return k
    h, w = model.tensors[layer.weights].shape[:2]  # HWCN / HW1N weights
    if k == _TRANSPOSE:
        strides = (cfg.get("stride_height"), cfg.get("stride_width"))
        if strides != (2, 2):
            return k
        return {(2, 2): f"{k}_k2x2_str2", (4, 4): f"{k}_k4x4_str2"}.get((h, w), k)
    if k == _CONV and (h, w) == (1, 1) and not any(cfg.get(p, 0) for p in _PADDINGS):
        return f"{k}_k1x1"
    return {(3, 3): f"{k}_k3x3", (5, 5): f"{k}_k5x5"}.get((h, w), k)


def specialize(model: MliModel) -> MliModel:
    """`model` with each layer calling its specialization (a note says which and why)."""
    layers = []
    for layer in model.layers:
        chosen = specialized_kernel(model, layer)
        if chosen != layer.kernel:
            note = f"calls {chosen}: the kernel-size specialization TFLite Micro picks"
            layer = dataclasses.replace(layer, kernel=chosen, notes=[*layer.notes, note])
        layers.append(layer)
    return dataclasses.replace(model, layers=layers)
