"""`convert --selftest N`: NAME_selftest.c, an on-target check that names the first layer whose
output differs from what mlitool computed for the build the header names (NAME_MLI_BUILD).

    int NAME_selftest(unsigned *layer, unsigned *sample)

runs each built-in input through NAME_run with the layer hook (NAME.c compiled with
-DNAME_LAYER_HOOK=NAME_selftest_hook), takes the CRC-32 of every layer's outputs (the format of
`mlitool.crclog`) and compares it with the executor's, then compares the model's output bytes
with the executor's (left out with -DNAME_SELFTEST_NO_OUTPUTS, to save flash). Only
NAME_selftest.c holds the test data (inputs, CRC tables, outputs): a release build that does not
compile it carries none of it.

With `--fast-memory` it runs on a fast and a slow buffer of its own (NAME_selftest_arena takes
yours, as the two-buffer NAME_init does); the hook sees each layer's output where it lives
between layers (fast or slow, a tiled layer's whole output after its last tile), so the CRCs are
the same as the one-arena runtime's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from mlitool.crclog import HEADER, crc32_nibble_table
from mlitool.emit import cdata
from mlitool.emit.names import comment_text, join
from mlitool.emit.symbols import Symbols
from mlitool.mli.types import ElType, MliModel

# Return codes, in the order NAME_selftest checks: (macro suffix, value, meaning).
CODES = (
    ("OK", 0, "every layer's CRC and every output matched for every sample"),
    ("CRC_DIFFERS", 1, "a layer's output differs: *sample and *layer name the first"),
    ("MISALIGNED", 2, "@ARENA is not a multiple of @ALIGN"),
    ("INIT_FAILED", 3, "@INIT did not return MLI_STATUS_OK"),
    ("RUN_FAILED", 4, "@RUN returned an error status in *layer of *sample"),
    ("NO_HOOK", 5, "the hook was not called for every layer: compile @C with it"),
    ("WRONG_BUILD", 6, "compiled with ROUND_UP / ROUND_CONVERGENT / FULL_ACCU of another build"),
    ("OUTPUT_DIFFERS", 7, "an output's bytes differ: *sample, and *layer its @OUT index"),
)


@dataclass
class SelfTestData:
    """What the self-test carries: MLI input containers {input name: (n,) + shape}, the expected
    CRCs (n, layers) and output containers {output name: (n,) + shape} for `build`, and where the
    inputs came from (for the manifest)."""

    inputs: dict[str, np.ndarray]
    crcs: np.ndarray
    outputs: dict[str, np.ndarray]
    build: str
    source: str


class SelfTest:
    """Declarations (in NAME.h), NAME_selftest.c and the manifest entry of one model's self-test."""

    def __init__(self, model: MliModel, syms: Symbols, base_name: str, data: SelfTestData):
        self.model, self.syms, self.data, self.base_name = model, syms, data, base_name
        p, m = syms.prefix, syms.macro_prefix
        self.fn, self.hook = join(p, "selftest"), join(p, "selftest_hook")
        self.fn_arena = join(p, "selftest_arena")
        self.file = f"{base_name}_selftest.c"
        self.macro = {k: join(m, "SELFTEST", k) for k, _, _ in CODES}
        self.printf = join(m, "SELFTEST_PRINTF")
        self.no_outputs = join(m, "SELFTEST_NO_OUTPUTS")
        self.samples, self.layers = data.crcs.shape
        self.fast = syms.fast  # the fast-memory runtime's names, or None (one arena)

    def flash(self) -> dict[str, int]:
        return self.flash_of(self.data)

    @staticmethod
    def flash_of(data: SelfTestData) -> dict[str, int]:
        """Bytes of constant data NAME_selftest.c adds (its code not counted; the CRC nibble
        table is 64 bytes). `outputs` is in `total`; NAME_SELFTEST_NO_OUTPUTS takes it out."""
        inputs = sum(int(v.nbytes) for v in data.inputs.values())
        outputs = sum(int(v.nbytes) for v in data.outputs.values())
        crcs = 4 * int(data.crcs.size) + 64
        ops = 2 * int(data.crcs.shape[1])  # the op table, only with NAME_SELFTEST_PRINTF
        total = inputs + crcs + outputs
        return {
            "inputs": inputs,
            "crcs": crcs,
            "outputs": outputs,
            "ops_with_printf": ops,
            "total": total,
        }

    def header_lines(self) -> list[str]:
        rt, f = self.syms.runtime, self.flash()
        lines = [
            "",
            f"/* ---- Self-test ({comment_text(self.file)}, {self.samples} inputs, "
            f"{f['total']} bytes of constant data) ----",
            f" * Compile {comment_text(self.base_name)}.c with",
            f" *   -D{rt.layer_hook}={self.hook}",
            f" * and link {comment_text(self.file)}: {self.fn}(&layer, &sample) runs every "
            f"input through {rt.run}",
            *self._arena_doc(),
            f" * names. The expected outputs are {f['outputs']} of those bytes: compile "
            f"{comment_text(self.file)} with -D{self.no_outputs}",
            " * to leave them out.",
            f" * Define {self.printf} (e.g. as printf) to print the log that "
            "`mlitool verify --board-log` reads.",
            " * Returns: */",
        ]
        names = {"@ALIGN": rt.arena_align, "@INIT": rt.init, "@RUN": rt.run}
        names["@ARENA"] = "the fast or the slow buffer" if self.fast else "the arena"
        names["@C"], names["@OUT"] = f"{self.base_name}.c", rt.output
        for key, value, meaning in CODES:
            for word, real in names.items():
                meaning = meaning.replace(word, real)
            lines.append(f"#define {self.macro[key]} {value} /* {comment_text(meaning)} */")
        lines += [
            f"int {self.fn}(unsigned *layer, unsigned *sample);",
            f"int {self.fn_arena}({self._arena_params()}, unsigned *layer, unsigned *sample);",
            f"void {self.hook}(unsigned layer, const mli_tensor *output);",
        ]
        return lines

    def _arena_doc(self) -> list[str]:
        rt = self.syms.runtime
        if self.fast:
            return [
                f" * on static fast and slow buffers of its own ({self.fn_arena} on yours, e.g. "
                "in VCCM, to",
                f" * test their placement; it calls {rt.init} on them), reads each layer's "
                "output where it lives",
                f" * and compares its CRC-32, then the outputs' bytes, with the build {rt.build}",
            ]
        return [
            f" * on a static arena of its own ({self.fn_arena} on yours, to test its "
            "placement; it calls",
            f" * {rt.init} on it) and compares every layer's CRC-32, then the outputs' bytes, "
            f"with the build {rt.build}",
        ]

    def _arena_params(self) -> str:
        if self.fast:
            return "void *fast, size_t fast_bytes, void *slow, size_t slow_bytes"
        return "void *arena, size_t arena_bytes"

    def _arenas(self) -> tuple[str, str, str, str]:
        """The static buffers and NAME_selftest's call of NAME_selftest_arena on them, the
        alignment check and the NAME_init call of NAME_selftest_arena."""
        p, rt = self.syms.prefix, self.syms.runtime
        align = rt.arena_align
        if not self.fast:
            arena = join(p, "st_arena")
            return (
                f"static uint64_t {arena}[({rt.arena_bytes} + 7u) / 8u + 1u];\n",
                f"{arena}, sizeof {arena}",
                f"(uintptr_t)arena % {align} != 0u",
                f"{rt.init}(arena, arena_bytes)",
            )
        fast, slow = join(p, "st_fast"), join(p, "st_slow")
        return (
            f"static uint64_t {fast}[({self.fast.fast_bytes} + 7u) / 8u + 1u];\n"
            f"static uint64_t {slow}[({self.fast.slow_bytes} + 7u) / 8u + 1u];\n",
            f"{fast}, sizeof {fast}, {slow}, sizeof {slow}",
            f"(uintptr_t)fast % {align} != 0u ||\n"
            f"        (slow != NULL && (uintptr_t)slow % {align} != 0u)",
            f"{rt.init}(fast, fast_bytes, slow, slow_bytes)",
        )

    def manifest(self) -> dict:
        return {
            "file": self.file,
            "function": self.fn,
            "hook": self.hook,
            "samples": self.samples,
            "layers": self.layers,
            "build": self.data.build,
            "inputs": self.data.source,
            "flash_bytes": self.flash(),
            "codes": {self.macro[k]: v for k, v, _ in CODES},
            "function_arena": self.fn_arena,
            "printf_macro": self.printf,
            "no_outputs_macro": self.no_outputs,
        }

    # ------------------------------------------------------------------------------ source
    def _array(self, c_name: str, name: str, v: np.ndarray) -> Iterator[bytes]:
        t = self.model.tensor(name)
        rows = cdata.float_lines(v) if t.el_type == ElType.FP32 else cdata.int_lines(v)
        yield f"static const {t.el_type.c_type} {c_name}[{v.size}] = {{\n".encode()
        yield b"".join(bytes(r) for r in rows)
        yield b"};\n"

    def _arrays(self) -> Iterator[bytes]:
        p = self.syms.prefix
        for k, name in enumerate(self.model.inputs):
            yield from self._array(join(p, "st_in", str(k)), name, self.data.inputs[name])
        yield (
            f"#ifndef {self.no_outputs}\n/* Expected outputs per sample ({self.data.build}). */\n"
        ).encode()
        for k, name in enumerate(self.model.outputs):
            yield from self._array(join(p, "st_out", str(k)), name, self.data.outputs[name])
        yield b"#endif\n"
        crcs = self.data.crcs.reshape(-1).tolist()
        text = ",\n".join(
            "    " + ", ".join(f"0x{c:08x}u" for c in crcs[i : i + 6])
            for i in range(0, len(crcs), 6)
        )
        yield (
            f"/* Expected CRC-32 per sample and layer ({self.data.build}). */\n"
            f"static const uint32_t {join(p, 'st_expected')}[{len(crcs)}] = {{\n{text}\n}};\n"
        ).encode()
        ops = ", ".join(f"{la.index}u" for la in self.model.layers)
        yield (
            f"#ifdef {self.printf}\n/* TFLite op of each layer, for the log. */\n"
            f"static const uint16_t {join(p, 'st_op')}[{self.layers}] = {{ {ops} }};\n#endif\n"
        ).encode()

    def _build_check(self) -> str:
        """1 when the compiler sees MLI's own build definitions (ROUND_UP / ROUND_CONVERGENT,
        FULL_ACCU; MLI keeps them private, so only a build that passes them on shows them) of
        another build than the expected CRCs are for."""
        round_mode, accu = (part.split("=")[1] for part in self.data.build.split())
        want = f"defined(ROUND_{round_mode}) && {'' if accu == 'ON' else '!'}defined(FULL_ACCU)"
        return (
            "#if (defined(ROUND_UP) || defined(ROUND_CONVERGENT)) && !(" + want + ")\n"
            f"#define {join(self.syms.prefix, 'st_wrong_build')} 1\n#else\n"
            f"#define {join(self.syms.prefix, 'st_wrong_build')} 0\n#endif\n"
        )

    def _outputs_check(self, tensor_crc: str) -> str:
        """st_outputs(sample, &k): 1 when output k is the first whose bytes differ from the
        sample's expected ones."""
        p, rt = self.syms.prefix, self.syms.runtime
        checks = "\n".join(
            f"    if ({tensor_crc}(0u, {rt.output}({k}u), (const unsigned char *)"
            f"({join(p, 'st_out', str(k))} + sample * {self.model.tensor(name).size}u))) {{\n"
            f"        *output = {k}u;\n        return 1;\n    }}"
            for k, name in enumerate(self.model.outputs)
        )
        return (
            f"#ifndef {self.no_outputs}\n"
            f"static int {join(p, 'st_outputs')}(uint32_t sample, unsigned *output) {{\n"
            f"{checks}\n    return 0;\n}}\n#endif\n"
        )

    def source(self) -> Iterator[bytes]:
        rt, p, mac = self.syms.runtime, self.syms.prefix, self.macro
        s = {k: join(p, "st", k) for k in ("layer", "open", "done", "crc", "sample", "bad")}
        s["bad_layer"], s["tensor_crc"] = join(p, "st_bad_layer"), join(p, "st_tensor_crc")
        s["finish"], s["nibble"] = join(p, "st_finish"), join(p, "st_nibble")
        crc_table, ops = join(p, "st_expected"), join(p, "st_op")
        statics, buffers, misaligned, init = self._arenas()
        yield (
            f"/* Self-test of {comment_text(self.base_name)} ({comment_text(self.model.source)})"
            f", generated by mlitool: {self.samples} inputs\n"
            f" * ({comment_text(self.data.source)}) and the CRC-32 of every layer's outputs "
            f"that `mlitool run --mode mli --dump-crc`\n * computes for "
            f"{comment_text(self.data.build)}. See {comment_text(self.base_name)}.h. */\n"
            f'#include <stddef.h>\n#include <stdint.h>\n#include "{self.base_name}.h"\n'
            f"#ifdef {self.printf}\n#include <stdio.h>\n#endif\n\n"
        ).encode()
        yield self._build_check().encode()
        yield from self._arrays()
        nibbles = ", ".join(f"0x{c:08x}u" for c in crc32_nibble_table())
        input_copies = "\n".join(
            f"        {s['tensor_crc']}_copy({rt.input}({k}u), "
            f"{join(p, 'st_in', str(k))} + sample_i * "
            f"{self.model.tensor(name).size}u, sizeof {join(p, 'st_in', str(k))}[0]);"
            for k, name in enumerate(self.model.inputs)
        )
        yield f"""
/* CRC-32 (zlib's: reflected 0xEDB88320), four bits a step. */
static const uint32_t {s["nibble"]}[16] = {{ {nibbles} }};

static uint32_t {s["layer"]}, {s["done"]}, {s["crc"]}, {s["sample"]}, {s["bad_layer"]};
static int {s["open"]}, {s["bad"]};

/* The tensor's elements in row-major order, read through its mem_stride: without want, their
 * CRC-32 continued from crc; with it, 1 when a byte differs from want's, else 0. */
static uint32_t {s["tensor_crc"]}(uint32_t crc, const mli_tensor *t, const unsigned char *want) {{
    uint32_t el = mli_hlp_tensor_element_size(t), shape[4] = {{1u, 1u, 1u, 1u}}, d, a, b, c, e, k;
    uint32_t i = 0u, differs = 0u;
    int32_t stride[4] = {{0, 0, 0, 0}};
    const unsigned char *base = (const unsigned char *)t->data.mem.pi8;
    for (d = 0; d < t->rank; d++) {{
        shape[4u - t->rank + d] = t->shape[d];
        stride[4u - t->rank + d] = t->mem_stride[d];
    }}
    crc = ~crc;
    for (a = 0; a < shape[0]; a++)
        for (b = 0; b < shape[1]; b++)
            for (c = 0; c < shape[2]; c++)
                for (e = 0; e < shape[3]; e++) {{
                    const unsigned char *q = base + ((int32_t)a * stride[0] + (int32_t)b * stride[1]
                        + (int32_t)c * stride[2] + (int32_t)e * stride[3]) * (int32_t)el;
                    for (k = 0; k < el; k++) {{
                        if (want != NULL) {{
                            differs |= (uint32_t)(q[k] != want[i++]);
                            continue;
                        }}
                        crc ^= q[k];
                        crc = (crc >> 4) ^ {s["nibble"]}[crc & 15u];
                        crc = (crc >> 4) ^ {s["nibble"]}[crc & 15u];
                    }}
                }}
    return want != NULL ? differs : ~crc;
}}

static void {s["tensor_crc"]}_copy(mli_tensor *t, const void *src, size_t el) {{
    size_t n = (size_t)mli_hlp_count_elem_num(t, 0) * el, i;
    for (i = 0; i < n; i++) ((unsigned char *)t->data.mem.pi8)[i] = ((const unsigned char *)src)[i];
}}

/* The open layer's CRC is complete: compare (and print) it. */
static void {s["finish"]}(void) {{
    uint32_t want;
    if (!{s["open"]}) return;
    {s["open"]} = 0;
    {s["done"]}++;
    if ({s["layer"]} >= {self.layers}u) return;
    want = {crc_table}[{s["sample"]} * {self.layers}u + {s["layer"]}];
#ifdef {self.printf}
    {self.printf}("crc %u %u %u %08lx\\n", (unsigned){s["sample"]}, (unsigned){s["layer"]},
        (unsigned){ops}[{s["layer"]}], (unsigned long){s["crc"]});
#endif
    if ({s["crc"]} != want && !{s["bad"]}) {{
        {s["bad"]} = 1;
        {s["bad_layer"]} = {s["layer"]};
    }}
}}

void {self.hook}(unsigned layer, const mli_tensor *output) {{
    if ({s["open"]} && layer != {s["layer"]}) {s["finish"]}();
    if (!{s["open"]}) {{
        {s["open"]} = 1;
        {s["layer"]} = layer;
        {s["crc"]} = 0u;
    }}
    {s["crc"]} = {s["tensor_crc"]}({s["crc"]}, output, NULL);
}}

{self._outputs_check(s["tensor_crc"])}
{statics}
int {self.fn}(unsigned *layer, unsigned *sample) {{
    return {self.fn_arena}({buffers}, layer, sample);
}}

int {self.fn_arena}({self._arena_params()}, unsigned *layer, unsigned *sample) {{
    uint32_t sample_i;
    int code = {mac["OK"]};
    *layer = 0u;
    *sample = 0u;
    {s["bad"]} = 0;
    {s["open"]} = 0;
    if ({join(p, "st_wrong_build")}) return {mac["WRONG_BUILD"]};
    if ({misaligned}) return {mac["MISALIGNED"]};
    if ({init} != MLI_STATUS_OK) return {mac["INIT_FAILED"]};
#ifdef {self.printf}
    {self.printf}("{HEADER} layers=%u samples=%u %s\\n", {self.layers}u, {self.samples}u,
        {rt.build});
#endif
    for (sample_i = 0u; sample_i < {self.samples}u; sample_i++) {{
        mli_status status;
{input_copies}
        {s["sample"]} = sample_i;
        {s["done"]} = 0u;
        status = {rt.run}();
        {s["finish"]}();
        if (status != MLI_STATUS_OK || {s["done"]} != {self.layers}u) {{
            *layer = {s["done"]};
            *sample = sample_i;
            code = status != MLI_STATUS_OK ? {mac["RUN_FAILED"]} : {mac["NO_HOOK"]};
            break;
        }}
        if ({s["bad"]} && code == {mac["OK"]}) {{
            *layer = {s["bad_layer"]};
            *sample = sample_i;
            code = {mac["CRC_DIFFERS"]};
        }}
#ifndef {self.no_outputs}
        if (code == {mac["OK"]} && {join(p, "st_outputs")}(sample_i, layer)) {{
            *sample = sample_i;
            code = {mac["OUTPUT_DIFFERS"]};
        }}
#endif
    }}
#ifdef {self.printf}
    {self.printf}("selftest: %s (code %d, sample %u, layer %u)\\n", code ? "FAIL" : "ok", code,
        *sample, *layer);
#endif
    return code;
}}
""".encode()
