"""The runtime of a `convert --fast-memory SIZE` conversion: every kernel operand in fast memory.

    NAME_init(fast, fast_bytes, slow, slow_bytes)
        resident activations in `fast`, the others in `slow` (`mlitool.mli.memory.placement`'s plan),
        the look-up tables in `fast` too
    NAME_run()
        per layer: the constants it reads copied into the staging area of `fast` with
        mli_mov_tensor_sync (the kernel gets the copies), the slow activations it touches
        copied in (and their tensors pointed there), the kernel, the written ones copied back;
        a layer tiled by output rows calls its kernel once per tile, on copies of its input and
        output tensors that view the tile's rows (staged, or in place where resident) and a
        copy of its config with the tile's padding; a layer sliced by output channels calls it
        once per slice (inside each row tile), on the slice's weights and bias staged from a
        strided view (per-axis parameters offset, left in place) and a strided output view

Between layers every activation tensor points at its home (fast or slow), so NAME_input(i),
NAME_output(i) and the layer hook see the arena a buffer lives in. Compiled with
-DNAME_CHECK_OPERANDS, NAME_run checks before every call that each operand lies inside the fast
buffer and returns MLI_STATUS_BAD_TENSOR if one does not.
"""

from __future__ import annotations

import dataclasses

from mlitool.emit.dialect import ptr_member
from mlitool.emit.names import comment_text
from mlitool.emit.runtime import Runtime, create_lut
from mlitool.emit.symbols import FastSymbols
from mlitool.mli.kernels import LUT_LENGTHS, luts_of
from mlitool.mli.memory.arena import root_of
from mlitool.mli.memory.placement import FastPlan, plan_fast_memory, plan_figures
from mlitool.mli.memory.staging import Staged
from mlitool.mli.memory.tiling import row_bytes
from mlitool.mli.types import MliLayer, row_major_strides


class FastRuntime(Runtime):
    def __init__(self, *args, fast_memory: int, **kw):
        super().__init__(*args, **kw)
        self.fs: FastSymbols = self.syms.fast
        self.fplan: FastPlan = plan_fast_memory(self.model, fast_memory, list(self.rt.luts))
        self.staged: dict[str, str] = {}  # constant key -> its staged copy, within a layer
        self.tile_refs: dict[str, str] = {}  # in a tile: the input / output -> its tile copy
        self.tile_cfg: str | None = None  # in a tile: the config copy
        self.chan_refs: dict[str, str] = {}  # in a channel slice: weights, bias, output
        self.operand_checks = False  # whether a call checks its operands (helpers needed)
        self.stage_slots = max(
            (len(s.constants) + len(s.chan_slots) for s in self.fplan.layers), default=0
        )

    # ------------------------------------------------------------------------------ header
    _INIT_PARAMS = "void *fast, size_t fast_bytes, void *slow, size_t slow_bytes"
    _SCRATCH_PLACE = ", outside the plan"

    def _usage_doc(self) -> list[str]:
        rt, fs, p = self.rt, self.fs, self.fplan
        slow = len(p.slow.placements)
        return [
            "/* ---- Runtime (fast memory) ----",
            f" * Every kernel operand lies in the fast buffer (VCCM, DCCM) at the call: "
            f"{len(p.resident.placements)} activation",
            f" * buffers stay there, {slow} live in the slow arena and are copied in and out "
            "around the layers",
            " * that use them; weights, biases and other constants are copied from where they "
            "are (const,",
            " * a linker section) into a staging area before each layer (mli_mov_tensor_sync); "
            "the look-up",
            f" * tables live there too. Plan: {comment_text(self.base_name)}.json "
            "(runtime.fast_memory). Usage:",
            f" *   {rt.init}(fast, {fs.fast_bytes}, slow, {fs.slow_bytes});    once; then "
            "per inference:",
            f" *   write {rt.input}(i)->data, {rt.run}(), read {rt.output}(i)->data.",
            f" * Both buffers' addresses are multiples of {rt.arena_align}; slow may be NULL "
            f"when {fs.slow_bytes} is 0.",
            f" * The arenas are reused as layers run: write the inputs again before every "
            f"{rt.run}().",
            *self._hook_doc(),
            f" * Define {fs.check_operands} to have {rt.run} check before every call that each "
            "operand",
            " * lies inside the fast buffer (MLI_STATUS_BAD_TENSOR if not).",
        ]

    def _memory_defines(self) -> list[str]:
        fs, p = self.fs, self.fplan
        return [
            f"#define {fs.fast_bytes} {p.fast_bytes}u",
            f"#define {fs.slow_bytes} {p.slow_bytes}u",
            f"#define {self.rt.arena_align} {p.align}u",
        ]

    def _init_doc(self) -> list[str]:
        rt, fs = self.rt, self.fs
        return [
            f"/* Binds every tensor to the two buffers. MLI_STATUS_NOT_ENGH_MEM if fast_bytes < "
            f"{fs.fast_bytes}",
            f" * or slow_bytes < {fs.slow_bytes}, {self.d.misaligned_status} if a buffer that "
            f"is needed is NULL or",
            f" * not a multiple of {rt.arena_align}. */",
        ]

    # ------------------------------------------------------------------------------ source
    def source_text(self) -> str:
        rt, fs = self.rt, self.fs
        parts = [
            "",
            "/* ---- runtime (fast memory) ---- */",
            "#include <string.h>",
            *self._hook_defines(),
            "",
            f"static int {rt.ready};",
            f"static unsigned char *{fs.fast};",
            f"static unsigned char *{fs.slow};",
        ]
        parts += [f"static mli_lut {lut};" for lut, _ in rt.luts.values()]
        if self.stage_slots:
            parts += [
                f"static mli_tensor {fs.stage}[{self.stage_slots}];",
                "",
                "/* A constant copied into the fast buffer at offset; the kernel gets the copy. */",
                f"static mli_status {fs.stage_fn}(const mli_tensor *src, unsigned slot, "
                "uint32_t offset, uint32_t bytes) {",
                "    mli_mov_cfg_t cfg;",
                f"    mli_tensor *dst = &{fs.stage}[slot];",
                "    memset(dst, 0, sizeof *dst);  /* mov keeps a stride or el_params it is given */",
                f"    dst->data.mem.pi8 = (int8_t *)({fs.fast} + offset);",
                "    dst->data.capacity = bytes;",
                "    (void)mli_mov_cfg_for_copy(&cfg);",
                "    return mli_mov_tensor_sync(src, &cfg, dst);",
                "}",
            ]
        if any(s.chans for s in self.fplan.layers):
            parts += self._stage_channels_fn()
        self.operand_checks = False
        functions = self._functions()  # sets operand_checks when a call checks its operands
        if self.operand_checks:  # unused helpers would fail -Werror (a model of views only)
            parts += self._check_helpers()
        parts += ["", *functions]
        return "\n".join(parts)

    def _check_helpers(self) -> list[str]:
        fs = self.fs
        return [
            "",
            f"#ifdef {fs.check_operands}",
            f"static int {fs.in_fast_bytes}(const void *p, uint32_t bytes) {{",
            f"    uintptr_t at = (uintptr_t)p, lo = (uintptr_t){fs.fast};",
            f"    return at >= lo && at - lo <= {fs.fast_bytes} && bytes <= "
            f"{fs.fast_bytes} - (at - lo);",
            "}",
            "",
            "/* A rank-0 tensor holds its value in the struct. */",
            f"static int {fs.in_fast}(const mli_tensor *t) {{",
            f"    return t->rank == 0u || {fs.in_fast_bytes}(t->data.mem.pi8, t->data.capacity);",
            "}",
            "#endif",
        ]

    def _point(self, root: str, arena: str, offset: int) -> str:
        c_type = self.model.tensors[root].el_type.c_type
        name = self.by_key[root].sym.name
        return f"{name}.data.mem.{ptr_member(c_type)} = ({c_type} *)({arena} + {offset}u);"

    def _home(self, root: str) -> str:
        where, offset = self.fplan.home(root)
        return self._point(root, self.fs.fast if where == "fast" else self.fs.slow, offset)

    def _init(self) -> str:
        rt, fs, p = self.rt, self.fs, self.fplan
        align = rt.arena_align
        body = [
            f"{self._storage()}mli_status {rt.init}(void *fast, size_t fast_bytes, void *slow, "
            "size_t slow_bytes) {",
            f"    {rt.ready} = 0;",
        ]
        bad, short = [], []
        if p.fast_bytes:
            bad.append(f"fast == NULL || (size_t)((uintptr_t)fast % {align}) != 0u")
            short.append(f"fast_bytes < {fs.fast_bytes}")
        else:  # views only, at a budget that keeps the input in the slow arena
            body.append("    (void)fast_bytes;  /* no fast buffer: fast may be NULL */")
        if p.slow_bytes:
            bad.append(f"slow == NULL || (size_t)((uintptr_t)slow % {align}) != 0u")
            short.append(f"slow_bytes < {fs.slow_bytes}")
        else:
            body.append("    (void)slow_bytes;  /* no slow arena: slow may be NULL */")
        if bad:
            either = " ||\n        ".join(bad)
            body += [
                f"    if ({either}) {{",
                f"        return {self.d.misaligned_status};",
                "    }",
                f"    if ({' || '.join(short)}) {{",
                "        return MLI_STATUS_NOT_ENGH_MEM;",
                "    }",
            ]
        body += [
            f"    {fs.fast} = (unsigned char *)fast;",
            f"    {fs.slow} = (unsigned char *)slow;",
        ]
        if rt.luts:
            body.insert(1, "    mli_status status;")
        body += ["    " + self._home(b.name) for b in self._buffers()]
        body.append(f"    {self.syms.bind_views}();")
        for kind, (lut, _) in rt.luts.items():
            data = f"(int16_t *)({fs.fast} + {p.luts[kind]}u)"
            body += create_lut(kind, lut, f"{2 * LUT_LENGTHS[kind]}u", data)
        body += self._state_resets()
        body += [f"    {rt.ready} = 1;", "    return MLI_STATUS_OK;", "}", ""]
        return "\n".join(body)

    def _buffers(self):
        """Every activation buffer, in first-use order."""
        placed = self.fplan.resident.placements + self.fplan.slow.placements
        return sorted((pl.buffer for pl in placed), key=lambda b: (b.first, b.name))

    # ------------------------------------------------------------------------------ run
    def _ref(self, key: str) -> str:
        refs = (self.chan_refs, self.tile_refs, self.staged)
        return next((r[key] for r in refs if key in r), None) or super()._ref(key)

    def _cfg_ref(self, pos: int) -> str:
        return self.tile_cfg or super()._cfg_ref(pos)

    def _before_layer(self, pos: int, layer: MliLayer) -> list[str]:
        fs, st = self.fs, self.fplan.layers[pos]
        lines, self.staged = [], {}
        for slot, s in enumerate(st.constants):
            lines += [
                f"    status = {fs.stage_fn}({super()._ref(s.name)}, {slot}u, {s.offset}u, "
                f"{s.bytes}u);",
                "    if (status != MLI_STATUS_OK) {",
                "        return status;",
                "    }",
            ]
            self.staged[s.name] = f"&{fs.stage}[{slot}]"
        for s in st.activations:
            _, home = self.fplan.home(s.name)
            if s.copy_in:
                lines.append(
                    f"    memcpy({fs.fast} + {s.offset}u, {fs.slow} + {home}u, {s.bytes}u);"
                )
            lines.append("    " + self._point(s.name, fs.fast, s.offset))
        if st.activations:
            lines.append(f"    {self.syms.bind_views}();")
        return lines

    def _after_layer(self, pos: int, layer: MliLayer) -> list[str]:
        fs, st = self.fs, self.fplan.layers[pos]
        lines, self.staged = [], {}
        for s in st.activations:
            _, home = self.fplan.home(s.name)
            if s.copy_out:
                lines.append(
                    f"    memcpy({fs.slow} + {home}u, {fs.fast} + {s.offset}u, {s.bytes}u);"
                )
            lines.append("    " + self._home(s.name))
        if st.activations:
            lines.append(f"    {self.syms.bind_views}();")
        return lines

    def _call(self, indent: str, fn: str, pos: int, layer: MliLayer) -> list[str]:
        if self.fplan.layers[pos].tiles and not self.tile_refs:
            return self._tiled_call(indent, fn, pos, layer)
        if self.fplan.layers[pos].chans and not self.chan_refs:
            return self._channel_call(indent, fn, pos, layer)
        names = layer.inputs + [n for n in (layer.weights, layer.bias) if n]
        names += list(layer.params.values()) + layer.outputs
        checks = [f"!{self.fs.in_fast}({self._ref(n)})" for n in dict.fromkeys(names)]
        checks += [
            f"!{self.fs.in_fast_bytes}({self.rt.luts[k][0]}.data.mem.pi16, "
            f"{self.rt.luts[k][0]}.data.capacity)"
            for k in luts_of(layer.kind)
            if k in self.rt.luts
        ]
        cond = f" ||\n{indent}    ".join(checks)
        self.operand_checks = True
        return [
            f"#ifdef {self.fs.check_operands}",
            f"{indent}if ({cond}) {{",
            f"{indent}    return MLI_STATUS_BAD_TENSOR;",
            f"{indent}}}",
            "#endif",
            *super()._call(indent, fn, pos, layer),
        ]

    def _tile_rows(self, k: int, name: str, slot: Staged | None, col: int) -> list[str]:
        """Point tile copy k at rows tiles[t][col] .. + tiles[t][col + 1] of `name`: its slot
        in the staging area (an input copied there) or the rows in place in the fast buffer."""
        fs, t = self.fs, self.model.tensors[name]
        c_type, rb = t.el_type.c_type, row_bytes(self.model, name)
        member, rows = ptr_member(c_type), f"tiles[t][{col + 1}]"
        lines = [
            f"tile[{k}].shape[0] = {rows};",
            f"tile[{k}].data.capacity = (uint32_t)({rows} * {rb}u);",
        ]
        if slot is None:
            at = self._rows_at(name, col)
            return lines + [f"tile[{k}].data.mem.{member} = ({c_type} *)({at});"]
        lines.append(f"tile[{k}].data.mem.{member} = ({c_type} *)({fs.fast} + {slot.offset}u);")
        if slot.copy_in:
            lines.append(
                f"memcpy({fs.fast} + {slot.offset}u, {self._rows_at(name, col)}, {rows} * {rb}u);"
            )
        return lines

    def _rows_at(self, name: str, col: int) -> str:
        """The address of row tiles[t][col] of `name` where it lives between layers."""
        t = self.model.tensors[name]
        where, offset = self.fplan.home(root_of(self.model, name))
        offset += t.offset * t.el_type.dtype.itemsize  # a view into its buffer
        arena = self.fs.fast if where == "fast" else self.fs.slow
        return f"{arena} + {offset}u + tiles[t][{col}] * {row_bytes(self.model, name)}u"

    def _tiled_call(self, indent: str, fn: str, pos: int, layer: MliLayer) -> list[str]:
        """The kernel once per tile of output rows (`mlitool.mli.memory.tiling`)."""
        st, fs = self.fplan.layers[pos], self.fs
        y, ops = layer.outputs[0], len(layer.inputs) + 1
        n, inner = len(st.tiles), indent + "        "
        table = ", ".join(
            "{ " + ", ".join(f"{v}u" for v in dataclasses.astuple(t)) + " }" for t in st.tiles
        )
        lines = [
            f"{indent}{{",
            f"{indent}    /* {n} tiles: output row, rows, input row, rows, padding top, bottom */",
            f"{indent}    static const uint16_t tiles[{n}][6] = {{ {table} }};",
            f"{indent}    mli_tensor tile[{ops}];",
        ]
        padded = "padding_top" in layer.cfg  # per-element kernels keep their config
        if padded:
            cfg_type = self.syms.c_type(layer.cfg_type)
            lines.append(f"{indent}    {cfg_type} cfg = {self.syms.cfgs[pos]};")
        lines.append(f"{indent}    unsigned t;")
        names = [*layer.inputs, y]
        lines += [
            f"{indent}    tile[{k}] = {self.by_key[x].sym.name};" for k, x in enumerate(names)
        ]
        lines.append(f"{indent}    for (t = 0u; t < {n}u; t++) {{")
        for k, (x, slot) in enumerate(zip(layer.inputs, st.tile_ins)):
            lines += [inner + s for s in self._tile_rows(k, x, slot, 2)]
        lines += [inner + s for s in self._tile_rows(ops - 1, y, st.tile_out, 0)]
        if padded:
            lines += [
                f"{inner}cfg.padding_top = (uint8_t)tiles[t][4];",
                f"{inner}cfg.padding_bottom = (uint8_t)tiles[t][5];",
            ]
        self.tile_refs = {x: f"&tile[{k}]" for k, x in enumerate(names)}
        self.tile_cfg = "&cfg" if padded else None
        lines += self._call(inner, fn, pos, layer)
        self.tile_refs, self.tile_cfg = {}, None
        if st.tile_out is not None:
            lines.append(
                f"{inner}memcpy({self._rows_at(y, 0)}, {fs.fast} + {st.tile_out.offset}u, "
                f"tiles[t][1] * {row_bytes(self.model, y)}u);"
            )
        return lines + [f"{indent}    }}", f"{indent}}}"]

    # ------------------------------------------------------------------------------ manifest
    def manifest(self) -> dict:
        doc = super().manifest()
        doc["functions"]["init"] = self.rt.init
        del doc["arena"]  # two buffers instead of one: see fast_memory
        doc["fast_memory"] = self._fast_memory_manifest()
        return doc

    def _fast_memory_manifest(self) -> dict:
        """The manifest's `runtime.fast_memory`: the plan (budget, fast and slow bytes, staging,
        where each buffer lives, per-layer bytes moved and tiles)."""
        p, fs = self.fplan, self.fs
        name = {k: i.sym.name for k, i in self.by_key.items()}
        figures = plan_figures(p, self.model)
        for row, st in zip(figures["layers"], p.layers):
            row["activations_staged"] = [name[s.name] for s in st.activations]
        return {
            **figures,
            "align": p.align,
            "macros": {
                "fast_bytes": fs.fast_bytes,
                "slow_bytes": fs.slow_bytes,
                "align": self.rt.arena_align,
                "check_operands": fs.check_operands,
            },
            "luts": dict(p.luts),
            "buffers": [
                {
                    "tensor": name[b.name],
                    "name": b.name,
                    "memory": self.fplan.home(b.name)[0],
                    "offset": self.fplan.home(b.name)[1],
                    "bytes": b.size,
                    "first_layer": b.first,
                    "last_layer": b.last,
                }
                for b in self._buffers()
            ],
        }

    # ------------------------------------------------------------------------- channel slices
    # The fast-memory runtime's calls on slices of output channels: a convolution or fully
    # connected layer whose weights do not fit calls its kernel once per slice, on that slice's
    # weights and bias staged into the fast buffer and a strided view of the output's channels
    # (MLI 2.x conv2d and fully_connected accept an output whose innermost stride is 1; a fully
    # connected output slice is contiguous anyway).

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
        """The kernel once per slice of output channels (`mlitool.mli.memory.tiling`): the slice's
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
