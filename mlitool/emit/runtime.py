"""The runtime in the emitted sources: one call binds the network to an arena, one runs it.

    NAME_init(arena, bytes)   every activation buffer at its offset in `mlitool.mli.memory.arena`'s plan
                              (the plan `report` shows), then the views into their buffers
    NAME_run()                every layer's kernel in model order, inserted converts, copies and
                              relus included; the first status that is not MLI_STATUS_OK
    NAME_input(i), NAME_output(i)

Inputs share the arena like every activation (the plan reuses their memory after their last
reader), so an application writes them before every NAME_run, as with TFLite Micro.

No allocation: the application owns the arena; the look-up tables MLI 2.x kernels take are const
data (flash), the values MLI's own `mli_krn_<kind>_create_lut` writes (`execute.mli_kernels.luts`;
the fast-memory runtime still creates them in the fast buffer). Every parameter a kernel rewrites in its output tensor is
already emitted with the value the kernel writes (lowering sets it so, see
`mlitool.mli.ops.OUTPUT_PARAMS`), so repeated runs start from the same tensors. The one state
that persists between runs is a stateful fallback layer's (SVDF's memory): static RAM that
NAME_init zeroes, so every NAME_run continues the stream NAME_init began.

An application may define `NAME_LAYER_HOOK` (a function name) when compiling NAME.c: it is then
called as `hook(layer position, output tensor)` after every layer, once per output.
"""

from __future__ import annotations

import dataclasses

from mlitool.emit.analysis import Emission
from mlitool.emit.names import comment_text
from mlitool.emit.symbols import RuntimeSymbols
from mlitool.errors import UnsupportedError
from mlitool.mli.kernels import LUT_LENGTHS, luts_of
from mlitool.mli.kinds import kind_of
from mlitool.mli.memory.arena import ArenaPlan, model_arena
from mlitool.mli.types import MliLayer


def create_lut(kind: str, lut: str, capacity: str, data: str) -> list[str]:
    """NAME_init's lines that fill the look-up table `lut` of `kind` in `data` (C expressions)."""
    return [
        f"    {lut}.data.capacity = {capacity};",
        f"    {lut}.data.mem.pi16 = {data};",
        f"    status = mli_krn_{kind}_create_lut(&{lut});",
        "    if (status != MLI_STATUS_OK) {",
        "        return status;",
        "    }",
    ]


def const_lut(kind: str, lut: str, data: str) -> list[str]:
    """A look-up table as const data: the values, and the `mli_lut` that
    `mli_krn_<kind>_create_lut` would fill (the kernels take a `const mli_lut *`)."""
    from mlitool.emit.cdata import int_list
    from mlitool.execute.mli.kernels.luts import lut as table

    t = table(kind)
    return [
        f"static const int16_t {data}[{t.length}] = {{ {int_list(t.data.tolist())} }};",
        f"static const mli_lut {lut} = {{",
        f"    .data = {{ .capacity = {2 * t.length}u, .mem = {{ .pi16 = (int16_t *){data} }} }},",
        f"    .type = MLI_EL_FX_16, .length = {t.length}, .in_frac_bits = {t.in_frac_bits},",
        f"    .out_frac_bits = {t.out_frac_bits}, .input_offset = {t.input_offset}, "
        f".output_offset = {t.output_offset} }};",
    ]


class Runtime:
    """Declarations (header) and definitions (source) of the runtime of one model."""

    def __init__(self, em: Emission, static: bool, verified_build: str | None):
        model, syms = em.model, em.syms
        self.model, self.syms, self.static, self.base_name = model, syms, static, em.base_name
        self.d = em.dialect
        self.rt: RuntimeSymbols = syms.runtime
        self.by_key = em.by_key
        self.build = verified_build if model.target.executable else None
        self.plan: ArenaPlan = model_arena(model)
        if not model.layers:
            raise UnsupportedError(
                f"{model.source}: the model has no layers, so there is nothing to "
                "run (use --no-runtime for the tensors alone)"
            )
        for key in model.inputs + model.outputs:
            if self.by_key[key].is_const:
                raise UnsupportedError(
                    f"{model.source}: model input/output '{key}' is a constant; "
                    "the runtime hands out writable tensors (use --no-runtime)"
                )

    # ------------------------------------------------------------------------------ header
    def _storage(self) -> str:
        return f"static {self.syms.unused_macro} " if self.static else ""

    def header_lines(self) -> list[str]:
        """The runtime's part of NAME.h: how to use it, its macros and its API."""
        rt, m = self.rt, self.model
        lines = ["", *self._usage_doc()]
        scratch = sum(la.cfg["scratch_bytes"] for la in m.layers if "scratch_bytes" in la.cfg)
        if scratch:
            lines.append(
                f" * Recurrent cells work in {scratch} bytes of static RAM (their configs' "
                f"scratch_data){self._SCRATCH_PLACE}."
            )
        if self._state_resets():
            lines += [
                f" * Stateful layers (SVDF) keep their state there between {rt.run} calls;",
                f" * {rt.init} zeroes it, starting a new stream.",
            ]
        lines[-1] += " */"
        lines += self._memory_defines()
        lines += [
            f"#define {rt.num_inputs} {len(m.inputs)}u",
            f"#define {rt.num_outputs} {len(m.outputs)}u",
        ]
        return lines + [*self._build_lines(), "", *self._init_doc(), *self._api_decls()]

    _INIT_PARAMS = "void *arena, size_t arena_bytes"
    _SCRATCH_PLACE = ""  # where the scratch RAM is, said after the sentence

    def _usage_doc(self) -> list[str]:
        """The header comment's lines, opened and not closed."""
        rt = self.rt
        lines = [
            "/* ---- Runtime ----",
            f" * Every activation lives in one arena of {rt.arena_bytes} bytes whose address "
            f"is a multiple of",
            f" * {rt.arena_align}, at the offsets `mlitool report` plans "
            f"({comment_text(self.base_name)}.json: runtime.arena). Usage:",
            f" *   {rt.init}(arena, sizeof arena);    once; then per inference:",
            f" *   write {rt.input}(i)->data, {rt.run}(), read {rt.output}(i)->data.",
            " * The arena is reused as layers run: an input's memory may hold later activations",
            f" * once its last reader is done, so write the inputs again before every {rt.run}().",
            *self._hook_doc(),
        ]
        if rt.luts:
            lut_bytes = 2 * sum(LUT_LENGTHS[k] for k in rt.luts)
            lines.append(
                f" * The look-up tables of {', '.join(rt.luts)} ({lut_bytes} bytes) are const "
                "data, the values mli_krn_<kind>_create_lut writes."
            )
        return lines

    def _memory_defines(self) -> list[str]:
        rt = self.rt
        return [
            f"#define {rt.arena_bytes} {self.plan.arena_bytes}u",
            f"#define {rt.arena_align} {self.plan.align}u",
        ]

    def _init_doc(self) -> list[str]:
        return [
            f"/* Binds every tensor to the arena. MLI_STATUS_NOT_ENGH_MEM if arena_bytes < "
            f"{self.rt.arena_bytes},",
            f" * {self.d.misaligned_status} if arena is NULL or not a multiple of "
            f"{self.rt.arena_align}. */",
        ]

    def _api_decls(self) -> list[str]:
        """Prototypes of the runtime API (none when static) and the layer hook's declaration."""
        rt, lines = self.rt, []
        if not self.static:
            lines += [
                f"mli_status {rt.init}({self._INIT_PARAMS});",
                "/* Runs every layer; returns the first status that is not MLI_STATUS_OK",
                f" * (MLI_STATUS_BAD_TENSOR before a successful {rt.init}). */",
                f"mli_status {rt.run}(void);",
                f"/* Input / output tensor i (the order of {comment_text(self.base_name)}"
                ".json), NULL if i is out of range. */",
                f"mli_tensor *{rt.input}(unsigned i);",
                f"mli_tensor *{rt.output}(unsigned i);",
            ]
        return lines + [
            f"#ifdef {rt.layer_hook}",
            f"void {rt.layer_hook}(unsigned layer, const mli_tensor *output);",
            "#endif",
        ]

    def _hook_doc(self) -> list[str]:
        rt = self.rt
        return [
            f" * Define {rt.layer_hook} as a function name when compiling the source to have "
            "it called as",
            " *   void hook(unsigned layer, const mli_tensor *output)",
            " * after every layer (layer = position in the list above), once per output.",
        ]

    def _build_lines(self) -> list[str]:
        """The build the outputs are verified for (NAME_MLI_BUILD), or why there is none."""
        if not self.build:
            return [
                f"/* MLI {self.model.mli_version}: mlitool does not execute this target (no "
                "reference build), so no build is verified. */"
            ]
        return [
            "/* Verified build: the outputs equal `mlitool run --mode mli` with the same "
            "arithmetic (here",
            f" * {comment_text(self.build)}) when linked against an MLI 2.0.2 library "
            "built with these settings. */",
            f'#define {self.rt.build} "{self.build}"',
        ]

    # ------------------------------------------------------------------------------ source
    def source_text(self) -> str:
        rt = self.rt
        parts = [
            "",
            "/* ---- runtime ---- */",
            *self._hook_defines(),
            "",
            f"static int {rt.ready};",
        ]
        for kind, (lut, data) in rt.luts.items():
            parts += const_lut(kind, lut, data)
        return "\n".join([*parts, "", *self._functions()])

    def _hook_defines(self) -> list[str]:
        """NAME_AFTER_LAYER: a call of the layer hook where NAME_LAYER_HOOK names one."""
        rt = self.rt
        return [
            f"#ifdef {rt.layer_hook}",
            f"#define {rt.after_layer}(layer, output) {rt.layer_hook}((layer), (output))",
            "#else",
            f"#define {rt.after_layer}(layer, output) ((void)0)",
            "#endif",
        ]

    def _functions(self) -> list[str]:
        """The definitions of the runtime API."""
        rt = self.rt
        return [
            self._init(),
            self._run(),
            self._accessor(rt.input, self.model.inputs),
            self._accessor(rt.output, self.model.outputs),
        ]

    def _bind(self, key: str, offset: int) -> str:
        i = self.by_key[key]
        return "    " + self.d.arena_bind(i.sym.name, i.tensor.el_type.c_type, offset)

    def _init(self) -> str:
        rt = self.rt
        body = [
            f"{self._storage()}mli_status {rt.init}(void *arena, size_t arena_bytes) {{",
            "    unsigned char *base = (unsigned char *)arena;",
            f"    {rt.ready} = 0;",
            f"    if (arena == NULL || (size_t)((uintptr_t)arena % {rt.arena_align}) != 0u) {{",
            f"        return {self.d.misaligned_status};",
            "    }",
            f"    if (arena_bytes < {rt.arena_bytes}) {{",
            "        return MLI_STATUS_NOT_ENGH_MEM;",
            "    }",
        ]
        body += [self._bind(p.buffer.name, p.offset) for p in self.plan.placements]
        body.append(f"    {self.syms.bind_views}();")
        body += self._state_resets()
        body += [f"    {rt.ready} = 1;", "    return MLI_STATUS_OK;", "}", ""]
        return "\n".join(body)

    def _state_resets(self) -> list[str]:
        """NAME_init's lines that zero the state fallback layers keep between inferences (SVDF's
        memory, `FallbackKernel.state`): every init starts a new stream."""
        lines = []
        for pos, layer in enumerate(self.model.layers):
            entry = kind_of(layer)
            if entry is None or entry.fallback is None or not entry.fallback.state:
                continue
            buf = self.syms.scratch[pos]
            lines.append(
                f"    {{ size_t k; for (k = 0u; k < sizeof {buf} / sizeof {buf}[0]; k++) "
                f"{buf}[k] = 0; }}  /* layer {pos}'s state */"
            )
        return lines

    def _ref(self, key: str) -> str:
        return f"&{self.by_key[key].sym.name}"

    def _args(self, pos: int, layer: MliLayer) -> list[str]:
        """Arguments of the layer's kernel: inputs, weights, bias, params, tables, config, output
        (the order of every MLI 2.x / 1.x kernel mlitool calls but the LSTM cell's)."""
        if layer.kind == "lstm_cell":
            return self._lstm_args(pos, layer)
        if self.syms.input_lists[pos]:  # MLI 1.x concatenation: an array of inputs
            args = [self.syms.input_lists[pos]]
        else:
            args = [self.d.input_arg(layer.kind, self._ref(n)) for n in layer.inputs]
        args += [self._ref(n) for n in (layer.weights, layer.bias) if n]
        args += [self._ref(n) for n in layer.params.values()]
        args += [f"&{self.rt.luts[k][0]}" for k in luts_of(layer.kind) if k in self.rt.luts]
        if self.syms.cfgs[pos]:
            args.append(self._cfg_ref(pos))
        args += [self._ref(n) for n in layer.outputs]
        return args

    def _cfg_ref(self, pos: int) -> str:
        return f"&{self.syms.cfgs[pos]}"

    def _lstm_args(self, pos: int, layer: MliLayer) -> list[str]:
        """mli_krn_lstm_cell_*(in, prev_out, weights_in, weights_out, bias, tanh_lut, sigm_lut,
        cfg, cell, out): the cell state (the layer's last input) is updated in place."""
        x, prev_out, cell = layer.inputs
        names = [x, prev_out, layer.params["weights_in"], layer.params["weights_out"], layer.bias]
        return (
            [self._ref(n) for n in names]
            + [f"&{self.rt.luts[k][0]}" for k in luts_of(layer.kind)]
            + [f"&{self.syms.cfgs[pos]}", self._ref(cell), self._ref(layer.outputs[0])]
        )

    def _run(self) -> str:
        rt = self.rt
        body = [f"{self._storage()}mli_status {rt.run}(void) {{"]
        calls = any(layer.kernel for layer in self.model.layers)
        if calls:
            body.append("    mli_status status;")
        body += [f"    if (!{rt.ready}) {{", "        return MLI_STATUS_BAD_TENSOR;", "    }"]
        for pos, layer in enumerate(self.model.layers):
            what = comment_text(self.syms.call(layer.kernel)) if layer.kernel else "view, no call"
            body.append(
                f"    /* {pos}: {comment_text(layer.op_type)} (TFLite op {layer.index}): {what} */"
            )
            if self.syms.input_lists[pos]:
                refs = ", ".join(self._ref(n) for n in layer.inputs)
                body.append(
                    f"    {{\n        const mli_tensor *{self.syms.input_lists[pos]}"
                    f"[{len(layer.inputs)}] = {{ {refs} }};"
                )
            body += self._before_layer(pos, layer)
            if layer.calls:
                body += self._slice_calls(pos, layer)
            elif layer.kernel:
                indent = "        " if self.syms.input_lists[pos] else "    "
                body += self._call(indent, self.syms.call(layer.kernel), pos, layer)
            if self.syms.input_lists[pos]:
                body.append("    }")
            body += self._after_layer(pos, layer)
            body += [f"    {rt.after_layer}({pos}u, {self._ref(n)});" for n in layer.outputs]
        body += ["    return MLI_STATUS_OK;", "}", ""]
        return "\n".join(body)

    def _call(self, indent: str, fn: str, pos: int, layer: MliLayer) -> list[str]:
        """One kernel call and its status check."""
        return [
            f"{indent}status = {fn}({', '.join(self._args(pos, layer))});",
            f"{indent}if (status != MLI_STATUS_OK) {{",
            f"{indent}    return status;",
            f"{indent}}}",
        ]

    def _before_layer(self, pos: int, layer: MliLayer) -> list[str]:
        """Statements before a layer's calls (the fast-memory runtime's copies)."""
        return []

    def _after_layer(self, pos: int, layer: MliLayer) -> list[str]:
        """Statements after a layer's calls, before the hook."""
        return []

    def _slice_calls(self, pos: int, layer: MliLayer) -> list[str]:
        """The kernel once per slice (`SliceCalls`): nested loops over the looped output
        dimensions that move each slice view's data pointer (views that repeat stay where
        NAME_bind_views put them)."""
        calls, out = layer.calls, self.model.tensor(layer.outputs[0])
        loops = [d for d in calls.loops if out.shape[d] > 1]
        lines, indent = ["    {"], "        "
        if loops:
            lines.append(f"{indent}uint32_t {', '.join(f'i{d}' for d in loops)};")
        for d in loops:
            lines.append(f"{indent}for (i{d} = 0u; i{d} < {out.shape[d]}u; i{d}++) {{")
            indent += "    "
        for name, view in zip(layer.inputs + layer.outputs, calls.views):
            t = self.model.tensor(name)
            steps = calls.steps(t.shape, t.mem_stride, out.shape)
            terms = [f"i{d} * {steps[d]}u" for d in loops if steps[d]]
            if terms:
                lines.append(
                    indent
                    + self.d.bind_statement(
                        self.by_key[view].sym.name,
                        self.by_key[name].sym.name,
                        t.el_type.c_type,
                        " + ".join(terms),
                    )
                )
        one_call = dataclasses.replace(
            layer, inputs=list(calls.views[:-1]), outputs=[calls.views[-1]], calls=None
        )
        lines += self._call(indent, layer.kernel, pos, one_call)
        for _ in loops:
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        return lines + ["    }"]

    def _accessor(self, fn: str, keys: list[str]) -> str:
        cases = [f"    case {k}u: return {self._ref(key)};" for k, key in enumerate(keys)]
        return "\n".join(
            [
                f"{self._storage()}mli_tensor *{fn}(unsigned i) {{",
                "    switch (i) {",
                *cases,
                "    default: return NULL;",
                "    }",
                "}",
                "",
            ]
        )

    # ------------------------------------------------------------------------------ manifest
    def manifest(self) -> dict:
        rt = self.rt
        name = {k: i.sym.name for k, i in self.by_key.items()}
        return {
            "functions": {"init": rt.init, "run": rt.run, "input": rt.input, "output": rt.output},
            "layer_hook_macro": rt.layer_hook,
            "verified_build": self.build,
            "arena": {
                "bytes": self.plan.arena_bytes,
                "align": self.plan.align,
                "lower_bound": self.plan.lower_bound,
                "unshared_bytes": self.plan.unshared_bytes,
                "macros": {"bytes": rt.arena_bytes, "align": rt.arena_align},
                "buffers": [
                    {
                        "tensor": name[p.buffer.name],
                        "name": p.buffer.name,
                        "offset": p.offset,
                        "bytes": p.buffer.size,
                        "first_layer": p.buffer.first,
                        "last_layer": p.buffer.last,
                    }
                    for p in self.plan.placements
                ],
            },
            "luts": [
                {"kind": kind, "object": lut, "data": data, "length": LUT_LENGTHS[kind]}
                for kind, (lut, data) in rt.luts.items()
            ],
        }
