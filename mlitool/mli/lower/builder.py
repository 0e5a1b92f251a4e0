"""The state one lowering builds up, and the steps every op family uses to add to it.

`Builder` holds the MLI tensors and layers made so far and which MLI tensor stands for each TFLite
tensor (`primary`, plus format `variants`). Its steps: `produce` / `use` activation tensors
(inserting "convert" layers where the format changes), `kernel_output` / `finish` where a kernel
leaves other output parameters than the model expects, `relu_after` for fused activations a
kernel cannot apply, and the encoding of constant operands; views and copies (`view_layer`: a
layer without a call that shows a tensor in another shape, `mov`: an mli_mov copy, `derived`
tensors, `dense` / `dense_view`: a contiguous copy where a strided view cannot be used,
`shaped_output`, `consumer_needs_dense`); FX frac bits of all-zero tensors (`zero_frac_bits`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import kernels as K
from mlitool.mli import quant as Q
from mlitool.mli import views as V
from mlitool.mli.lower.facts import all_zero, layer_kind
from mlitool.mli.lower.params import real as real_values
from mlitool.mli.lower.params import same_params
from mlitool.mli.types import FORMATS, ElType, MliLayer, MliTensor, Role
from mlitool.ops import spec as opspec

if TYPE_CHECKING:
    from mlitool.settings import Settings

RELU_TYPES = {"RELU": K.RELU_GEN, "RELU6": K.RELU_6, "RELU_N1_TO_1": K.RELU_1}


def act_el(fmt: str) -> ElType:
    """The activation element type of format `fmt`."""
    return FORMATS[fmt][0]


class Builder:
    def __init__(
        self,
        graph: ir.Graph,
        settings: Settings,
        weights_only: bool,
        ranges: dict,
        source: str,
    ):
        self.target, self.layout = settings.target, settings.layout
        self.g, self.fmt = graph, settings.format
        self.weights_only, self.ranges, self.source = weights_only, ranges, source
        self.overrides = dict(settings.overrides)
        self.tensors: dict[str, MliTensor] = {}
        self.layers: list[MliLayer] = []
        self.primary: dict[int, str] = {}  # TFLite tensor -> its MLI tensor
        self.variants: dict[tuple[int, ElType], str] = {}  # ... converted to another type
        self.warnings: list[str] = []
        self._producers: dict[int, ir.Op] | None = None
        self._consumers: dict[int, list[ir.Op]] | None = None
        self._zeros: dict[int, bool] = {}  # all_zero's answers

    def layer_format(self, op: ir.Op) -> str:
        """The format of `op`'s layers: the overrides name the model's op (a pass's op's origin)."""
        op = op.origin or op
        out_name = self.g.tensors[op.outputs[0]].name if op.outputs else None
        for key in (op.index, out_name, f"op:{op.type}"):
            if key is not None and key in self.overrides:
                return self.overrides[key]
        return self.fmt

    # -- names and shapes -------------------------------------------------------------------
    def base(self, idx: int) -> str:
        t = self.g.tensors[idx]
        return t.name or f"tensor_{idx}"

    def mli_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """TFLite activation shape -> MLI shape: batch 1 dropped, CHW for rank 3 in 1.x chw. A
        leading dimension other than 1 is kept as it is: the rows of a FULLY_CONNECTED, or in
        HWC rows / time steps of an op whose arithmetic ignores them (`support.batch_one`)."""
        return self.mli_dims(shape, shape)

    def mli_dims(self, values, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Per-dimension `values` (offsets, sizes, steps) of a tensor of TFLite shape `shape`,
        in the dimensions of its MLI shape (`mli_shape`)."""
        if len(shape) >= 2 and shape[0] != 1:
            return tuple(values)
        s = tuple(values[1:]) if len(shape) >= 2 else tuple(values)
        if self.layout == "chw" and len(s) == 3:
            s = (s[2], s[0], s[1])
        return s

    def mli_axis(self, axis: int, tfl_rank: int, mli_rank: int | None = None) -> int:
        """The MLI axis of TFLite axis `axis`: the batch is dropped, unless the MLI tensor
        (of rank `mli_rank`) keeps a leading dimension other than 1 as rows."""
        axis %= max(tfl_rank, 1)
        if mli_rank == tfl_rank and self.layout == "hwc":
            return axis
        a = axis - 1 if tfl_rank >= 2 else axis
        if self.layout == "chw" and tfl_rank == 4:
            a = {0: 1, 1: 2, 2: 0}[a]
        return a

    def add(self, t: MliTensor) -> str:
        """Register `t` under a unique name (its own, numbered when taken); returns the name."""
        base, n = t.name or "t", 1
        name = base
        while name in self.tensors:
            n += 1
            name = f"{base}_{n}"
        t.name = name
        self.tensors[name] = t
        return name

    def layer(self, op: ir.Op, kind: str, fmt: str, inputs, outputs, **kw) -> MliLayer:
        kernel = self.target.kernel(kind, fmt, self.layout)
        if kernel is None:
            raise self.no_kernel(op, kind, fmt)
        layer = MliLayer(
            index=op.index,
            op_type=op.model_type,
            kind=kind,
            kernel=kernel,
            inputs=list(inputs),
            outputs=list(outputs),
            **kw,
        )
        self.layers.append(layer)
        return layer

    def fallback(self, op: ir.Op, kernel, inputs, outputs, **kw) -> MliLayer:
        """A layer running fallback C (`mlitool.mli.fallback.FallbackKernel`) instead of MLI."""
        if not self.target.offers("fallback"):
            raise self.no_kernel(op, "fallback", self.layer_format(op))
        layer = MliLayer(
            index=op.index,
            op_type=op.model_type,
            kind="fallback",
            kernel=kernel.kernel,
            inputs=list(inputs),
            outputs=list(outputs),
            cfg_type=kernel.cfg_type,
            **kw,
        )
        self.layers.append(layer)
        return layer

    def no_kernel(self, op: ir.Op, kind: str, fmt: str) -> UnsupportedError:
        return UnsupportedError(
            f"{op.label} ({kind}): " + self.target.no_kernel(kind, fmt, self.layout)
        )

    # -- activation tensors -----------------------------------------------------------------
    def value_range(self, idx: int) -> tuple[float, float] | None:
        t = self.g.tensors[idx]
        if t.quant is not None and t.dtype in ("int8", "int16") and not t.quant.per_axis:
            info = np.iinfo(np.dtype(t.dtype))  # 16x8 models: int16, zero point 0
            s, zp = float(t.quant.scale[0]), int(t.quant.zero_point[0])
            return s * (int(info.min) - zp), s * (int(info.max) - zp)
        if t.qdq is not None and not t.qdq.per_axis:  # a QDQ file's pair: its int8 range
            s, zp = float(t.qdq.scale[0]), int(t.qdq.zero_point[0])
            return s * (-128 - zp), s * (127 - zp)
        if idx in self.ranges:
            lo, hi = self.ranges[idx]
            return float(lo), float(hi)
        return None

    def sa_params(self, idx: int) -> tuple[float, int] | None:
        t = self.g.tensors[idx]
        if t.quant is not None and t.dtype == "int8":
            return float(t.quant.scale[0]), int(t.quant.zero_point[0])
        if t.qdq is not None and not t.qdq.per_axis:  # a QDQ file's pair: exactly its own
            return float(t.qdq.scale[0]), int(t.qdq.zero_point[0])
        if idx in self.ranges:
            return Q.sa8_params_from_range(*self.ranges[idx])
        return None

    def set_sa(self, t: MliTensor, scale: float, zp: int) -> None:
        try:
            t.scale, t.scale_frac_bits, wrapped = Q.encode_sa_scale(scale, self.target)
        except UnsupportedError as exc:
            raise UnsupportedError(f"tensor '{t.source or t.name}': {exc.message}") from None
        if wrapped:
            t.notes.append(
                f"scale {scale!r} rounds to 32768 in int16: encoded as 16384 with "
                "one frac bit less (the TFLM integration would wrap)"
            )
        t.zero_point = np.array([zp], dtype=np.int16)
        t.dim = -1

    def new_act(self, idx: int, el: ElType, name: str | None = None) -> MliTensor:
        src = self.g.tensors[idx]
        role = (
            Role.INPUT
            if idx in self.g.inputs
            else Role.OUTPUT
            if idx in self.g.outputs
            else Role.ACTIVATION
        )
        shape = self.mli_shape(src.shape)
        lay = ("CHW" if self.layout == "chw" else "HWC") if len(shape) == 3 else ""
        t = MliTensor(
            name=name or self.base(idx),
            role=role,
            shape=shape,
            el_type=el,
            layout=lay,
            source=src.name,
            source_index=idx,
        )
        if src.dtype == "bool" and el == ElType.SA8:  # one byte 0/1: no parameters to find
            self.set_sa(t, 1.0, 0)
            t.notes.append("bool tensor: one byte 0/1, an SA8 tensor of scale 1 and zero point 0")
        elif el.is_sa:
            p = self.sa_params(idx) if el == ElType.SA8 else (1.0, 0)
            if p is None:
                p = (1.0, 0)
                t.notes.append("weights-only output: activation parameters are placeholders")
            self.set_sa(t, *p)
        elif el.is_fx and not self.zero_frac_bits(t, el):
            r = self.value_range(idx)
            if r is None:
                t.frac_bits = 0
                t.notes.append("weights-only output: activation frac bits are placeholders")
            else:
                t.frac_bits = Q.fx_frac_bits(max(abs(r[0]), abs(r[1])), el.bits)
        return t

    def el_of(self, idx: int, fmt: str) -> ElType:
        """The element type TFLite tensor `idx` moves in (views, copies): SA32 for int32 data
        (the values, scale 1), SA8 for bool bytes, else the activations of format `fmt`."""
        dtype = self.g.tensors[idx].dtype
        return ElType.SA32 if dtype == "int32" else ElType.SA8 if dtype == "bool" else act_el(fmt)

    def produce(self, idx: int, el: ElType) -> MliTensor:
        """The primary MLI tensor of TFLite tensor `idx`, written by the current layer."""
        t = self.new_act(idx, el)
        self.add(t)
        self.primary[idx] = t.name
        return t

    def use(self, op: ir.Op, idx: int, el: ElType) -> str:
        """Name of TFLite tensor `idx` as element type `el`, converting when its producer wrote
        another type."""
        if idx not in self.primary:  # graph input: takes its first consumer's type
            return self.produce(idx, el).name
        p = self.tensors[self.primary[idx]]
        if p.el_type == el:
            return p.name
        key = (idx, el)
        if key not in self.variants:
            v = self.new_act(idx, el, f"{p.name}_{el.name.lower()}")
            v.role = Role.ACTIVATION
            self.add(v)
            self.variants[key] = v.name
            self.convert(
                op, p.name, v.name, f"format change {p.el_type.name} -> {el.name} before {op.label}"
            )
        return self.variants[key]

    def convert(self, op: ir.Op, src: str, dst: str, why: str) -> None:
        """Insert an mli_hlp_convert_tensor layer."""
        kernel = self.target.kernel("convert", "fx16", self.layout)
        self.layers.append(
            MliLayer(
                index=op.index,
                op_type=op.model_type,
                kind="convert",
                kernel=kernel or "mli_hlp_convert_tensor",
                inputs=[src],
                outputs=[dst],
                notes=[f"inserted: {why}"],
            )
        )

    # -- output parameters ------------------------------------------------------------------
    def kernel_output(
        self,
        op: ir.Op,
        idx: int,
        el: ElType,
        leaves=None,
        why: str = "parameters are those the kernel writes into its output",
    ) -> tuple[str, list]:
        """Create the output tensor of `op`; when the kernel leaves fixed parameters (`leaves`:
        a function setting them on a tensor) that differ from the model's, the kernel writes a
        temporary tensor and a convert follows; `why` notes parameters set on the output itself.
        Returns (kernel output name, pending converts)."""
        out = self.produce(idx, el)
        if leaves is None:
            return out.name, []
        krn = dataclasses.replace(out, notes=[], name=out.name)
        krn.zero_point = None if out.zero_point is None else out.zero_point.copy()
        leaves(krn)
        if el.is_fx or same_params(krn, out):
            leaves(out)
            out.notes.append(why)
            return out.name, []
        krn.name = f"{out.name}_krn"
        krn.role = Role.ACTIVATION
        krn.notes = ["parameters the kernel writes into its output"]
        self.add(krn)
        return krn.name, [(krn.name, out.name)]

    def finish(self, op: ir.Op, pending: list, why: str) -> None:
        for src, dst in pending:
            self.convert(op, src, dst, why)
            self.layers[-1].notes.append("requantizes to the parameters the model expects")

    # -- fused activations ------------------------------------------------------------------
    def relu_type(self, op: ir.Op, out: MliTensor) -> int:
        act = op.options.get("fused_activation", "NONE")
        if act == "NONE":
            return K.RELU_NONE
        if out.el_type == ElType.SA8:
            p = self.sa_params(out.source_index)
            if p is not None:
                scale, zp = p
                lo = {"RELU": 0.0, "RELU6": 0.0, "RELU_N1_TO_1": -1.0}[act]
                hi = {"RELU": None, "RELU6": 6.0, "RELU_N1_TO_1": 1.0}[act]
                qlo = max(-128, zp + int(np.round(lo / scale)))
                qhi = 127 if hi is None else min(127, zp + int(np.round(hi / scale)))
                if (qlo, qhi) == (-128, 127):
                    return K.RELU_NONE
        return RELU_TYPES[act]

    @contextmanager
    def relu_after(self, op: ir.Op, fmt: str, out_name: str) -> Iterator[str]:
        """For kernels without a relu config: yields the name the kernel should write, a copy
        of `out_name` when `op` has a fused activation that clamps, and once the block has
        added the kernel's layers, the relu layer from that copy into `out_name`."""
        out = self.tensors[out_name]
        rt = self.relu_type(op, out)
        if rt == K.RELU_NONE:
            yield out_name
            return
        pre = dataclasses.replace(
            out,
            name=f"{out.name}_pre_act",
            role=Role.ACTIVATION,
            notes=["before the fused activation"],
        )
        self.add(pre)
        yield pre.name
        self.layer(
            op,
            "relu",
            fmt,
            [pre.name],
            [out_name],
            cfg_type="mli_relu_cfg",
            cfg={"relu_type": rt},
            notes=["inserted: fused activation of the preceding kernel"],
        )

    # -- constants --------------------------------------------------------------------------
    def encode_param(
        self, m: MliTensor, t: ir.Tensor, real: np.ndarray, el: ElType, own_int8
    ) -> np.ndarray:
        """Encode a constant operand (eltwise constant, PReLU slope) into `m`'s element type. An
        int8 per-tensor model constant keeps its own values (`own_int8()`, already in m's layout)
        and parameters; anything else is quantized from its real values."""
        if el == ElType.SA8:
            if t.dtype == "int8" and t.quant is not None and not t.quant.per_axis:
                self.set_sa(m, float(t.quant.scale[0]), int(t.quant.zero_point[0]))
                return own_int8()
            scale, zp = Q.sa8_params_from_range(real.min(), real.max())
            data, _ = Q.int_quantize(real, scale, zp, 8)
            self.set_sa(m, scale, zp)
            return data
        if not self.zero_frac_bits(m, el):
            m.frac_bits = Q.fx_frac_bits(np.max(np.abs(real), initial=0.0), el.bits)
        data, saturated = Q.fx_quantize(real, m.frac_bits, el.bits)
        if saturated:
            m.notes.append(f"{saturated} values saturated")
        return data

    def sa_constant(self, name: str, el: ElType, data: np.ndarray, q=(1.0, 0), notes=(), src=None):
        """A parameter tensor of SA type `el` holding `data` in its shape, with (scale, zero
        point) `q`; `src`: the model's tensor it stands for."""
        m = MliTensor(
            name=name,
            role=Role.PARAM,
            shape=data.shape,
            el_type=el,
            data=data,
            source=None if src is None else src.name,
            source_index=None if src is None else src.index,
            notes=list(notes),
        )
        self.set_sa(m, *q)
        return self.add(m)

    def scalar_param(self, name: str, value: float, like: MliTensor, idx=None) -> str:
        """A rank-0 constant (slope, epsilon) in `like`'s element type."""
        el = like.el_type
        m = MliTensor(name=name, role=Role.PARAM, shape=(), el_type=el, source_index=idx)
        if el == ElType.SA8:
            scale = abs(value) / 127 if value != 0 else 1 / 128
            q, _ = Q.int_quantize(np.array(value), scale, 0, 8)
            self.set_sa(m, scale, 0)
        else:
            m.frac_bits = Q.fx_frac_bits(abs(value), el.bits)
            q, _ = Q.fx_quantize(np.array(value), m.frac_bits, el.bits)
        m.data = np.asarray(q).reshape(())
        return self.add(m)

    # --- views and copies ------------------------------------------------------------------

    def view_layer(self, op: ir.Op, src: str, dst: str, why: str) -> None:
        s, d = self.tensors[src], self.tensors[dst]
        d.buffer = s.buffer or s.name
        d.offset = s.offset
        self.no_call_layer(op, [src], [dst], [f"view: {why}; no call, shares {d.buffer}'s memory"])

    def no_call_layer(self, op: ir.Op, inputs: list[str], outputs: list[str], notes: list[str]):
        """A "view" layer: no kernel call, its outputs are views the caller has placed."""
        self.layers.append(
            MliLayer(
                index=op.index,
                op_type=op.model_type,
                kind="view",
                kernel="",
                inputs=inputs,
                outputs=outputs,
                notes=notes,
            )
        )

    def mov(self, op: ir.Op, fmt: str, src: str, dst: str, offset, size, step, why: str) -> None:
        kernel = self.target.kernel("copy", fmt, self.layout)
        if kernel is None:
            hint = ", --layout chw makes channel slices contiguous" if self.layout == "hwc" else ""
            raise UnsupportedError(
                f"{op.label}: {why}; MLI {self.target.version} has no copy kernel "
                f"(mli_mov_* is MLI 2.x{hint})"
            )
        self.layers.append(
            MliLayer(
                index=op.index,
                op_type=op.model_type,
                kind="copy",
                kernel=kernel,
                inputs=[src],
                outputs=[dst],
                cfg_type="mli_mov_cfg_t",
                cfg=V.mov_cfg(list(offset), list(size), list(step)),
                notes=[f"copy: {why}"],
            )
        )

    def derived(self, src: MliTensor, name: str, **changes) -> MliTensor:
        """A new activation tensor like `src` (same parameters), registered; `changes` as for
        dataclasses.replace (row-major strides unless given)."""
        fields = {"role": Role.ACTIVATION, "mem_stride": None, "notes": [], **changes}
        t = dataclasses.replace(src, name=name, **fields)
        t.__post_init__()
        self.add(t)
        return t

    def dense(self, op: ir.Op, fmt: str, src: MliTensor, why: str) -> MliTensor:
        """`src` itself when it is dense, else a contiguous copy of it (mli_mov)."""
        if V.is_dense(src):
            return src
        dense = self.derived(
            src,
            f"{src.name}_dense",
            buffer=None,
            offset=0,
            capacity=None,
            notes=["dense copy of a strided view"],
        )
        self.mov(op, fmt, src.name, dense.name, [0] * src.rank, src.shape, [1] * src.rank, why)
        return dense

    def dense_view(
        self, op: ir.Op, fmt: str, src_name: str, shape: tuple[int, ...], why: str
    ) -> str:
        """`src` seen in `shape` (same elements, row-major): a view layer, after a dense copy
        (mli_mov) when `src` is itself a strided view."""
        src = self.dense(
            op,
            fmt,
            self.tensors[src_name],
            f"{why}: a view of a strided tensor needs a contiguous one",
        )
        if tuple(shape) == src.shape:
            return src.name
        t = self.derived(
            src,
            f"{src.name}_as_{'x'.join(map(str, shape))}",
            shape=tuple(shape),
            layout="HWC" if len(shape) == 3 else "",
            notes=[why],
        )
        self.view_layer(op, src.name, t.name, why)
        return t.name

    def shaped_output(self, out: MliTensor, shape: tuple[int, ...], suffix: str) -> str:
        """A tensor `NAME_suffix` a kernel writes in `shape` that a view layer then shows as
        `out` (same elements, row-major)."""
        return self.derived(
            out,
            f"{out.name}_{suffix}",
            shape=shape,
            layout="HWC" if len(shape) == 3 else "",
            notes=[f"kernel output; '{out.name}' is a view of it"],
        ).name

    def consumer_needs_dense(self, idx: int, skip: ir.Op | None = None) -> str | None:
        """Why TFLite tensor `idx` must stay contiguous (a model output, or a consumer whose
        kernel needs it), or None."""
        if idx in self.g.outputs:
            return "model outputs are dense buffers the application reads"
        for c in self.g.consumers().get(idx, []):
            if c is skip or opspec.spec(c.type).reads_views:
                continue  # views of strided tensors / mov copies are fine
            kind = layer_kind(self.g, c)
            if V.needs_dense_input(kind, self.target):
                return f"its consumer {c.label} ({kind}) needs a contiguous input"
        return None

    # --- all-zero tensors in FX formats: any frac bits represent them exactly, but their scale
    # may ask for more than C holds (a 16x8 GRU's zero state of scale 3.6e-43: 141 frac bits)
    def zero_frac_bits(self, m: MliTensor, el: ElType) -> bool:
        """Set FX frac bits on `m` when its TFLite tensor holds only zeros (returns whether it
        does): any frac bits represent it, but its scale may ask for 141 (a GRU's zero state of
        scale 3.6e-43), which C cannot hold. Read by an element-wise kernel, it takes the frac
        bits of the other operand (else of the output), so the kernel shifts nothing more than
        for that operand alone; otherwise those of a zero range."""
        idx = m.source_index
        if idx is None or not self._all_zero(idx):
            return False
        m.frac_bits, why = el.bits - 1, "those of a zero range"
        for op in self._consumers.get(idx, [])[:1]:  # set by _all_zero
            if not layer_kind(self.g, op).startswith("eltwise_"):
                continue
            others = [i for i in op.inputs[:2] if i != idx] + list(op.outputs[:1])
            for j in others:
                f = self._plain_frac_bits(j, el)
                if f is not None and not self._all_zero(j):
                    role = "output" if j in op.outputs else "other operand"
                    m.frac_bits, why = f, f"those of the {role} of {op.label}"
                    break
        m.notes.append(f"all values are zero: any frac bits are exact; {m.frac_bits}, {why}")
        return True

    def _all_zero(self, idx: int) -> bool:
        if self._producers is None:
            self._producers, self._consumers = self.g.producers(), self.g.consumers()
        return all_zero(self.g, idx, self.ranges, self._producers, self._zeros)

    def _plain_frac_bits(self, idx: int, el: ElType) -> int | None:
        """The frac bits TFLite tensor `idx` takes from its values or range (None: unknown)."""
        t = self.g.tensors[idx]
        if t.data is not None:
            return Q.fx_frac_bits(np.max(np.abs(real_values(t)), initial=0.0), el.bits)
        r = self.value_range(idx)
        return None if r is None else Q.fx_frac_bits(max(abs(r[0]), abs(r[1])), el.bits)
