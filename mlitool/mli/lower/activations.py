"""Pooling, activations and element-wise ops: one kernel each, on activations of the layer's
format (constant operands encoded as parameters), with the output parameters the kernel leaves."""

from __future__ import annotations

import numpy as np

from mlitool import ir, opspec
from mlitool.errors import UnsupportedError
from mlitool.geometry import mli_window, safe_pool_axis, tflite_padding
from mlitool.mli.lower import fallback_binary
from mlitool.mli.lower import params as P
from mlitool.mli.lower.broadcast import over_slices
from mlitool.mli.lower.builder import RELU_TYPES, Builder, act_el
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.passes.pad_fusion import EXPLICIT_PADDING, FUSED_PAD
from mlitool.mli.types import ElType, MliTensor, Role

# leaky_relu / prelu: an FX output takes its input's frac bits (ops.SAME_FX_FRAC_BITS)
SAME_FRAC_BITS_NOTE = "frac bits of the input: MLI's FX kernel requires them equal"


def lower_pool(b: Builder, op: ir.Op, fmt: str) -> None:
    """AVERAGE_POOL_2D, MAX_POOL_2D, and MEAN over H and W (average pooling over the whole map);
    a window that would make MLI write outside its output becomes the equivalent safe one."""
    kind = layer_kind(b.g, op)
    el = act_el(fmt)
    x_name = b.use(op, op.inputs[0], el)
    x = b.tensors[x_name]
    in_shape = b.g.tensors[op.inputs[0]].shape
    notes: list[str] = []
    if op.type == "MEAN":
        kh, kw, sh, sw, pad = in_shape[1], in_shape[2], 1, 1, "VALID"
        notes.append("MEAN over H, W lowered as average pooling over the whole map")
    else:
        o = op.options
        kh, kw, sh, sw = o["filter_h"], o["filter_w"], o["stride_h"], o["stride_w"]
        pad = o.get("padding", "VALID")
    if EXPLICIT_PADDING in op.options:  # a PADV2 of the lowest value (passes.pool_padding)
        pt, pb, pl, pr = op.options[EXPLICIT_PADDING]
        oh, ow = (in_shape[1] + pt + pb - kh) // sh + 1, (in_shape[2] + pl + pr - kw) // sw + 1
        notes.append(f"{op.options[FUSED_PAD]} (lowest-value padding) taken as the pool's padding")
    else:
        oh, pt, pb = tflite_padding(pad, in_shape[1], kh, sh)
        ow, pl, pr = tflite_padding(pad, in_shape[2], kw, sw)
    geo = []
    for axis, (n, k, s, before, after, o_) in (
        ("height", (in_shape[1], kh, sh, pt, pb, oh)),
        ("width", (in_shape[2], kw, sw, pl, pr, ow)),
    ):
        safe = safe_pool_axis(n, k, s, before, after, o_)
        if safe is None:
            raise UnsupportedError(
                f"{op.label}: pooling window {k} over {n} input {axis} with padding "
                f"{before}/{after} makes MLI 2.0.2 write outside its output buffer, and no "
                "equivalent safe configuration exists"
            )
        if safe != (k, s, before, after):
            notes.append(
                f"{axis}: window {k}, stride {s}, padding {before}/{after} would make MLI "
                f"write outside its output (min padding < kernel - in - 1); lowered "
                f"as the equivalent window {safe[0]}, stride {safe[1]}, padding "
                f"{safe[2]}/{safe[3]}"
            )
        geo.append(safe)
    (kh, sh, pt, pb), (kw, sw, pl, pr) = geo
    out_idx = op.outputs[0]
    pool_out_shape = (1, oh, ow, in_shape[3])
    needs_view = op.type == "MEAN" and tuple(b.g.tensors[out_idx].shape) != pool_out_shape
    if needs_view:
        kout, pending = _pool_to_view(b, out_idx, el, pool_out_shape), []
    else:
        kout, pending = b.kernel_output(op, out_idx, el, P.kernel_leaves(kind, x))
    cfg = {"kernel_width": kw, "kernel_height": kh, **mli_window((sh, sw), (pt, pb, pl, pr))}
    with b.relu_after(op, fmt, kout) as kout2:
        b.layer(op, kind, fmt, [x_name], [kout2], cfg_type="mli_pool_cfg", cfg=cfg, notes=notes)
    b.finish(op, pending, "maxpool copies its input's parameters")
    if needs_view:
        b.view_layer(op, kout, b.primary[out_idx], "MEAN output shape")


def _pool_to_view(b: Builder, out_idx: int, el: ElType, pool_shape) -> str:
    """MEAN without keep_dims: pool into an HWC tensor, then view it in the model's shape."""
    final = b.produce(out_idx, el)
    t = b.derived(final, f"{final.name}_hwc", shape=b.mli_shape(pool_shape))
    final.buffer = t.name
    return t.name


def _operand(b: Builder, op: ir.Op, idx: int, el: ElType) -> str:
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, el)
    real = P.real(t)
    full = tuple(b.g.tensors[op.outputs[0]].shape)
    broadcast = t.size > 1 and tuple(t.shape) != full
    if broadcast:
        uniform = bool(np.all(np.asarray(t.data) == np.asarray(t.data).reshape(-1)[0]))
        real = real.reshape(-1)[:1].reshape(()) if uniform else np.broadcast_to(real, full)
    shape = b.mli_shape(real.shape) if real.size > 1 else ()
    if not shape and b.g.tensors[op.outputs[0]].size == 1:
        # MLI takes a one-element activation for a scalar too, and two scalars make no
        # output shape (MLI_STATUS_SHAPE_MISMATCH): the constant takes the output's shape
        shape = b.mli_shape(full)
        real = real.reshape(-1)[:1].reshape(shape)
    m = MliTensor(
        name=b.base(idx), role=Role.PARAM, shape=shape, el_type=el, source=t.name, source_index=idx
    )
    data = b.encode_param(m, t, real, el, lambda: np.asarray(t.data, np.int8))
    if broadcast:
        data = np.asarray(data)
        data = data.reshape(-1)[:1].reshape(()) if real.ndim == 0 else np.broadcast_to(data, full)
    if b.layout == "chw" and data.ndim == 4:
        data = data.transpose(0, 3, 1, 2)
    m.data = np.ascontiguousarray(np.asarray(data).reshape(shape)).reshape(shape)
    if broadcast:
        m.notes.append(
            f"constant {list(t.shape)} broadcast over {list(full)}: "
            + (
                "all values equal, passed as a scalar"
                if m.data.size == 1
                else f"materialized at the output's shape (MLI eltwise takes equal shapes or a "
                f"scalar): {m.nbytes} bytes of ROM instead of {t.size * el.dtype.itemsize}"
            )
        )
    return b.add(m)


def lower_eltwise(b: Builder, op: ir.Op, fmt: str) -> None:
    """ADD, SUB, MUL, MINIMUM, MAXIMUM (a constant operand is encoded as a parameter; activations
    that broadcast are taken slice by slice, see `broadcast`; an activation against a broadcast
    constant takes the fallback kernel)."""
    if fallback_binary.mli_refuses(b, op):
        return fallback_binary.lower_binary(b, op, fmt)
    el = act_el(fmt)
    ins = [_operand(b, op, i, el) for i in op.inputs[:2]]
    out, _ = b.kernel_output(op, op.outputs[0], el)
    with b.relu_after(op, fmt, out) as kout:
        sliced = over_slices(b, ins, kout)
        layer = b.layer(op, layer_kind(b.g, op), fmt, ins, [kout])
        if sliced:
            layer.calls, note = sliced
            layer.notes.append(note)


def lower_relu(b: Builder, op: ir.Op, fmt: str) -> None:
    """RELU, RELU6, RELU_N1_TO_1."""
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    leaves = P.kernel_leaves("relu", b.tensors[x])
    kout, pending = b.kernel_output(op, op.outputs[0], el, leaves)
    b.layer(
        op,
        "relu",
        fmt,
        [x],
        [kout],
        cfg_type="mli_relu_cfg",
        cfg={"relu_type": RELU_TYPES[op.type]},
    )
    b.finish(op, pending, "relu copies its input's parameters")


def lower_leaky_relu(b: Builder, op: ir.Op, fmt: str) -> None:
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    alpha = float(op.options.get("alpha", 0.2))
    slope = b.scalar_param(f"{b.base(op.outputs[0])}_slope", alpha, b.tensors[x])
    _slope_layer(b, op, fmt, "leaky_relu", x, slope, notes=[f"slope {alpha} as a rank-0 constant"])


def _slope_layer(b: Builder, op: ir.Op, fmt: str, kind: str, x: str, slope: str, **kw) -> None:
    """A leaky_relu / prelu layer: `x`, times `slope` below zero."""
    leaves = P.kernel_leaves(kind, b.tensors[x])
    out, _ = b.kernel_output(op, op.outputs[0], act_el(fmt), leaves, why=SAME_FRAC_BITS_NOTE)
    b.layer(op, kind, fmt, [x], [out], params={"slope": slope}, **kw)


def lower_prelu(b: Builder, op: ir.Op, fmt: str) -> None:
    el = act_el(fmt)
    x = b.use(op, op.input("input"), el)
    at = b.g.slot(op, "alpha")
    in_rank = len(b.g.slot(op, "input").shape)
    real = P.real(at).reshape((1,) * (in_rank - len(at.shape)) + tuple(at.shape))
    mshape = b.mli_shape(real.shape)
    real = real.reshape(real.shape[1:]) if in_rank >= 2 else real
    if b.layout == "chw" and real.ndim == 3:
        real = real.transpose(2, 0, 1)
    non1 = [i for i, d in enumerate(mshape) if d > 1]
    axis = non1[0] if non1 else -1
    m = MliTensor(
        name=b.base(at.index),
        role=Role.PARAM,
        shape=mshape if non1 else (),
        el_type=el,
        source=at.name,
        source_index=at.index,
    )

    def own_int8() -> np.ndarray:
        data = np.asarray(at.data, np.int8).reshape(real.shape)
        return data.transpose(2, 0, 1) if b.layout == "chw" and data.ndim == 3 else data

    data = b.encode_param(m, at, real, el, own_int8)
    m.data = np.ascontiguousarray(np.asarray(data).reshape(m.shape))
    slope = b.add(m)
    _slope_layer(b, op, fmt, "prelu", x, slope, cfg_type="mli_prelu_cfg", cfg={"axis": axis})


def lower_lut(b: Builder, op: ir.Op, fmt: str) -> None:
    """LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION: kernels that write fixed output parameters."""
    kind = opspec.spec(op.type).kind
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    kout, pending = b.kernel_output(op, op.outputs[0], el, P.kernel_leaves(kind, b.tensors[x]))
    params, cfg_type, cfg = {}, None, {}
    mrank = len(b.tensors[x].shape)
    if kind in ("softmax", "l2_normalize") and b.target.softmax_axis:
        cfg_type = f"mli_{kind}_cfg"
        cfg = {"axis": b.mli_axis(-1, len(b.g.tensors[op.inputs[0]].shape)) if mrank > 1 else 0}
    if kind == "l2_normalize":
        params["epsilon"] = _epsilon(b, op, b.tensors[x])
    b.layer(
        op,
        kind,
        fmt,
        [x],
        [kout],
        params=params,
        cfg_type=cfg_type,
        cfg=cfg,
        notes=[f"{kind} writes fixed output parameters into its output tensor"],
    )
    b.finish(op, pending, f"{kind} writes fixed output parameters")


def _epsilon(b: Builder, op: ir.Op, x: MliTensor) -> str:
    """l2_normalize epsilon: a rank-0 tensor with the input's parameters holding one LSB
    above the input's zero (the smallest positive value), keeping the root away from 0."""
    m = MliTensor(
        name=f"{b.base(op.outputs[0])}_epsilon",
        role=Role.PARAM,
        shape=(),
        el_type=x.el_type,
        frac_bits=x.frac_bits,
    )
    if x.el_type.is_sa:
        m.zero_point, m.scale = x.zero_point.copy(), x.scale.copy()
        m.scale_frac_bits, m.dim = x.scale_frac_bits.copy(), -1
        m.data = np.array(min(int(x.zero_point[0]) + 1, 127), np.int8).reshape(())
    else:
        m.data = np.array(1, x.el_type.dtype).reshape(())
    m.notes.append("epsilon: one LSB of the input")
    return b.add(m)


def lower_quantize(b: Builder, op: ir.Op, fmt: str) -> None:
    """QUANTIZE, DEQUANTIZE: a convert between the float and the quantized tensor."""
    el = act_el(fmt)
    i_t, o_t = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    in_el = ElType.FP32 if i_t.dtype == "float32" else el
    out_el = ElType.FP32 if o_t.dtype == "float32" else el
    if i_t.dtype == "float32" and o_t.dtype == "float32":
        in_el = out_el = el
    x = b.use(op, op.inputs[0], in_el)
    out = b.produce(op.outputs[0], out_el)
    b.layer(op, "convert", fmt, [x], [out.name])
