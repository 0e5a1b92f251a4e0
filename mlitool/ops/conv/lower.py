"""MAC layers: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and FULLY_CONNECTED become conv2d,
depthwise_conv2d, group_conv2d, transpose_conv2d or fully_connected kernels with weights and bias
in the kernel's layout and format (SA8 weights with SA32 bias, or FX weights and bias within the
accumulator's headroom)."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from mlitool import ir
from mlitool.geometry import mli_window, tflite_padding, transpose_conv_padding
from mlitool.mli import quant as Q
from mlitool.mli.kinds import KINDS
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.types import FORMATS, ElType, MliTensor, Role
from mlitool.ops.conv.encoding import (
    clamp_degenerate,
    fx_weights,
    real_bias,
    sa8_weights,
    sa32_bias,
    sa_weight_params,
)
from mlitool.passes.as_conv import AS_CONV, HWC_ROWS
from mlitool.passes.pad_fusion import EXPLICIT_PADDING, FUSED_PAD


def lower_mac(b: Builder, op: ir.Op, fmt: str) -> None:
    """CONV_2D, DEPTHWISE_CONV_2D (as depthwise or group conv2d), TRANSPOSE_CONV and
    FULLY_CONNECTED (one row); the passes made a conv2d of a depthwise over one channel and of
    a fully connected over several rows (passes/as_conv.py)."""
    kind = layer_kind(b.g, op)
    el_a, el_w, _ = FORMATS[fmt]
    wt = b.g.slot(op, "weights")
    x_name = b.use(op, op.input("input"), el_a)
    rows = op.options.get(HWC_ROWS)
    if rows:
        x_name = b.dense_view(
            op,
            fmt,
            x_name,
            (rows, 1, int(wt.shape[3])),
            "fully connected rows as an HWC map for a 1x1 conv2d",
        )
    x = b.tensors[x_name]
    out = b.produce(op.outputs[0], el_a)
    notes = [op.options[AS_CONV]] if AS_CONV in op.options else []
    encode = _sa8_operands if el_w == ElType.SA8 else _fx_operands
    wm, bm = encode(b, op, fmt, kind, x, out, notes)
    b.add(wm)
    b.add(bm)
    relu = (
        nullcontext(out.name)
        if kind != "fully_connected" or b.target.cfg_relu_on_fc
        else b.relu_after(op, fmt, out.name)
    )
    with relu as kout:
        cfg_type, cfg, kout, shown = _config(b, op, kind, x, out, kout, notes)
        b.layer(
            op,
            kind,
            fmt,
            [x_name],
            [kout],
            weights=wm.name,
            bias=bm.name,
            cfg_type=cfg_type,
            cfg=cfg,
            notes=notes,
        )
        if shown is not None:
            b.view_layer(op, kout, *shown)


def _cout(op: ir.Op, wt: ir.Tensor) -> int:
    return wt.shape[0] if op.type != "DEPTHWISE_CONV_2D" else wt.shape[3]


def _sa8_operands(
    b: Builder, op: ir.Op, fmt: str, kind: str, x: MliTensor, out: MliTensor, notes: list[str]
) -> tuple[MliTensor, MliTensor]:
    """SA8 weights (the model's own where int8, per-channel otherwise) and SA32 bias."""
    x_idx, w_idx, b_idx = op.input("input"), op.input("weights"), op.input("bias")
    wt, bt = b.g.tensors[w_idx], b.g.tensor(b_idx)
    cout, w_axis_tfl = _cout(op, wt), 3 if op.type == "DEPTHWISE_CONV_2D" else 0
    dim = Q.mli_quant_dim(op.type, b.target, b.layout)
    # float weights: per channel, but per tensor for a fully connected (also as a conv2d)
    per_channel = op.model_type != "FULLY_CONNECTED"
    w_q, w_scale, per_axis = sa8_weights(wt, w_axis_tfl, per_channel)
    b_q, b_float_scale = sa32_bias(b, bt, x_idx, w_scale, cout)
    clamped = None
    if b.target.int16_scales:  # per-axis int8 frac bits
        w_q, w_scale, b_q, b_float_scale, clamped = clamp_degenerate(
            w_q, w_scale, b_q, b_float_scale, b.sa_params(x_idx), w_axis_tfl, per_axis
        )
    wm, bm = _weights_and_bias(b, op, kind, out, w_q, ElType.SA8, b_q, ElType.SA32)
    sa_weight_params(b, wm, bm, x, w_scale, b_float_scale, per_axis, dim)
    if clamped:
        wm.notes.append(clamped)
        b.warnings.append(f"{op.label}: {clamped}")
    if bt is None:
        bm.notes.append("the model has no bias: zeros")
    return wm, bm


def _fx_operands(
    b: Builder, op: ir.Op, fmt: str, kind: str, x: MliTensor, out: MliTensor, notes: list[str]
) -> tuple[MliTensor, MliTensor]:
    """FX weights and bias with frac bits that keep the accumulator and the bias term within
    range (the output's lowered to at most in + weights frac bits)."""
    el_a, el_w, el_b = FORMATS[fmt]
    x_idx, w_idx, b_idx = op.input("input"), op.input("weights"), op.input("bias")
    wt, bt = b.g.tensors[w_idx], b.g.tensor(b_idx)
    cout = _cout(op, wt)
    k_macs = _macs(b, op, kind)
    w_max, w_fx_of = fx_weights(b, wt, el_w.bits)
    b_real = real_bias(b, bt, x_idx, wt) if bt is not None else np.zeros(cout)
    w_frac = Q.fx_frac_bits(w_max, el_w.bits)
    deficit = Q.mac_headroom_deficit(k_macs, el_a.bits, el_w.bits, Q.acc_bits_of(fmt))
    if deficit:
        w_frac -= deficit
        notes.append(
            f"{k_macs} MACs per output: weights frac bits lowered by {deficit} "
            "for accumulator headroom"
        )
    # MLI adds the bias shifted to the accumulator's frac bits (in + w) as an int32 (the
    # 2.0.2 reference truncates it, fx16_fx8_fx8 saturates it): keep it inside 31 bits.
    b_max = float(np.max(np.abs(b_real), initial=0.0))
    if b_max > 0:
        over = x.frac_bits + w_frac - (Q.fx_frac_bits(b_max, 32) - 1)
        if over > 0:
            w_frac -= over
            notes.append(
                f"weights frac bits lowered by {over} so the bias fits the "
                "32-bit bias term at the accumulator's frac bits"
            )
    limit = x.frac_bits + w_frac
    b_frac = min(Q.fx_frac_bits(np.max(np.abs(b_real), initial=0.0), el_b.bits), limit)
    if out.frac_bits > limit:
        notes.append(
            f"output frac bits lowered from {out.frac_bits} to {limit} "
            "(MLI: out_frac <= in_frac + w_frac)"
        )
        out.frac_bits = limit
    w_fx, w_sat = w_fx_of(w_frac)
    b_fx, b_sat = Q.fx_quantize(b_real, b_frac, el_b.bits)
    wm, bm = _weights_and_bias(b, op, kind, out, w_fx, el_w, b_fx, el_b, (w_frac, b_frac))
    for tm, n in ((wm, w_sat), (bm, b_sat)):
        if n:
            tm.notes.append(f"{n} of {tm.size} values saturated at frac bits {tm.frac_bits}")
    return wm, bm


def _weights_and_bias(
    b: Builder, op: ir.Op, kind: str, out: MliTensor, w, el_w, bias, el_b, frac=(None, None)
) -> tuple[MliTensor, MliTensor]:
    """The weights (OHWI data `w`, put in the kernel's layout) and bias tensors of a MAC layer;
    `frac`: their frac bits in FX formats."""
    (w_idx, wt), (b_idx, bt) = ((op.input(s), b.g.tensor(op.input(s))) for s in ("weights", "bias"))
    w_data, lay = _weights_layout(b, kind, w, op.type == "DEPTHWISE_CONV_2D")
    wm = MliTensor(
        name=b.base(w_idx),
        role=Role.WEIGHTS,
        shape=w_data.shape,
        el_type=el_w,
        layout=lay,
        data=w_data,
        frac_bits=frac[0],
        source=wt.name,
        source_index=w_idx,
    )
    bm = MliTensor(
        name=bt.name if bt is not None else f"{out.name}_bias",
        role=Role.BIAS,
        shape=(_cout(op, wt),),
        el_type=el_b,
        layout="N",
        data=bias,
        frac_bits=frac[1],
        source=bt.name if bt is not None else None,
        source_index=b_idx if b_idx >= 0 else None,
    )
    return wm, bm


def _config(
    b: Builder, op: ir.Op, kind: str, x: MliTensor, out: MliTensor, kout: str, notes: list[str]
) -> tuple[str | None, dict, str, tuple[str, str] | None]:
    """(config type, config, the tensor the kernel writes, and (the model's tensor, why) when
    a view shows the kernel's output in the model's shape)."""
    wt = b.g.slot(op, "weights")
    cout = _cout(op, wt)
    if kind == "fully_connected":
        cfg_type, cfg = (
            ("mli_fully_connected_cfg", {"relu_type": b.relu_type(op, out)})
            if b.target.cfg_relu_on_fc
            else (None, {})
        )
        shape = list(b.tensors[kout].shape)
        if len(shape) == 1:
            return cfg_type, cfg, kout, None
        vec = b.shaped_output(b.tensors[kout], (cout,), "vec")  # MLI 2.x: out->rank == 1
        why = f"the fully connected kernel's rank-1 output as {shape}"
        return cfg_type, cfg, vec, (kout, why)
    if HWC_ROWS in op.options:  # the conv2d writes the rows as an HWC map
        hwc = b.shaped_output(out, (op.options[HWC_ROWS], 1, cout), "hwc")
        cfg = _conv_cfg(b, op, x, out, wt)
        return "mli_conv2d_cfg", cfg, hwc, (out.name, f"conv2d rows to {list(out.shape)}")
    if kind == "transpose_conv2d":
        return "mli_conv2d_cfg", _transpose_cfg(b, op, out, wt), kout, None
    if FUSED_PAD in op.options:
        notes.append(
            f"takes the padding of {op.options[FUSED_PAD]} (MLI pads "
            "convolutions with real zero, as PAD does): no copy"
        )
    return "mli_conv2d_cfg", _conv_cfg(b, op, x, out, wt), kout, None


def _weights_layout(
    b: Builder, kind: str, w: np.ndarray, depthwise: bool
) -> tuple[np.ndarray, str]:
    if b.target.hwcn_weights:
        # transpose conv2d takes the weights unmirrored, as TFLite scatters them: HWCN too; a
        # grouped CONV_2D's (O, Kh, Kw, C/groups) are group_conv2d's HWCN alike
        if kind in ("conv2d", "transpose_conv2d") or (kind == "group_conv2d" and not depthwise):
            return np.ascontiguousarray(w.transpose(1, 2, 3, 0)), "HWCN"
        if kind in ("depthwise_conv2d", "group_conv2d"):
            return np.ascontiguousarray(
                w.reshape(w.shape[1], w.shape[2], 1, w.shape[3])
            ), "HW1N" if kind == "depthwise_conv2d" else "HWCN"
        return np.ascontiguousarray(w.T), "NM"
    if kind == "conv2d":
        if b.layout == "chw":
            return np.ascontiguousarray(w.transpose(0, 3, 1, 2)), "NCHW"
        return np.ascontiguousarray(w), "NHWC"
    if kind == "depthwise_conv2d":
        if b.layout == "chw":
            return np.ascontiguousarray(w.transpose(3, 0, 1, 2)), "N1HW"
        return np.ascontiguousarray(w), "1HWN"
    return np.ascontiguousarray(w), "MN"


def _macs(b: Builder, op: ir.Op, kind: str) -> int:
    """MACs per output element: the kind's count (`mlitool.mli.kinds`) of the OHWI / MN weights."""
    o = op.options
    stride = (o.get("stride_h", 1), o.get("stride_w", 1))
    return KINDS[kind].macs(b.g.slot(op, "weights").shape, stride)


def _conv_fields(b: Builder, op: ir.Op, out: MliTensor, stride, pads, dilation) -> dict:
    """A convolution's config: relu, stride, padding, and the dilation where the target has it."""
    cfg = {"relu_type": b.relu_type(op, out), **mli_window(stride, pads)}
    if b.target.has_dilation:
        cfg.update(dilation_width=dilation[1], dilation_height=dilation[0])
    return cfg


def _conv_cfg(b: Builder, op: ir.Op, x: MliTensor, out: MliTensor, wt: ir.Tensor) -> dict:
    o = op.options
    in_shape = b.g.slot(op, "input").shape
    kh, kw = wt.shape[1], wt.shape[2]
    dh, dw = o.get("dilation_h", 1), o.get("dilation_w", 1)
    sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
    if EXPLICIT_PADDING in o:  # a fused PAD's and its own (passes.pad_fusion)
        pt, pb, pl, pr = o[EXPLICIT_PADDING]
    else:
        _, pt, pb = tflite_padding(o.get("padding", "VALID"), in_shape[1], kh, sh, dh)
        _, pl, pr = tflite_padding(o.get("padding", "VALID"), in_shape[2], kw, sw, dw)
    return _conv_fields(b, op, out, (sh, sw), (pt, pb, pl, pr), (dh, dw))


def _transpose_cfg(b: Builder, op: ir.Op, out: MliTensor, wt: ir.Tensor) -> dict:
    """mli_krn_transpose_conv2d's config: TFLite's padding (that of the forward convolution
    from the output to the input) before, and after what makes MLI's output size
    `(in - 1) * stride + kernel - before - after` the model's (the support check has made
    sure both lie in [0, kernel))."""
    o = op.options
    in_shape = b.g.slot(op, "input").shape
    out_shape = b.g.tensors[op.outputs[0]].shape
    sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
    padding = o.get("padding", "SAME")
    pt, pb = transpose_conv_padding(padding, in_shape[1], out_shape[1], wt.shape[1], sh)
    pl, pr = transpose_conv_padding(padding, in_shape[2], out_shape[2], wt.shape[2], sw)
    return _conv_fields(b, op, out, (sh, sw), (pt, pb, pl, pr), (1, 1))  # MLI 2.x only
