"""NAME_run on the real MLI 2.0.2 library when a kernel fails: it returns that kernel's status at
once (no later layer runs, the layer hook is not called again), and runs normally once the
tensor is repaired. A layer writing several tensors (a SPLIT into views) calls the hook once
per output.

The failure is real: the driver sets a tensor's data.capacity to 0 (through the layer hook, or
before NAME_run), so the next kernel reading it fails MLI's own tensor check with
MLI_STATUS_NOT_ENGH_MEM (5 in mli_types.h; the test builds use DBG_MODE_RET_CODES)."""

from __future__ import annotations

import subprocess

import numpy as np

from mlitool.pipeline import ModelOptions, load, settle
from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags
from tests.support.tflite_build import T, graph_model, options, single_op_model

UP_OFF = ("UP", "OFF")
NOT_ENGH_MEM = 5  # MLI_STATUS_NOT_ENGH_MEM in include/mli_types.h

DRIVER = r"""
#include <stdio.h>
#include "net.h"

static uint64_t arena[(NET_ARENA_BYTES + 7u) / 8u + 1u];
static unsigned armed = 1u, seen[256], n_seen;
static mli_tensor *victim;
static uint32_t saved;

/* The next kernel reading t fails MLI's capacity check. */
static void corrupt(mli_tensor *t) {
    victim = t;
    saved = t->data.capacity;
    t->data.capacity = 0u;
    armed = 0u;
}

void hook(unsigned layer, const mli_tensor *output) {
    if (n_seen < 256u) seen[n_seen++] = layer;
    /* the runtime's tensors are not const objects: only the hook's pointer is */
    if (armed && layer == @AFTER@) corrupt((mli_tensor *)output);
}

static void run_and_print(void) {
    unsigned i;
    mli_status status;
    n_seen = 0u;
    status = net_run();
    printf("%d", (int)status);
    for (i = 0; i < n_seen; i++) printf(" %u", seen[i]);
    printf("\n");
}

int main(void) {
    if (net_init(arena, sizeof arena) != MLI_STATUS_OK) return 2;
    printf("%d\n", (int)MLI_STATUS_NOT_ENGH_MEM);
    @BEFORE@
    run_and_print();
    if (victim != NULL) victim->data.capacity = saved;
    run_and_print();
    return 0;
}
"""


def _runs(conv: H.Converted, build, after: int = -1, before: str = "") -> tuple[int, list]:
    """(MLI_STATUS_NOT_ENGH_MEM, [(status, hook layers) of the corrupted run, of the repaired
    one]); `after`: corrupt that layer's output from the hook; `before`: a C tensor name to
    corrupt before NAME_run."""
    out = conv.out
    src = DRIVER.replace("@AFTER@", f"{after}u" if after >= 0 else "0xFFFFFFFFu")
    src = src.replace("@BEFORE@", f"corrupt(&{before});" if before else "")
    (out / "driver.c").write_text(src)
    hook = f"-D{conv.manifest['runtime']['layer_hook_macro']}=hook"
    exe = out / "prog"
    cmd = [
        "gcc",
        *H.STRICT,
        hook,
        *build.cflags,
        "-I",
        str(out),
        str(out / "net.c"),
        str(out / "driver.c"),
        "-o",
        str(exe),
        *build.ldflags,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    first, *runs = r.stdout.splitlines()
    parsed = [(int(s), [int(x) for x in rest]) for s, *rest in (line.split() for line in runs)]
    return int(first), parsed


def test_a_failing_kernel_stops_the_run_with_its_status(mli_builds, tmp_path):
    """cnn_int8 (9 layers, one kernel call each): the output of layer 4 (the residual add)
    loses its capacity from the hook, so layer 5 (conv2d reading it) fails."""
    conv = H.convert(SAMPLES / "cnn_int8.tflite", "sa8", tmp_path)
    assert [la.kind for la in conv.model.layers[4:6]] == ["eltwise_add", "conv2d"]
    assert conv.model.layers[5].inputs == conv.model.layers[4].outputs
    named, (failed, repaired) = _runs(conv, mli_builds[UP_OFF], after=4)
    assert named == NOT_ENGH_MEM
    assert failed == (NOT_ENGH_MEM, [0, 1, 2, 3, 4])  # layers 5..8 never ran
    assert repaired == (0, list(range(9)))


def test_a_failing_call_in_a_slice_loop_stops_the_run(mli_builds, tmp_path):
    """A broadcast MUL runs as one kernel call per slice (`_slice_calls`); its input view
    failing the check stops the loop at the first call: the status comes back and the layer's
    hook is not called."""
    path = tmp_path / "se.tflite"
    path.write_bytes(
        single_op_model(
            "MUL",
            [
                T([1, 4, 5, 6], scale=[0.05], zero_point=[3]),
                T([1, 1, 1, 6], scale=[0.08], zero_point=[-5]),
            ],
            [T([1, 4, 5, 6], scale=[0.1], zero_point=[-2])],
            options("MulOptions"),
        )
    )
    conv = H.convert(path, "sa8", tmp_path / "out")
    (layer,) = conv.model.layers
    assert layer.calls is not None
    by_name = {t["name"]: t["c_name"] for t in conv.manifest["tensors"]}
    view = by_name[layer.calls.views[0]]
    named, (failed, repaired) = _runs(conv, mli_builds[UP_OFF], before=view)
    assert failed == (named, []) and named == NOT_ENGH_MEM
    assert repaired == (0, [0])


def _split_model(tmp_path):
    """SPLIT of [1,4,4,8] on axis 1 into two contiguous views, added together."""
    q = {"scale": [0.05], "zero_point": [3]}
    tensors = [
        T([1, 4, 4, 8], **q, name="x"),
        T([], "int32", data=np.array(1, np.int32)),
        T([1, 2, 4, 8], **q, name="a"),
        T([1, 2, 4, 8], **q, name="b"),
        T([1, 2, 4, 8], scale=[0.1], zero_point=[-2], name="y"),
    ]
    ops = [
        ("SPLIT", [1, 0], [2, 3], options("SplitOptions", numSplits=2)),
        ("ADD", [2, 3], [4], options("AddOptions")),
    ]
    path = tmp_path / "split.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return path


def test_the_hook_sees_every_output_of_a_layer(mli_builds, tmp_path):
    """The SPLIT is one view layer writing `a` and `b`: the hook is called for both (the
    harness checks the call sequence layer by layer, output by output, and each tensor's
    bytes against the executor)."""
    path = _split_model(tmp_path)
    for fmt in ("sa8", "fx16"):
        _, model = load(path, settle(ModelOptions(format=fmt)))
        assert [(la.kind, la.outputs) for la in model.layers] == [
            ("view", ["a", "b"]),
            ("eltwise_add", ["y"]),
        ]
        results = H.run_case(path, fmt, tmp_path / fmt, mli_builds, mli_cflags("2.0"), samples=4)
        H.assert_bit_exact(results)
        # per sample: layer 0 twice (a, b), layer 1 once (y)
        n = 4 + 1
        data = (tmp_path / fmt / "out_UP_OFF.bin").read_bytes()
        tags = [tag for tag, _ in H.records(data)]
        assert tags == [0, 0, 1, H.OUTPUT_TAG] * n
