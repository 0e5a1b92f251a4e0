"""The runtime's API in C: NAME_init's documented statuses, every activation bound inside the
arena at the offsets `report` plans, NAME_input / NAME_output bounds, NAME_run refusing to run
unbound; the single-header form and a C++ build of NAME.c running on the real library."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import numpy as np
import pytest

from mlitool.emit.writer import emit
from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags

UP_OFF = ("UP", "OFF")


def _build_and_run(
    tmp_path,
    sources: list[str],
    build,
    *,
    compiler: str = "gcc",
    std: str = "-std=c99",
    extra: list[str] = (),
) -> str:
    exe = tmp_path / "prog"
    cmd = [
        compiler,
        std,
        *H.STRICT[1:],
        *extra,
        *build.cflags,
        "-I",
        str(tmp_path),
        *[str(tmp_path / s) for s in sources],
        "-x",
        "none",
        "-o",
        str(exe),
        *build.ldflags,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr[-3000:]}"
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


INIT_CHECKS = r"""
#include <stdio.h>
#include "net.h"

static uint64_t words[(NET_ARENA_BYTES + 7u) / 8u + 1u];
static int fails;
#define EXPECT(expr, want) do { long got_ = (long)(expr); if (got_ != (long)(want)) { \
    printf("%s = %ld, expected %ld\n", #expr, got_, (long)(want)); fails++; } } while (0)

static void in_arena(const char *name, const mli_tensor *t, const unsigned char *base) {
    const unsigned char *p = (const unsigned char *)t->data.mem.pi8;
    if (p < base || p + t->data.capacity > base + NET_ARENA_BYTES) {
        printf("%s is not inside the arena\n", name);
        fails++;
    }
}

int main(void) {
    unsigned char *base = (unsigned char *)words;
    EXPECT(NET_ARENA_ALIGN, 2u);                                   /* fx16 activations */
    EXPECT(net_run(), MLI_STATUS_BAD_TENSOR);                       /* before any init */
    EXPECT(net_init(base, NET_ARENA_BYTES - 1u), MLI_STATUS_NOT_ENGH_MEM);
    EXPECT(net_init(base + 1, NET_ARENA_BYTES), MLI_STATUS_MISALIGNMENT_ERROR);
    EXPECT(net_init(NULL, NET_ARENA_BYTES), MLI_STATUS_MISALIGNMENT_ERROR);
    EXPECT(net_run(), MLI_STATUS_BAD_TENSOR);                       /* failed inits bind nothing */
    EXPECT(net_init(base, NET_ARENA_BYTES), MLI_STATUS_OK);
@BOUND@
    EXPECT(net_input(@NIN@) == NULL, 1);
    EXPECT(net_output(@NOUT@) == NULL, 1);
    EXPECT(net_run(), MLI_STATUS_OK);
    EXPECT(net_run(), MLI_STATUS_OK);
    EXPECT(net_init(base, 0u), MLI_STATUS_NOT_ENGH_MEM);            /* a failed init unbinds */
    EXPECT(net_run(), MLI_STATUS_BAD_TENSOR);
    return fails;
}
"""


def test_init_statuses_and_every_activation_in_the_planned_arena(mli_builds, tmp_path):
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "fx16", tmp_path)
    man = conv.manifest
    arena = man["runtime"]["arena"]
    by_name = {t["name"]: t for t in man["tensors"]}
    bound = []
    for b in arena["buffers"]:  # each buffer exactly at its planned offset
        bound.append(
            f"    EXPECT((unsigned char *){b['tensor']}.data.mem.pi8 - base, {b['offset']});"
        )
    for t in man["tensors"]:  # and every activation, views too, inside the arena
        if not t["constant"]:
            bound.append(f'    in_arena("{t["c_name"]}", &{t["c_name"]}, base);')
    for k, name in enumerate(man["inputs"]):
        bound.append(f"    EXPECT(net_input({k}u) == &{name}, 1);")
    for k, name in enumerate(man["outputs"]):
        bound.append(f"    EXPECT(net_output({k}u) == &{name}, 1);")
    assert {b["name"] for b in arena["buffers"]} <= set(by_name)
    src = (
        INIT_CHECKS.replace("@BOUND@", "\n".join(bound))
        .replace("@NIN@", f"{len(man['inputs'])}u")
        .replace("@NOUT@", f"{len(man['outputs'])}u")
    )
    (tmp_path / "checks.c").write_text(src)
    assert _build_and_run(tmp_path, ["net.c", "checks.c"], mli_builds[UP_OFF]) == ""


@pytest.mark.parametrize("model,fmt", [("cnn_int8", "fx16"), ("cnn_int8", "sa8")])
def test_report_plans_the_arena_the_runtime_binds(model, fmt, tmp_path):
    """`mlitool report`'s arena table (the CLI, JSON) is the manifest's runtime arena."""
    import sys

    path = SAMPLES / f"{model}.tflite"
    conv = H.convert(path, fmt, tmp_path)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mlitool",
            "report",
            str(path),
            "--format",
            fmt,
            "--no-accuracy",
            "--json",
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    tables = {t["id"]: t for s in json.loads(r.stdout)["sections"] for t in s["tables"]}
    planned = {row["buffer"]: (row["offset"], row["bytes"]) for row in tables["arena"]["rows"]}
    arena = conv.manifest["runtime"]["arena"]
    assert planned == {b["name"]: (b["offset"], b["bytes"]) for b in arena["buffers"]}
    totals = {row["item"]: row["bytes"] for row in tables["ram-totals"]["rows"]}
    assert totals["arena (shared placement)"] == arena["bytes"]
    header = (tmp_path / "net.h").read_text()
    assert f"#define NET_ARENA_BYTES {arena['bytes']}u" in header


SINGLE = r"""
#include <stdio.h>
#include "one.h"

static uint64_t words[(ONE_ARENA_BYTES + 7u) / 8u + 1u];

int main(void) {
    unsigned i;
    mli_tensor *in, *out;
    if (one_init(words, sizeof words) != MLI_STATUS_OK) return 2;
    in = one_input(0u);
    for (i = 0; i < in->shape[0] * in->shape[1] * in->shape[2]; i++)
        in->data.mem.pi8[i] = (int8_t)(i * 37u);
    if (one_run() != MLI_STATUS_OK) return 3;
    out = one_output(0u);
    for (i = 0; i < out->shape[0]; i++) printf("%d\n", out->data.mem.pi8[i]);
    return 0;
}
"""


@pytest.mark.parametrize("lang", ["c99", "c++20"])
def test_single_header_runtime_runs(lang, mli_builds, tmp_path):
    """--single-header: static API functions in one header, used from one C or C++ file."""
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "sa8", tmp_path / "ref")
    emit(conv.model, tmp_path, "one", single_header=True, runtime=True)
    (tmp_path / "main.c").write_text(SINGLE)
    compiler, std = ("gcc", "-std=c99") if lang == "c99" else ("g++", "-std=c++20")
    extra = ["-x", "c++"] if lang == "c++20" else []
    got = [
        int(v)
        for v in _build_and_run(
            tmp_path, ["main.c"], mli_builds[UP_OFF], compiler=compiler, std=std, extra=extra
        ).split()
    ]
    x = (np.arange(32 * 32 * 3, dtype=np.uint32) * 37 % 256).astype(np.uint8).view(np.int8)
    name = conv.model.inputs[0]
    values = H.executor_values(
        conv.model, {name: x.reshape((1,) + conv.model.tensor(name).shape)}, H.ARITH[UP_OFF]
    )
    assert got == values[conv.model.outputs[0]][0].tolist()


def test_cxx_compiled_network_is_bit_exact(mli_builds, tmp_path):
    """NAME.c compiled as C++20 (C linkage kept), the C driver linked to it, on all builds."""
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "sa8", tmp_path)
    (tmp_path / "driver.c").write_text(H.driver_text(conv))
    hook = f"-D{conv.manifest['runtime']['layer_hook_macro']}=driver_hook"
    objs = [tmp_path / "net.o", tmp_path / "driver.o"]
    cflags = mli_cflags("2.0")
    for cmd in (
        [
            "g++",
            "-std=c++20",
            *H.STRICT[1:],
            "-x",
            "c++",
            hook,
            *cflags,
            "-I",
            str(tmp_path),
            "-c",
            str(tmp_path / "net.c"),
            "-o",
            str(objs[0]),
        ],
        [
            "gcc",
            *H.STRICT,
            *cflags,
            "-I",
            str(tmp_path),
            "-c",
            str(tmp_path / "driver.c"),
            "-o",
            str(objs[1]),
        ],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
    inputs = H.random_inputs(conv.model, 4, 7)
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))


# Tensor names that collide with the runtime's own identifiers (prefix "NET": functions and macros
# share it), try to end a comment, form trigraphs or line continuations, or are not ASCII.
HOSTILE = [
    "input",
    "run",
    "init",
    "ready",
    "output",
    "ARENA_BYTES",
    "LAYER_HOOK",
    "AFTER_LAYER",
    "softmax_lut",
    "softmax_lut_data",
    "*/ int evil; /*",
    "a??/\nb",
    "x\\",
    "\u00e9t\u00e9/\u4e2d\u6587",
    " ",
    "9lives",
    "__reserved",
    "mli_tensor",
    "NULL",
    "input_BYTES",
]


def _renamed(model, names: dict[str, str]):
    def r(n):
        return names.get(n, n)

    tensors = {
        r(k): dataclasses.replace(t, name=r(t.name), buffer=t.buffer and r(t.buffer))
        for k, t in model.tensors.items()
    }
    layers = [
        dataclasses.replace(
            la,
            inputs=[r(n) for n in la.inputs],
            outputs=[r(n) for n in la.outputs],
            weights=la.weights and r(la.weights),
            bias=la.bias and r(la.bias),
            params={k: r(v) for k, v in la.params.items()},
        )
        for la in model.layers
    ]
    return dataclasses.replace(
        model,
        tensors=tensors,
        layers=layers,
        inputs=[r(n) for n in model.inputs],
        outputs=[r(n) for n in model.outputs],
    )


def test_hostile_tensor_names_run_bit_exact(mli_builds, tmp_path):
    """Every tensor of a real model renamed to a hostile name: the runtime still compiles with
    the strict flags (and as C++20) and computes exactly what the executor does."""
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "sa8", tmp_path / "ref")
    model = _renamed(conv.model, dict(zip(conv.model.tensors, HOSTILE)))
    emit(model, tmp_path, "NET", runtime=True)
    man = json.loads((tmp_path / "NET.json").read_text())
    symbols = [t["c_name"] for t in man["tensors"]]
    api = set(man["runtime"]["functions"].values()) | {"NET_ARENA_BYTES", "NET_LAYER_HOOK"}
    assert len(set(symbols)) == len(symbols) and not api & set(symbols)
    hostile = H.Converted(model, conv.graph, "NET", tmp_path, man)
    objs = H.compile_objects(hostile, mli_cflags("2.0"))
    r = subprocess.run(
        [
            "g++",
            "-std=c++20",
            *H.STRICT[1:],
            "-x",
            "c++",
            *mli_cflags("2.0"),
            "-I",
            str(tmp_path),
            "-c",
            str(tmp_path / "NET.c"),
            "-o",
            str(tmp_path / "x.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    H.assert_bit_exact(H.check(hostile, objs, mli_builds, H.random_inputs(model, 4, 11)))
