"""The lowering steps that add views and copies: `view_layer` (a layer without a call that shows
a tensor in another shape), `mov` (an mli_mov copy), `derived` tensors, `dense` / `dense_view`
(a contiguous copy where a strided view cannot be used), `shaped_output` and
`consumer_needs_dense`. `ViewSteps` is a base of `Builder` (builder.py), whose state they use.
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import views as V
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.target import Target
from mlitool.mli.types import MliLayer, MliTensor, Role
from mlitool.ops import spec as opspec


class ViewSteps:
    """Views and copies; needs the `Builder` attributes below and its `add`."""

    g: ir.Graph
    layout: str
    target: Target
    tensors: dict[str, MliTensor]
    layers: list[MliLayer]

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
