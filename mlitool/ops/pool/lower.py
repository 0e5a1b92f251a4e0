"""AVERAGE_POOL_2D and MAX_POOL_2D lowered onto MLI's pooling kernels (a pool over the whole
input of one row is a view of a reduced tensor)."""

from __future__ import annotations

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.geometry import mli_window, safe_pool_axis, tflite_padding
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.types import ElType
from mlitool.passes.pad_fusion import EXPLICIT_PADDING, FUSED_PAD


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
