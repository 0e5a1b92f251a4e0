"""Slices and concatenations as views of one buffer: lowering (hand-computed offsets and strides),
the mli executor against the tflite mode, the emitted C read back through the views by a compiled
probe, the arena counting a view's root once, and the copies (with their reasons) where MLI cannot
address a view."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from mlitool.emit.writer import emit
from mlitool.errors import UnsupportedError
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.walker import run_model
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.mli.memory.arena import activation_buffers
from mlitool.tflite.reader import parse_model, read_model
from tests.support import view_models
from tests.support.paths import ROOT, mli_cflags

SAMPLES = ROOT / "samples" / "ops"
BUILT = {
    "split_concat": view_models.split_concat,
    "slices": view_models.slices,
    "split_reshape": view_models.split_reshape,
}
SAMPLE_NAMES = ["split", "split_v", "slice", "strided_slice", "concatenation"]


def _graph(name: str):
    if name in BUILT:
        return parse_model(BUILT[name](), name).main
    return read_model(SAMPLES / f"{name}.tflite").main


@pytest.fixture(scope="module")
def lowered():
    cache = {}

    def get(name: str):
        if name not in cache:
            g = _graph(name)
            cache[name] = (g, lower(g, source=name))
        return cache[name]

    return get


def _run_both(g, model, seed=0, n=3):
    rng = np.random.default_rng(seed)
    xs = {
        i: rng.integers(-128, 128, size=(n,) + tuple(g.tensors[i].shape), dtype=np.int8)
        for i in g.inputs
    }
    ref = run_graph(g, xs, "tflite", keep=True)
    ins = {
        name: xs[model.tensors[name].source_index].reshape((n,) + model.tensors[name].shape)
        for name in model.inputs
    }
    return ref, run_model(model, ins, Arith(), keep=True)


def _layout(model, name):
    t = model.tensors[name]
    return t.buffer, t.offset, tuple(t.shape), tuple(t.mem_stride)


# --- lowering -----------------------------------------------------------------------------------


def test_split_and_concatenation_lower_to_views(lowered):
    _, m = lowered("split_concat")
    assert [(lay.kind, lay.kernel) for lay in m.layers] == [
        ("relu", "mli_krn_relu_sa8"),
        ("view", ""),
        ("relu", "mli_krn_relu_sa8"),
        ("eltwise_max", "mli_krn_eltwise_max_sa8"),
        ("view", ""),
        ("view", ""),
    ]
    assert m.layers[1].outputs == ["a", "b"] and m.layers[4].inputs == ["d", "c"]
    # r is HWC (4, 4, 8): channel halves start at elements 0 and 4 and keep r's strides.
    assert _layout(m, "a") == ("r", 0, (4, 4, 4), (32, 8, 1))
    assert _layout(m, "b") == ("r", 4, (4, 4, 4), (32, 8, 1))
    # The concatenation output y is one buffer; MAXIMUM and RELU6 write their halves in place.
    assert _layout(m, "d") == ("y", 0, (4, 4, 4), (32, 8, 1))
    assert _layout(m, "c") == ("y", 4, (4, 4, 4), (32, 8, 1))
    assert m.tensors["y"].buffer is None
    # Row halves of y: contiguous blocks of 2 * 4 * 8 elements.
    assert _layout(m, "y0") == ("y", 0, (2, 4, 8), (32, 8, 1))
    assert _layout(m, "y1") == ("y", 64, (2, 4, 8), (32, 8, 1))
    # create_subtensor capacity: the root's bytes minus those skipped.
    assert m.tensors["c"].capacity == 128 - 4 and m.tensors["y1"].capacity == 128 - 64


def test_slices_lower_to_views_or_copies(lowered):
    _, m = lowered("slices")
    # x is (6, 6, 8): SLICE begin (1, 0, 2) -> 1*48 + 2; STRIDED_SLICE begin (2, 0, 4) -> 100.
    assert _layout(m, "s1") == ("x", 50, (3, 6, 4), (48, 8, 1))
    assert _layout(m, "s2") == ("x", 100, (3, 6, 4), (48, 8, 1))
    assert _layout(m, "p0") == ("x", 0, (2, 6, 8), (48, 8, 1))
    assert _layout(m, "p1") == ("x", 96, (3, 6, 8), (48, 8, 1))
    assert _layout(m, "p2") == ("x", 240, (1, 6, 8), (48, 8, 1))
    assert _layout(m, "row") == ("x", 96, (6, 8), (8, 1))  # shrunk leading axis
    by_out = {lay.outputs[0]: lay for lay in m.layers}
    sub = by_out["sub"]
    assert (sub.kind, sub.kernel, sub.cfg_type) == ("copy", "mli_mov_tensor_sync", "mli_mov_cfg_t")
    assert sub.cfg["offset"][:3] == [0, 0, 0] and sub.cfg["sub_sample_step"][:3] == [2, 1, 1]
    assert sub.cfg["size"][:3] == [5, 6, 8]  # source extent: (3 - 1) * 2 + 1 rows
    assert "cannot skip elements" in sub.notes[0]
    col = by_out["col_box"]
    assert col.kind == "copy" and col.cfg["offset"][:3] == [0, 3, 0]
    assert "model outputs are dense" in col.notes[0]
    assert by_out["col"].kind == "view" and m.tensors["col"].buffer == "col_box"


def test_strided_piece_feeding_a_reshape_is_copied(lowered):
    _, m = lowered("split_reshape")
    kinds = {lay.outputs[0]: lay for lay in m.layers}
    assert kinds["a"].kind == "copy" and "RESHAPE" in kinds["a"].notes[0]
    assert "contiguous input" in kinds["a"].notes[0]
    assert m.tensors["a"].buffer is None and m.tensors["b"].buffer == "r"
    assert m.tensors["flat"].buffer == "a"


def test_concatenation_of_model_inputs_copies_into_slices(lowered):
    _, m = lowered("concatenation")
    copies = [lay for lay in m.layers if lay.kind == "copy"]
    assert [c.inputs for c in copies] == [["a"], ["b"]]
    assert all("model input" in c.notes[0] for c in copies)
    parts = [m.tensors[c.outputs[0]] for c in copies]
    assert [(p.buffer, p.offset, p.mem_stride) for p in parts] == [
        ("Identity", 0, (48, 12, 1)),
        ("Identity", 8, (48, 12, 1)),
    ]
    assert m.layers[-1].kind == "view" and m.layers[-1].outputs == ["Identity"]


def test_requantized_concatenation_input_is_written_in_place():
    g = read_model(SAMPLES / "concatenation_requant.tflite").main
    m = lower(g)
    convert = next(lay for lay in m.layers if lay.op_type == "QUANTIZE")
    out = m.tensors[convert.outputs[0]]
    assert (out.buffer, out.offset) == (m.outputs[0], 0)  # QUANTIZE writes into the output
    assert any("written in place" in n for n in m.layers[-1].notes)
    assert any("model input" in n for n in m.layers[-1].notes)


def test_mli1_channel_split_is_contiguous_in_chw_and_refused_in_hwc():
    g = read_model(SAMPLES / "split.tflite").main
    m = lower(g, mli_version="1.1", layout="chw", format="fx16")
    assert [(lay.kind, lay.outputs) for lay in m.layers] == [("view", ["Identity", "Identity_1"])]
    assert [(m.tensors[n].offset, m.tensors[n].mem_stride) for n in m.layers[0].outputs] == [
        (0, (16, 4, 1)),
        (64, (16, 4, 1)),
    ]
    with pytest.raises(UnsupportedError, match="no copy kernel"):
        lower(g, mli_version="1.1", layout="hwc", format="fx16")


def test_non_positive_strided_slice_step_is_unsupported():
    from mlitool.mli.lower.support import unsupported_ops
    from mlitool.mli.views import strided_slice_box

    with pytest.raises(UnsupportedError, match="stride -1"):
        strided_slice_box((1, 4), [0, 3], [1, 0], [1, -1], {})
    assert unsupported_ops(_graph("slices")) == []


# --- executor -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["split_concat", "slices", "split_reshape"] + SAMPLE_NAMES)
def test_executor_views_equal_tflite_mode(name, lowered):
    g, m = lowered(name)
    ref, got = _run_both(g, m)
    checked = 0
    for key, t in m.tensors.items():
        if key in got and t.source_index in ref:
            want = ref[t.source_index].reshape(got[key].shape)
            np.testing.assert_array_equal(got[key], want, err_msg=key)
            checked += 1
    assert checked >= len(m.outputs) + len(m.inputs)


def test_executor_requantized_concatenation_assembles_its_slices():
    g = read_model(SAMPLES / "concatenation_requant.tflite").main
    m = lower(g)
    ref, got = _run_both(g, m)
    out = got[m.outputs[0]]
    convert = next(lay for lay in m.layers if lay.op_type == "QUANTIZE")
    np.testing.assert_array_equal(out[..., :8], got[convert.outputs[0]])
    b = next(i for i in g.inputs if g.tensors[i].shape[-1] == 4)
    np.testing.assert_array_equal(out[..., 8:], ref[b].reshape(out[..., 8:].shape))


# --- emitted C ----------------------------------------------------------------------------------

_PROBE = r"""
#include <stdio.h>
#include <stdint.h>
#include "net.h"
%(buffers)s
static void show(const char *name, const mli_tensor *t) {
    uint32_t n[4] = {1u, 1u, 1u, 1u}, i, j, k, l;
    int32_t s[4] = {0, 0, 0, 0};
    for (i = 0u; i < t->rank; ++i) { n[i] = t->shape[i]; s[i] = t->mem_stride[i]; }
    printf("%%s", name);
    for (i = 0u; i < n[0]; ++i) for (j = 0u; j < n[1]; ++j) for (k = 0u; k < n[2]; ++k)
        for (l = 0u; l < n[3]; ++l)
            printf(" %%d", (int)t->data.mem.pi8[(int32_t)i * s[0] + (int32_t)j * s[1]
                                               + (int32_t)k * s[2] + (int32_t)l * s[3]]);
    printf("\n");
}
int main(void) {
%(sets)s
    %(bind)s();
%(shows)s
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc not installed")
@pytest.mark.parametrize("name", ["split_concat", "slices"])
def test_emitted_c_reads_the_executor_values_through_the_views(name, lowered, tmp_path):
    g, m = lowered(name)
    _, got = _run_both(g, m, n=1)
    emit(m, tmp_path, "net")
    manifest = json.loads((tmp_path / "net.json").read_text())
    tensors = {t["name"]: t for t in manifest["tensors"]}
    owners = [t for t in manifest["tensors"] if not t["constant"] and t["view_of"] is None]
    views = [t for t in manifest["tensors"] if t["view_of"] is not None]
    assert views
    buffers, sets = [], []
    for t in owners:  # each buffer holds the executor's values of its tensor, row-major
        vals = ", ".join(str(int(v)) for v in got[t["name"]].reshape(-1))
        buffers.append(f"static int8_t buf_{t['c_name']}[{t['bytes']}] = {{ {vals} }};")
        sets.append(f"    {t['c_name']}.data.mem.pi8 = buf_{t['c_name']};")
    shows = [f'    show("{t["name"]}", &{t["c_name"]});' for t in views]
    (tmp_path / "probe.c").write_text(
        _PROBE
        % {
            "buffers": "\n".join(buffers),
            "sets": "\n".join(sets),
            "bind": manifest["model"]["bind_views"],
            "shows": "\n".join(shows),
        }
    )
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *mli_cflags("2.0"), "-I", "."]
    for cmd in (
        ["gcc", *flags, "-c", "net.c", "-o", "net.o"],
        ["gcc", *flags, "probe.c", "net.o", "-o", "probe"],
    ):
        res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert len(lines) == len(views)
    for line, t in zip(lines, views):
        name, *vals = line.split()
        assert name == t["name"]
        np.testing.assert_array_equal(
            np.array(vals, dtype=int), got[name].reshape(-1), err_msg=name
        )
    # The manifest names each view's root buffer and element offset.
    for t in views:
        mt = m.tensors[t["name"]]
        assert tensors[mt.buffer]["c_name"] == t["view_of"] and t["view_offset"] == mt.offset


def test_arena_counts_a_view_root_once(lowered):
    _, m = lowered("split_concat")
    bufs = activation_buffers(m)
    assert sorted(b.name for b in bufs) == ["r", "x", "y"]
    assert all(b.size == 128 for b in bufs)  # (4, 4, 8) int8 each
    y = next(b for b in bufs if b.name == "y")
    # y is first written by RELU6 (layer 2, its slice c) and read until the end (outputs).
    assert (y.first, y.last) == (2, len(m.layers) - 1)
