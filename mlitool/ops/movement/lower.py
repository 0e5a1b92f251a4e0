"""Data movement: slices and splits, padding, transpose, reshape and argmax (concatenation is in
concat.py).

Slices become views of their input's buffer where MLI can address them (create_subtensor), else
copies (mli_mov_tensor_sync); every view and copy says why in its notes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.errors import SubtensorError, UnsupportedError
from mlitool.mli import quant as Q
from mlitool.mli import views as V
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.facts import (
    argmax_rows,
    axis_list,
    const_values,
    slice_boxes,
    transpose_into_rows,
    transpose_moves_units_only,
)
from mlitool.mli.ops import output_params
from mlitool.mli.subtensor import create_subtensor
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.movement import c_kernel as PK


def lower_arg_max(b: Builder, op: ir.Op, fmt: str, src: str | None = None) -> None:
    """mli_krn_argmax reports the memory offset of each maximum from the tensor start.
    One row (the axis is the only non-unit dimension): a dense input makes that the index.
    Several rows: the input is viewed as (rows, size), argmax along axis 0 (top 1) writes
    each row's offset i * size + index; a view of that buffer with per-row zero points
    i * size (SA32, scale 1) and mli_hlp_convert_tensor into a per-tensor SA32 tensor
    subtract the row starts exactly. `src`: the MLI tensor to take the maxima of, when not
    the op's input (ARG_MIN's complement)."""
    el = act_el(fmt)
    rows, size = argmax_rows(b.g, op)
    x = src or b.use(op, op.inputs[0], el)
    x = b.dense_view(
        op,
        fmt,
        x,
        (rows, size) if rows > 1 else b.tensors[x].shape,
        "argmax offsets are indices only in a contiguous tensor",
    )
    out_idx = op.outputs[0]
    src = b.g.tensors[out_idx]
    shape = (1, 1) if rows == 1 else b.mli_shape(src.shape)
    out = _sa32_index_tensor(b, b.base(out_idx), shape, out_idx)
    out.role = Role.OUTPUT if out_idx in b.g.outputs else Role.ACTIVATION
    if src.dtype != "int32":
        out.notes.append(f"MLI writes int32 indices; the model's output is {src.dtype}")
    b.primary[out_idx] = b.add(out)
    ties = "of equal maxima MLI returns the last index, TFLite the first"
    if rows == 1:
        b.layer(
            op,
            "argmax",
            fmt,
            [x],
            [out.name],
            cfg_type="mli_argmax_cfg",
            cfg={"axis": -1, "topk": 1},
            notes=[ties],
        )
        return
    offs = _sa32_index_tensor(b, f"{out.name}_offsets", (rows, 1), out_idx)
    offs.notes.append("argmax output: offsets from the input's start (row * size + index)")
    b.add(offs)
    b.layer(
        op,
        "argmax",
        fmt,
        [x],
        [offs.name],
        cfg_type="mli_argmax_cfg",
        cfg={"axis": 0, "topk": 1},
        notes=[f"argmax over {rows} rows of {size}: one top-1 per row along axis 0", ties],
    )
    rel = _sa32_index_tensor(b, f"{out.name}_rows", (rows,), out_idx)
    rel.zero_point = (np.arange(rows, dtype=np.int64) * size).astype(np.int16)
    rel.scale, rel.scale_frac_bits = np.ones(rows, np.int16), np.zeros(rows, np.int8)
    rel.dim = 0
    rel.notes.append("the offsets with zero point = each row's start: real value = index")
    b.add(rel)
    b.view_layer(
        op,
        offs.name,
        rel.name,
        "the same offsets with per-row zero points "
        "(the argmax kernel resets its output's parameters)",
    )
    dst = out.name
    if out.shape != (rows,):
        dst = b.add(
            dataclasses.replace(
                out,
                name=f"{out.name}_flat",
                shape=(rows,),
                role=Role.ACTIVATION,
                mem_stride=(1,),
                notes=[],
            )
        )
    b.convert(
        op, rel.name, dst, "offsets minus row starts = indices (exact: SA32 to SA32, scale 1)"
    )
    if dst != out.name:
        b.view_layer(op, dst, out.name, f"indices in the model's shape {list(src.shape)}")


def _sa32_index_tensor(b: Builder, name: str, shape: tuple[int, ...], idx: int) -> MliTensor:
    """An SA32 tensor of integer indices with the parameters argmax writes into its output
    (per-tensor zero point 0, scale 1)."""
    t = MliTensor(
        name=name,
        role=Role.ACTIVATION,
        shape=shape,
        el_type=ElType.SA32,
        source=b.g.tensors[idx].name,
        source_index=idx,
    )
    return output_params("argmax", t, t)


def lower_transpose(b: Builder, op: ir.Op, fmt: str) -> None:
    """TRANSPOSE: mli_krn_permute (the batch axis stays first); a view where it moves only axes
    of length 1."""
    if transpose_moves_units_only(b.g, op):
        lower_reshape(b, op, fmt)
        return
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    perm = axis_list(b.g, op)
    p = [a - 1 for a in perm[1:]] if len(perm) >= 2 else perm
    full_out = None
    if b.layout == "hwc" and transpose_into_rows(b.g, op):
        # rows lead the input or the output: permute the tensors seen in their full shapes
        shape = tuple(b.g.tensors[op.inputs[0]].shape)
        x = b.dense_view(op, fmt, x, shape, "TRANSPOSE of rows reads the batch axis too")
        p = list(perm)
        full_out = tuple(b.g.tensors[op.outputs[0]].shape)
    if b.layout == "chw" and len(p) == 3:
        c, cinv = (2, 0, 1), (1, 2, 0)
        p = [cinv[p[c[i]]] for i in range(3)]
    cfg = {f"perm_dim{i}": (p[i] if i < len(p) else 0) for i in range(4)}
    leaves = P.kernel_leaves("permute", b.tensors[x], cfg)
    kout, pending = b.kernel_output(op, op.outputs[0], el, leaves)
    if full_out is not None and full_out != b.tensors[kout].shape:  # batch 1 out of rows
        tmp = b.shaped_output(b.tensors[kout], full_out, "perm")
        b.layer(op, "permute", fmt, [x], [tmp], cfg_type="mli_permute_cfg", cfg=cfg)
        b.view_layer(op, tmp, kout, f"TRANSPOSE output {list(b.tensors[kout].shape)}")
    else:
        b.layer(op, "permute", fmt, [x], [kout], cfg_type="mli_permute_cfg", cfg=cfg)
    b.finish(op, pending, "permute copies its input's parameters")


def lower_reshape(b: Builder, op: ir.Op, fmt: str) -> None:
    """RESHAPE, SQUEEZE, EXPAND_DIMS: a view of the (dense) input in the model's shape."""
    idx = op.inputs[0]
    if idx not in b.primary:  # a graph input: int32 ones are SA32 (scale 1)
        b.use(op, idx, b.el_of(idx, fmt))
    src = b.tensors[b.primary[idx]]
    if (
        b.layout == "chw"
        and len(src.shape) == 3
        and src.shape[0] > 1
        and src.shape[1] * src.shape[2] > 1
    ):
        src = _chw_to_hwc(b, op, src, fmt)
    src = b.dense(op, fmt, src, f"{op.type} of a strided view needs a contiguous tensor")
    out_shape = b.mli_shape(b.g.tensors[op.outputs[0]].shape)
    if (
        b.layout == "chw"
        and len(out_shape) == 3
        and out_shape[0] > 1
        and out_shape[1] * out_shape[2] > 1
        and out_shape != src.shape
    ):
        raise UnsupportedError(
            f"{op.label}: a reshape into a multi-channel map has no CHW view; use --layout hwc"
        )
    out = b.produce(op.outputs[0], src.el_type)
    P.copy_params(src)(out)
    b.view_layer(op, src.name, out.name, f"{op.type} to {list(out.shape)}")


def _chw_to_hwc(b: Builder, op: ir.Op, src: MliTensor, fmt: str) -> MliTensor:
    c, h, w = src.shape
    t = b.derived(src, f"{src.name}_hwc", shape=(h, w, c), layout="HWC")
    b.layer(
        op,
        "permute",
        fmt,
        [src.name],
        [t.name],
        cfg_type="mli_permute_cfg",
        cfg={"perm_dim0": 1, "perm_dim1": 2, "perm_dim2": 0, "perm_dim3": 0},
        notes=["inserted: CHW -> HWC so the flattening order matches TFLite's"],
    )
    return t


def _slice_view(
    b: Builder, x: MliTensor, box: V.Box, in_shape: tuple[int, ...], out_idx: int
) -> tuple[MliTensor | None, str]:
    """A create_subtensor view of `x` for `box`, or (None, why not)."""
    if not box.unit_steps:
        return None, f"steps {list(box.step)}: a view cannot skip elements"
    want = b.mli_shape(b.g.tensors[out_idx].shape)
    off, size = b.mli_dims(box.begin, in_shape), b.mli_dims(box.size, in_shape)
    try:
        v = create_subtensor(x, off, size, len(want), name=b.base(out_idx))
    except SubtensorError as exc:
        return None, exc.message
    if v.shape != want:
        return None, (
            f"create_subtensor gives shape {list(v.shape)} (it drops leading "
            f"size-1 axes), the model wants {list(want)}"
        )
    if not V.is_dense(v):
        if not b.target.strided_views:
            return None, f"a strided view, and MLI {b.target.version} kernels ignore mem_stride"
        why = b.consumer_needs_dense(out_idx)
        if why:
            return None, f"a strided view, and {why}"
    return v, ""


def lower_slice(b: Builder, op: ir.Op, fmt: str) -> None:
    """SPLIT / SPLIT_V / SLICE / STRIDED_SLICE: each output a view of the input where MLI can
    address it, else a copy (mli_mov_tensor_sync)."""
    x_idx, boxes = slice_boxes(b.g, op)
    el = b.el_of(x_idx, fmt)
    x = b.tensors[b.use(op, x_idx, el)]
    in_shape = b.g.tensors[x_idx].shape
    views, notes, copies = [], [], []
    for out_idx, box in zip(op.outputs, boxes):
        v, why = _slice_view(b, x, box, in_shape, out_idx)
        if v is None:
            copies.append((out_idx, box, why))
            continue
        src = b.g.tensors[out_idx]
        v.role = Role.OUTPUT if out_idx in b.g.outputs else Role.ACTIVATION
        v.source, v.source_index = src.name, out_idx
        if not P.same_params(v, b.new_act(out_idx, el)):
            v.notes.append(
                "carries its input's parameters (the data is not requantized); "
                "the model gives this tensor other ones"
            )
        b.primary[out_idx] = b.add(v)
        views.append(v.name)
        kind = "contiguous" if V.is_dense(v) else f"strided {list(v.mem_stride)}"
        notes.append(f"{v.name}: {kind} view of {v.buffer} at element {v.offset}")
    if views:
        b.no_call_layer(op, [x.name], views, ["view: no call; " + "; ".join(notes)])
    for out_idx, box, why in copies:
        off, size, step = (b.mli_dims(v, in_shape) for v in (box.begin, box.size, box.step))
        out = b.produce(out_idx, el)
        P.copy_params(x)(out)
        if out.shape == tuple(size):
            b.mov(op, fmt, x.name, out.name, off, size, step, why)
            continue
        # Shrunk axes: mov keeps the rank, a dense reshape view gives the model's shape.
        tmp = b.derived(out, f"{out.name}_box", shape=tuple(size))
        b.mov(op, fmt, x.name, tmp.name, off, size, step, why)
        b.view_layer(op, tmp.name, out.name, f"{op.type} drops size-1 axes")


def _pad_value(b: Builder, op: ir.Op):
    """PADV2's pad value: an int (the raw value in the data's quantization) or a float (a float
    model's real value); None for PAD (real zero)."""
    if op.type == "PADV2":
        v = np.asarray(const_values(b.g, op.input("constant_values"))).reshape(-1)[0]
        return int(v) if v.dtype.kind in "iu" else float(v)
    return None


def _sa_fill(xt: MliTensor, value) -> int:
    """The raw SA fill: an int8 model's raw value, or a float value quantized with the input's
    parameters (the padding copies them), saturated."""
    if value is None:
        return int(xt.zero_point[0])
    if isinstance(value, int):
        return value
    scale = float(xt.scale[0]) / 2.0 ** int(xt.scale_frac_bits[0])
    raw, _ = Q.int_quantize(np.array([value]), scale, int(xt.zero_point[0]), 8)
    return int(np.asarray(raw).reshape(-1)[0])


def _fx_fill(b: Builder, op: ir.Op, value, frac_bits: int, bits: int) -> int:
    """The raw FX fill of `value` (an int: raw in the model's quantization) on `frac_bits`."""
    if value is None:
        return 0
    real = float(value)
    if isinstance(value, int):
        q = b.g.slot(op, "input").quant
        real = (value - int(q.zero_point[0])) * float(q.scale[0])
    raw, _ = Q.fx_quantize(np.array([real]), frac_bits, bits)
    return int(np.asarray(raw).reshape(-1)[0])


def lower_pad(b: Builder, op: ir.Op, fmt: str) -> None:
    """PAD, PADV2: a padding copy (SA8 fills other than raw 0 go through SA32, FX fills other
    than 0 through the `pad8` / `pad16` fallback C). One that a convolution can take as its
    padding is gone already (passes.pad_fusion)."""
    el = b.el_of(op.input("input"), fmt)
    x = b.use(op, op.input("input"), el)
    xt = b.tensors[x]
    value = _pad_value(b, op)
    pads = np.asarray(const_values(b.g, op.input("paddings")), dtype=np.int64)
    if el == ElType.SA32 and value:  # an int32 tensor: its values; MLI's copy pads 0
        return _pad_fill(b, op, x, int(value), pads)
    if len(pads) == 3:  # [1, T, C]: the MLI tensor [T, C], padded per dimension by mli_mov
        pre, post = [int(v) for v in pads[1:, 0]], [int(v) for v in pads[1:, 1]]
        cfg = {"padding_pre": [*pre, 0, 0], "padding_post": [*post, 0, 0]}
    else:
        cfg = _pad_cfg(pads)
    cfg_type = "mli_mov_cfg_t" if b.target.padding_via_mov else "mli_padding2d_cfg"
    if el.is_sa:
        fill = _sa_fill(xt, value)  # raw SA8 pad value
        if fill != 0:
            return _pad_wide(b, op, fmt, x, fill, cfg_type, cfg)
    else:
        fill = _fx_fill(b, op, value, xt.frac_bits, el.bits)
        if fill != 0:
            return _pad_fill(b, op, x, fill, pads)
    kout, pending = b.kernel_output(op, op.outputs[0], el, P.copy_params(xt))
    b.layer(op, "padding", fmt, [x], [kout], cfg_type=cfg_type, cfg=cfg)
    b.finish(op, pending, "padding copies its input's parameters")


def _pad_fill(b: Builder, op: ir.Op, x: str, fill: int, pads: np.ndarray) -> None:
    """FX (or int32) padding with `fill` != 0: the `pad8` / `pad16` / `pad32` fallback C (MLI
    pads zeros)."""
    if not b.target.offers("fallback"):
        raise UnsupportedError(
            f"{op.label}: FX padding with a value other than 0 needs mlitool's fallback C, "
            "which needs MLI 2.x tensors (convert with --mli 2.0)"
        )
    xt = b.tensors[x]
    out = b.produce(op.outputs[0], xt.el_type)
    P.copy_params(xt)(out)
    pre = list(b.mli_dims([int(v) for v in pads[:, 0]], b.g.slot(op, "input").shape))
    cfg = {f"pre{d}": (pre[d] if d < len(pre) else 0) for d in range(4)}
    kernel = {8: PK.PAD8, 16: PK.PAD16, 32: PK.PAD32}[xt.el_type.bits]
    b.fallback(
        op,
        kernel,
        [x],
        [out.name],
        cfg={**cfg, "fill": fill},
        notes=[
            f"MLI's padding fills zeros: fallback C fills the raw value {fill}"
            + ("" if xt.el_type == ElType.SA32 else f" (frac bits {xt.frac_bits})")
        ],
    )


def _pad_cfg(pads: np.ndarray) -> dict:
    """The padding cfg of a 4-D PAD: H, W (and channels: MLI 2.x mli_mov pads every dimension)."""
    cfg = {
        "padding_left": int(pads[2, 0]),
        "padding_right": int(pads[2, 1]),
        "padding_top": int(pads[1, 0]),
        "padding_bottom": int(pads[1, 1]),
    }
    if pads[3].any():
        cfg.update(padding_channels_before=int(pads[3, 0]), padding_channels_after=int(pads[3, 1]))
    return cfg


def _pad_wide(b: Builder, op: ir.Op, fmt: str, x: str, fill: int, cfg_type: str, cfg: dict) -> None:
    """SA8 padding with `fill` != raw 0: MLI's copy pads raw zeros. Through SA32 with the
    same scale and zero point zp - fill, raw 0 stands for `fill`; both converts only add
    integers (scale ratio 1), so the result is exact."""
    if not b.target.padding_via_mov:
        raise UnsupportedError(
            f"{op.label}: SA8 padding with raw value {fill} (not 0) needs MLI 2.x (SA32 copies)"
        )
    xt = b.tensors[x]
    zp32 = int(xt.zero_point[0]) - fill

    def wide(name: str, shape, why: str) -> MliTensor:
        return b.derived(
            xt,
            name,
            shape=tuple(shape),
            el_type=ElType.SA32,
            layout="HWC",
            buffer=None,
            offset=0,
            capacity=None,
            zero_point=np.array([zp32], np.int16),
            notes=[why],
        )

    out_shape = b.mli_shape(b.g.tensors[op.outputs[0]].shape)
    src = wide(
        f"{xt.name}_sa32",
        xt.shape,
        f"SA32 copy of '{xt.name}' in which raw 0 is the pad value {fill}",
    )
    dst = wide(f"{b.base(op.outputs[0])}_sa32", out_shape, "padded in SA32")
    out = b.produce(op.outputs[0], ElType.SA8)
    extra = (src.size + dst.size) * 4
    note = (
        f"zero point {int(xt.zero_point[0])}: MLI pads raw zeros, so the copy pads an "
        f"SA32 version (zero point {zp32}, raw 0 = {fill}) between two exact converts; "
        f"{extra} bytes of extra activation RAM"
    )
    b.convert(op, x, src.name, "SA8 -> SA32, same scale (exact)")
    b.layer(op, "padding", fmt, [src.name], [dst.name], cfg_type=cfg_type, cfg=cfg, notes=[note])
    b.convert(op, dst.name, out.name, "SA32 -> SA8 (exact)")
