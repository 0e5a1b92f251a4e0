"""Runs the emitted runtime on the real MLI library and compares it with the `mli` executor.

One model case: convert in-process (as `mlitool convert`), compile NAME.c once with the strict
flags and a driver that defines the layer hook, link it against each MLI build, feed all inputs
in one driver run per build (a binary file of N samples) and read back every hook call (layer
position, output bytes) and every model output. The expected values come from the executor
(`run_model`, the function behind `mlitool run --mode mli`) with the build's round/accu.

A `--fast-memory` conversion gets the two-buffer NAME_init (each buffer exactly NAME_FAST_BYTES /
NAME_SLOW_BYTES long); `wrap_kernels` adds link-time wrappers (`-Wl,--wrap=`) around every
mli_krn_* the model calls that log each call's operand addresses relative to the fast buffer
(`operand_records`).
"""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlitool import ir
from mlitool.emit.writer import emit
from mlitool.execute.mli.bridge import model_inputs
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.walker import run_model
from mlitool.mli.specialize import specialize as specialize_kernels
from mlitool.mli.types import ElType, MliModel
from mlitool.pipeline import ModelOptions, load, settle

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
OUTPUT_TAG = 0x80000000
ARITH = {
    ("UP", "OFF"): Arith("up", False),
    ("UP", "ON"): Arith("up", True),
    ("CONVERGENT", "OFF"): Arith("convergent", False),
    ("CONVERGENT", "ON"): Arith("convergent", True),
}

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "@NAME@.h"

static FILE *out_file;
static unsigned last_layer = 0xFFFFFFFFu;
static uint64_t arena[(@ARENA@ + 7u) / 8u + 1u];

static void put_u32(uint32_t v) {
    unsigned char b[4];
    b[0] = (unsigned char)v; b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16); b[3] = (unsigned char)(v >> 24);
    fwrite(b, 1, 4, out_file);
}

/* The tensor's elements in row-major order, read through its mem_stride. */
static void dump(uint32_t tag, const mli_tensor *t) {
    uint32_t el = mli_hlp_tensor_element_size(t), shape[4] = {1u, 1u, 1u, 1u}, n = el, d, a, b, c, e;
    int32_t stride[4] = {0, 0, 0, 0};
    const unsigned char *p = (const unsigned char *)t->data.mem.pi8;
    for (d = 0; d < t->rank; d++) {
        shape[4u - t->rank + d] = t->shape[d];
        stride[4u - t->rank + d] = t->mem_stride[d];
        n *= t->shape[d];
    }
    put_u32(tag);
    put_u32(n);
    for (a = 0; a < shape[0]; a++)
        for (b = 0; b < shape[1]; b++)
            for (c = 0; c < shape[2]; c++) {
                const unsigned char *row = p + (a * stride[0] + b * stride[1] + c * stride[2]) * (int32_t)el;
                if (stride[3] == 1) {
                    fwrite(row, el, shape[3], out_file);
                } else {
                    for (e = 0; e < shape[3]; e++) fwrite(row + e * stride[3] * (int32_t)el, el, 1, out_file);
                }
            }
}

void driver_hook(unsigned layer, const mli_tensor *output) {
    last_layer = layer;
    dump(layer, output);
}

int main(int argc, char **argv) {
    FILE *in;
    long n, s;
    unsigned i;
    mli_status status;
    if (argc != 4) return 1;
    in = fopen(argv[1], "rb");
    out_file = fopen(argv[2], "wb");
    n = strtol(argv[3], NULL, 10);
    if (in == NULL || out_file == NULL) return 1;
    status = @INIT@(arena, sizeof arena);
    if (status != MLI_STATUS_OK) {
        fprintf(stderr, "init: status %d\n", (int)status);
        return 2;
    }
    for (s = 0; s < n; s++) {
        for (i = 0; i < @NUM_INPUTS@; i++) {
            mli_tensor *t = @INPUT@(i);
            size_t bytes = mli_hlp_count_elem_num(t, 0) * mli_hlp_tensor_element_size(t);
            if (fread(t->data.mem.pi8, 1, bytes, in) != bytes) return 1;
        }
        last_layer = 0xFFFFFFFFu;
        status = @RUN@();
        if (status != MLI_STATUS_OK) {
            fprintf(stderr, "sample %ld: status %d in the layer after %u\n", s, (int)status, last_layer);
            return 3;
        }
        for (i = 0; i < @NUM_OUTPUTS@; i++) dump(0x80000000u | i, @OUTPUT@(i));
    }
    fclose(out_file);
    return 0;
}
"""


@dataclass
class Converted:
    model: MliModel
    graph: ir.Graph
    name: str
    out: Path
    manifest: dict


def convert(
    model_path: Path,
    fmt: str,
    out: Path,
    *,
    calibration: Path | None = None,
    mli_version: str = "2.0",
    layout: str | None = None,
    name: str = "net",
    overrides: dict | None = None,
    fast_memory: int | None = None,
    specialize: bool = True,
) -> Converted:
    """`mlitool convert` in-process (the same pipeline and emitter); `overrides`: per-layer
    formats as a config's [[tool.mlitool.layer]] entries give them; `specialize`: the
    kernel-size specializations convert calls by default (False: --no-specialize)."""
    opts = ModelOptions(
        format=fmt,
        mli=mli_version,
        layout=layout,
        calibration=calibration,
        overrides=overrides or {},
    )
    graph, model = load(model_path, settle(opts))
    if specialize:
        model = specialize_kernels(model)
    out.mkdir(parents=True, exist_ok=True)
    emit(
        model,
        out,
        name,
        runtime=True,
        verified_build="ROUND_MODE=UP FULL_ACCU=OFF",
        fast_memory=fast_memory,
    )
    return Converted(model, graph, name, out, json.loads((out / f"{name}.json").read_text()))


# The fast-memory driver: each buffer exactly as long as the header asks for; the wrappers see
# where the fast one starts.
FAST_ARENAS = r"""
static uint64_t fast_arena[(@FAST@ + 7u) / 8u + 1u];
static uint64_t slow_arena[(@SLOW@ + 7u) / 8u + 1u];
const unsigned char *driver_fast = (const unsigned char *)fast_arena;
FILE *wrap_log;
"""
FAST_INIT = "status = @INIT@(fast_arena, @FAST@, @SLOW@ ? (void *)slow_arena : NULL, @SLOW@);"


def driver_text(conv: Converted) -> str:
    rt = conv.manifest["runtime"]
    text = DRIVER
    if "fast_memory" in rt:
        macros = rt["fast_memory"]["macros"]
        text = text.replace("static uint64_t arena[(@ARENA@ + 7u) / 8u + 1u];", FAST_ARENAS)
        text = text.replace("status = @INIT@(arena, sizeof arena);", FAST_INIT)
        text = text.replace("@FAST@", macros["fast_bytes"]).replace("@SLOW@", macros["slow_bytes"])
        text = text.replace(
            "if (argc != 4) return 1;",
            'if (argc < 4) return 1;\n    if (argc > 4) wrap_log = fopen(argv[4], "w");',
        )
    for key, value in (
        ("@NAME@", conv.name),
        ("@ARENA@", str(rt["arena"]["bytes"]) if "arena" in rt else "0"),
        ("@INIT@", rt["functions"]["init"]),
        ("@RUN@", rt["functions"]["run"]),
        ("@INPUT@", rt["functions"]["input"]),
        ("@OUTPUT@", rt["functions"]["output"]),
        ("@NUM_INPUTS@", f"{len(conv.model.inputs)}u"),
        ("@NUM_OUTPUTS@", f"{len(conv.model.outputs)}u"),
    ):
        text = text.replace(key, value)
    return text


def _cc(args: list[str]) -> None:
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(args)}\n{r.stderr[-4000:]}"


def compile_objects(conv: Converted, cflags: list[str]) -> list[Path]:
    """NAME.o (strict flags, hook enabled) and driver.o; compiled once, linked per build."""
    hook = f"-D{conv.manifest['runtime']['layer_hook_macro']}=driver_hook"
    (conv.out / "driver.c").write_text(driver_text(conv))
    objs = [conv.out / f"{conv.name}.o", conv.out / "driver.o"]
    with ThreadPoolExecutor(2) as pool:
        list(
            pool.map(
                _cc,
                [
                    [
                        "gcc",
                        *STRICT,
                        "-O1",
                        hook,
                        *cflags,
                        "-I",
                        str(conv.out),
                        "-c",
                        str(conv.out / f"{conv.name}.c"),
                        "-o",
                        str(objs[0]),
                    ],
                    [
                        "gcc",
                        *STRICT,
                        "-O1",
                        *cflags,
                        "-I",
                        str(conv.out),
                        "-c",
                        str(conv.out / "driver.c"),
                        "-o",
                        str(objs[1]),
                    ],
                ],
            )
        )
    return objs


def link(objs: list[Path], build, exe: Path, flags: tuple[str, ...] = ()) -> Path:
    _cc(["gcc", *map(str, objs), "-o", str(exe), *flags, *build.ldflags])
    return exe


_PROTOTYPE = re.compile(r"mli_status\s+(mli_krn_\w+)\s*\(([^;]*?)\)\s*;")


def kernel_prototypes(api_header: Path) -> dict[str, list[tuple[str, str]]]:
    """Every mli_krn_* of the MLI kernels header: name -> [(parameter type, name)]."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", api_header.read_text(), flags=re.S)
    out = {}
    for name, params in _PROTOTYPE.findall(text):
        pairs = []
        for param in params.split(","):
            m = re.fullmatch(r"(.*?)(\w+)", " ".join(param.split()))
            pairs.append((m.group(1).strip(), m.group(2)))
        out[name] = pairs
    return out


WRAP_HEAD = r"""
#include <stdio.h>
#include "mli_api.h"
extern const unsigned char *driver_fast;
extern FILE *wrap_log;

/* One line per operand: kernel, argument position, offset from the fast buffer, bytes. */
static void wrap_operand(const char *fn, int arg, const void *p, unsigned long bytes) {
    if (wrap_log != NULL)
        fprintf(wrap_log, "%s %d %ld %lu\n", fn, arg,
                (long)((const unsigned char *)p - driver_fast), bytes);
}
"""


def wrap_source(kernels: list[str], api_header: Path) -> str:
    """C wrappers (`__wrap_<kernel>`) that log every tensor and table operand, then call the
    real kernel; link with `-Wl,--wrap=<kernel>` for each."""
    protos, parts = kernel_prototypes(api_header), [WRAP_HEAD]
    for fn in kernels:
        params = protos[fn]
        decl = ", ".join(f"{t} {n}" for t, n in params)
        logs = []
        for k, (t, n) in enumerate(params):
            if "mli_tensor" in t and "**" not in t:  # rank 0: the value is in the struct
                logs.append(
                    f'    if ({n}->rank != 0u) wrap_operand("{fn}", {k}, {n}->data.mem.pi8, '
                    f"{n}->data.capacity);"
                )
            elif "mli_lut" in t:
                logs.append(
                    f'    wrap_operand("{fn}", {k}, {n}->data.mem.pi16, {n}->data.capacity);'
                )
        parts += [
            f"mli_status __real_{fn}({decl});",
            f"mli_status __wrap_{fn}({decl});",
            f"mli_status __wrap_{fn}({decl}) {{",
            *logs,
            f"    return __real_{fn}({', '.join(n for _, n in params)});",
            "}",
        ]
    return "\n".join(parts) + "\n"


def compile_wrappers(conv: Converted, cflags: list[str], api_header: Path) -> tuple[Path, tuple]:
    """wrap.o for the model's mli_krn_* kernels and the link flags that route calls to it."""
    kernels = sorted({la.kernel for la in conv.model.layers if la.kernel.startswith("mli_krn_")})
    src, obj = conv.out / "wrap.c", conv.out / "wrap.o"
    src.write_text(wrap_source(kernels, api_header))
    _cc(["gcc", *STRICT, "-O1", *cflags, "-c", str(src), "-o", str(obj)])
    return obj, tuple(f"-Wl,--wrap={k}" for k in kernels)


def operand_records(text: str) -> list[tuple[str, int, int, int]]:
    """(kernel, argument, offset from the fast buffer, bytes) per line of the wrappers' log."""
    out = []
    for line in text.splitlines():
        fn, arg, offset, size = line.split()
        out.append((fn, int(arg), int(offset), int(size)))
    return out


def random_inputs(model: MliModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """n samples over every level of each input's container (FP32: uniform in [-1, 1])."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in model.inputs:
        t = model.tensor(name)
        shape = (n,) + t.shape
        if t.el_type == ElType.FP32:
            out[name] = rng.uniform(-1, 1, shape).astype(np.float32)
        else:
            info = np.iinfo(t.el_type.dtype)
            out[name] = rng.integers(info.min, info.max, shape, endpoint=True).astype(
                t.el_type.dtype
            )
    return out


def real_inputs(conv: Converted, batch: np.ndarray) -> dict[str, np.ndarray]:
    """A batch of the model's own first input (real floats or its integers) as MLI containers,
    converted as `mlitool run` converts them."""
    return model_inputs(conv.graph, conv.model, {0: batch})


def join_inputs(*batches: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


def write_inputs(model: MliModel, inputs: dict[str, np.ndarray], path: Path) -> int:
    n = next(iter(inputs.values())).shape[0]
    with open(path, "wb") as f:
        for s in range(n):
            for name in model.inputs:
                t = model.tensor(name)
                f.write(
                    np.ascontiguousarray(
                        inputs[name][s], dtype=t.el_type.dtype.newbyteorder("<")
                    ).tobytes()
                )
    return n


def run_driver(exe: Path, inputs: Path, n: int, out: Path, *extra: str) -> bytes:
    r = subprocess.run(
        [str(exe), str(inputs), str(out), str(n), *extra], capture_output=True, text=True
    )
    assert r.returncode == 0, f"{exe.name}: exit {r.returncode}: {r.stderr.strip()}"
    return out.read_bytes()


def records(data: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    while pos < len(data):
        tag, size = np.frombuffer(data, "<u4", 2, pos).tolist()
        out.append((tag, data[pos + 8 : pos + 8 + size]))
        pos += 8 + size
    return out


@dataclass
class Comparison:
    elements: int = 0
    differing: int = 0
    first_failure: str | None = None
    operand_log: str = ""  # the kernel wrappers' log (`check(wrap=...)`)


def compare(model: MliModel, values: dict[str, np.ndarray], data: bytes, n: int) -> Comparison:
    """Every hook record and model output against the executor's values, sample by sample."""
    expected = []
    for s in range(n):
        for pos, layer in enumerate(model.layers):
            expected += [(pos, name, s) for name in layer.outputs]
        expected += [(OUTPUT_TAG | k, name, s) for k, name in enumerate(model.outputs)]
    got = records(data)
    assert [tag for tag, _ in got] == [tag for tag, _, _ in expected], "hook call sequence differs"
    result = Comparison()
    for (tag, raw), (_, name, s) in zip(got, expected):
        t = model.tensor(name)
        want = np.asarray(values[name][s], dtype=t.el_type.dtype).reshape(-1)
        have = np.frombuffer(raw, dtype=t.el_type.dtype.newbyteorder("<"))
        assert have.size == want.size, f"{name}: {have.size} elements, expected {want.size}"
        bad = int(np.count_nonzero(have != want))
        result.elements += want.size
        result.differing += bad
        if bad and result.first_failure is None:
            where = f"layer {tag}" if tag < OUTPUT_TAG else f"output {tag & ~OUTPUT_TAG}"
            result.first_failure = (
                f"sample {s}, {where} ({model.layers[tag].kind if tag < OUTPUT_TAG else 'model output'}) "
                f"tensor {name!r}: {bad} of {want.size} elements differ"
            )
    return result


def executor_values(
    model: MliModel, inputs: dict[str, np.ndarray], arith: Arith
) -> dict[str, np.ndarray]:
    return run_model(model, inputs, arith, keep=True)


def run_case(
    path: Path,
    fmt: str,
    out: Path,
    builds: dict,
    cflags: list[str],
    *,
    calibration: Path | None = None,
    real: np.ndarray | None = None,
    samples: int = 16,
    seed: int = 0,
) -> dict[tuple[str, str], Comparison]:
    """Convert, compile once, and check `samples` seeded random inputs, then the `real` batch
    (the model's own representation), then the first input again (repeated runs must not drift)."""
    conv = convert(path, fmt, out, calibration=calibration)
    objs = compile_objects(conv, cflags)
    batches = [random_inputs(conv.model, samples, seed)]
    if real is not None:
        batches.append(real_inputs(conv, real))
    inputs = join_inputs(*batches)
    inputs = {k: np.concatenate([v, v[:1]]) for k, v in inputs.items()}
    return check(conv, objs, builds, inputs)


def assert_bit_exact(results: dict[tuple[str, str], Comparison]) -> None:
    failures = {f"{r}/{a}": c.first_failure for (r, a), c in results.items() if c.differing}
    assert not failures, failures
    assert results and all(c.elements > 0 for c in results.values())


def check(
    conv: Converted,
    objs: list[Path],
    builds: dict,
    inputs: dict[str, np.ndarray],
    wrap: tuple[Path, tuple] | None = None,
) -> dict[tuple[str, str], Comparison]:
    """Link against every build and run all inputs through each (two drivers at a time), while
    the executor computes the same inputs with each build's arithmetic; compare. `wrap`: the
    kernel wrappers (`compile_wrappers`), linked in and their log kept."""
    n = write_inputs(conv.model, inputs, conv.out / "inputs.bin")
    extra_objs, flags = ([wrap[0]], wrap[1]) if wrap else ([], ())

    def run(key):
        exe = link([*objs, *extra_objs], builds[key], conv.out / f"net_{key[0]}_{key[1]}", flags)
        log = conv.out / f"operands_{key[0]}_{key[1]}.txt"
        out = conv.out / f"out_{key[0]}_{key[1]}.bin"
        data = run_driver(exe, conv.out / "inputs.bin", n, out, *([str(log)] if wrap else []))
        return data, log.read_text() if wrap else ""

    results = {}
    with ThreadPoolExecutor(2) as pool:
        outputs = {key: pool.submit(run, key) for key in builds}
        for key in builds:
            values = executor_values(conv.model, inputs, ARITH[key])
            data, log = outputs[key].result()
            results[key] = compare(conv.model, values, data, n)
            results[key].operand_log = log
    return results
