"""The fast-memory runtime's calls on slices of output channels (`mlitool.mli.tiling`): a
convolution or fully connected layer whose weights do not fit calls its kernel once per slice,
on that slice's weights and bias staged into the fast buffer and a strided view of the output's
channels (MLI 2.x conv2d and fully_connected accept an output whose innermost stride is 1; a
fully connected output slice is contiguous anyway).
"""

from __future__ import annotations

from mlitool.emit.dialect import ptr_member
from mlitool.emit.runtime import Runtime
from mlitool.mli.types import MliLayer, row_major_strides


class ChannelSlices:
    """Mixed into `FastRuntime` (its fs, fplan, model, chan_refs, _ref and _call)."""

    def _stage_channels_fn(self) -> list[str]:
        fs = self.fs
        return [
            "",
            "/* Channels first .. first + count - 1 of a dense weight or bias tensor (its last",
            " * dimension) staged like a constant: mli_mov copies a strided view of them, whose",
            " * per-axis parameters start at `first` (they stay where they are, as MLI allows). */",
            f"static mli_status {fs.stage_channels}(const mli_tensor *src, unsigned slot, "
            "uint32_t offset, uint32_t bytes, uint32_t first, uint32_t count) {",
            "    mli_tensor view = *src;",
            "    uint32_t size = mli_hlp_tensor_element_size(src), last = src->rank - 1u, i;",
            "    int32_t stride = 1;",
            "    for (i = src->rank; i-- > 0u;) {",
            "        view.mem_stride[i] = stride;",
            "        stride *= (int32_t)src->shape[i];",
            "    }",
            "    view.shape[last] = count;",
            "    view.data.mem.pi8 = src->data.mem.pi8 + first * size;",
            "    view.data.capacity = src->data.capacity - first * size;",
            "    if ((src->el_type == MLI_EL_SA_8 || src->el_type == MLI_EL_SA_32) &&",
            "        src->el_params.sa.dim >= 0) {",
            "        view.el_params.sa.scale.mem.pi16 += first;",
            "        view.el_params.sa.zero_point.mem.pi16 += first;",
            "        view.el_params.sa.scale_frac_bits.mem.pi8 += first;",
            "        view.el_params.sa.scale.capacity = count * sizeof(int16_t);",
            "        view.el_params.sa.zero_point.capacity = count * sizeof(int16_t);",
            "        view.el_params.sa.scale_frac_bits.capacity = count;",
            "    }",
            f"    return {fs.stage_fn}(&view, slot, offset, bytes);",
            "}",
        ]

    def _channel_call(self, indent: str, fn: str, pos: int, layer: MliLayer) -> list[str]:
        """The kernel once per slice of output channels (`mlitool.mli.tiling`): the slice's
        weights and bias staged, the output a strided view of its channels."""
        st, fs = self.fplan.layers[pos], self.fs
        y = self.model.tensors[layer.outputs[0]]
        n, inner, last = len(st.chans), indent + "        ", y.rank - 1
        table = ", ".join(f"{{ {a}u, {c}u }}" for a, c in st.chans)
        lines = [
            f"{indent}{{",
            f"{indent}    /* {n} slices: first output channel, channels */",
            f"{indent}    static const uint16_t chans[{n}][2] = {{ {table} }};",
            f"{indent}    mli_tensor out_slice = *{self._ref(layer.outputs[0])};",
            f"{indent}    unsigned c;",
            f"{indent}    for (c = 0u; c < {n}u; c++) {{",
        ]
        refs = {}
        for slot, s in enumerate(st.chan_slots, start=len(st.constants)):
            lines += [
                f"{inner}status = {fs.stage_channels}({Runtime._ref(self, s.name)}, {slot}u, "
                f"{s.offset}u, {s.bytes}u, chans[c][0], chans[c][1]);",
                f"{inner}if (status != MLI_STATUS_OK) {{",
                f"{inner}    return status;",
                f"{inner}}}",
            ]
            refs[s.name] = f"&{fs.stage}[{slot}]"
        c_type, size = y.el_type.c_type, y.el_type.dtype.itemsize
        member, base = ptr_member(c_type), f"({self._ref(layer.outputs[0])})"
        lines += [
            f"{inner}out_slice.shape[{last}] = chans[c][1];",
            f"{inner}out_slice.data.mem.{member} = {base}->data.mem.{member} + chans[c][0];",
            f"{inner}out_slice.data.capacity = {base}->data.capacity - chans[c][0] * {size}u;",
        ]
        lines += [
            f"{inner}out_slice.mem_stride[{d}] = {s};"
            for d, s in enumerate(row_major_strides(y.shape))
        ]
        refs[layer.outputs[0]] = "&out_slice"
        self.chan_refs = refs
        lines += self._call(inner, fn, pos, layer)
        self.chan_refs = {}
        return lines + [f"{indent}    }}", f"{indent}}}"]
