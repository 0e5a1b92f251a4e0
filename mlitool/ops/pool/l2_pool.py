"""L2_POOL_2D (TFLite and TFLite Micro: float32 only): TFLite's float32 kernel, each window's
squares summed in float32 one after the other (rows, then columns; padding outside the input
not counted), then sqrt(sum / count) and the fused activation. tflite mode refuses an int8 one
(no TFLite kernel to equal). A float model quantized by mlitool runs the `l2pool8` fallback C
(`l2_pool_c.py`)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute import windows as win
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activated, is_float, merge_batch, real_input
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.binary.lower import act_range
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.pool.l2_pool_c import L2POOL8, scale_factor

f32 = np.float32


def float_l2_pool_2d(c: Call):
    x = merge_batch(real_input(c, 0)).astype(f32)
    kh, kw = c.opt("filter_h"), c.opt("filter_w")
    oh, ow, pt, pl, sh, sw, _, _ = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=0)
    total = np.zeros(v.shape[:4], f32)
    for i in range(kh):
        for j in range(kw):
            total = (total + v[..., i, j] * v[..., i, j]).astype(f32)
    count = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)
    return activated(c, np.sqrt(total / count[None, :, :, None].astype(f32)).astype(f32))


def tflite_l2_pool_2d(c: Call):
    if not is_float(c.tin(0)):
        raise c.unsupported(f"{c.tin(0).dtype} L2_POOL_2D (TFLite's kernel takes float32 only)")
    return float_l2_pool_2d(c)


# --- lowering (a float model quantized by mlitool) -------------------------------------------


def l2_pool_hwc(s: Subject):
    """L2_POOL_2D is lowered for a 4-D tensor in the HWC layout only (fallback C l2pool8)"""
    return _OK if len(s.input(0).shape) == 4 and s.layout == "hwc" else {}


CHECKS = (*FB.CHECKS, l2_pool_hwc)


def lower_l2_pool(b: Builder, op: ir.Op, fmt: str) -> None:
    in_idx, out_idx = op.inputs[0], op.outputs[0]
    x = b.use(op, in_idx, ElType.SA8)
    out = b.produce(out_idx, ElType.SA8)
    (s_in, z_in), (s_out, z_out) = FB.sa8_params(b, op, in_idx), FB.sa8_params(b, op, out_idx)
    k2, g = scale_factor(float(s_in) / float(s_out))
    _, h, w, _ = b.g.tensors[in_idx].shape
    kh, kw = int(op.options["filter_h"]), int(op.options["filter_w"])
    _, _, pt, pl, sh, sw, _, _ = win.geometry(op.options, h, w, kh, kw)
    lo, hi = act_range(s_out, z_out, op.options.get("fused_activation", "NONE"))
    cfg = dict(kh=kh, kw=kw, sh=sh, sw=sw, pt=pt, pl=pl, zp_in=z_in, k2=k2, g=g)
    cfg |= dict(out_zp=z_out, lo=lo, hi=hi)
    b.fallback(
        op,
        L2POOL8,
        [x],
        [out.name],
        cfg=cfg,
        notes=["no MLI kernel for L2_POOL_2D: fallback C (l2pool8, integer square root)"],
    )
