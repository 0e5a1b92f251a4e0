"""ROM and RAM figures of `mlitool.footprint.memory`, checked independently:
struct sizes and ROM bytes against gcc (-m32, as the 32-bit ARC target lays structs out), the arena
placement against an independent overlap check, a live-bytes lower bound and a brute-force optimum.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlitool.footprint.cstructs import cfg_struct, tensor_struct
from mlitool.footprint.memory import memory_report
from mlitool.mli.memory.arena import Buffer, activation_buffers, plan_arena
from mlitool.mli.target import MLI2, MLI11, target_of
from mlitool.mli.types import ElType, MliLayer, MliModel, MliTensor, Role
from tests.support.paths import mli_cflags, shared_path
from tests.support.report_checks import brute_force_arena


def _gcc_can(flag: str, tmp_path) -> bool:
    if shutil.which("gcc") is None:
        return False
    src = tmp_path / "probe.c"
    src.write_text("#include <stdint.h>\nint32_t x;\n")
    r = subprocess.run(
        ["gcc", flag, "-ffreestanding", "-c", str(src), "-o", str(tmp_path / "p.o")],
        capture_output=True,
    )
    return r.returncode == 0


# --- struct sizes against the compiler ---------------------------------------------------------


@pytest.mark.parametrize("target", ["2.0", "1.1", "1.0"])
@pytest.mark.parametrize("flag,pointer", [("-m32", 4), ("-m64", 8)])
def test_struct_sizes_match_gcc(target, flag, pointer, tmp_path):
    if not _gcc_can(flag, tmp_path):
        pytest.skip(f"gcc {flag} (freestanding) is not available")
    t = target_of(target)
    lines = [
        '#include "mli_api.h"',
        f'_Static_assert(sizeof(mli_tensor) == {tensor_struct(t, pointer).size}, "mli_tensor");',
    ]
    for cfg in t.cfg_structs:
        if cfg == "mli_rnn_dense_cfg" or cfg == "mli_argmax_cfg" and target != "2.0":
            continue
        lines.append(
            f'_Static_assert(sizeof({cfg}) == {cfg_struct(t, cfg, pointer).size}, "{cfg}");'
        )
    src = tmp_path / "sizes.c"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run(
        [
            "gcc",
            flag,
            "-ffreestanding",
            "-std=c11",
            *mli_cflags(target),
            "-c",
            str(src),
            "-o",
            str(tmp_path / "sizes.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def test_documented_target_sizes():
    # the numbers the module docstring documents for the 32-bit ARC target
    assert [tensor_struct(target_of(t)).size for t in ("2.0", "1.1", "1.0")] == [80, 64, 36]
    assert cfg_struct(MLI2, "mli_conv2d_cfg").size == 12
    assert cfg_struct(MLI11, "mli_conv2d_cfg").size == 12
    assert cfg_struct(MLI2, "mli_pool_cfg").size == 8
    assert cfg_struct(MLI2, "mli_concat_cfg").size == 2
    assert cfg_struct(MLI2, "mli_rnn_cell_cfg").size == 20  # 3 enums + a data container


# --- ROM against the object file gcc builds from the emitted C --------------------------------

CASES = [
    ("mlperf_tiny/resnet8_int8.tflite", "sa8", "2.0", "hwc"),
    ("mlperf_tiny/ad01_int8.tflite", "sa8", "1.1", "hwc"),
    ("mlperf_tiny/kws_ref_model_int8.tflite", "fx16", "1.0", "chw"),
    ("mlperf_tiny/kws_ref_model_int8.tflite", "fx8w16d", "2.0", "hwc"),
]


def _symbols(tmp_path, mli_version: str) -> list[tuple[int, str, str]]:
    """(size, nm kind, name) of every sized symbol of tmp_path/net.c compiled as gcc does for a
    32-bit freestanding target (the sizes a board's linker sees)."""
    obj = tmp_path / "net.o"
    cmd = ["gcc", "-m32", "-ffreestanding", "-fno-pic", "-std=c99", *mli_cflags(mli_version)]
    subprocess.run([*cmd, "-c", str(tmp_path / "net.c"), "-o", str(obj)], check=True)
    out = subprocess.run(["nm", "-S", str(obj)], capture_output=True, text=True, check=True)
    rows = (line.split() for line in out.stdout.splitlines())
    return [(int(p[1], 16), p[2], p[3]) for p in rows if len(p) == 4]


def _lowered(rel, fmt, target, layout):
    from mlitool.mli.lower.driver import lower
    from mlitool.tflite.reader import read_model

    path = shared_path("models", rel)
    model = read_model(path)
    return model.main, lower(
        model.main, format=fmt, mli_version=target, layout=layout, source=str(path)
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].split('/')[-1]}-{c[1]}-{c[2]}")
def test_rom_and_struct_ram_equal_compiled_object(case, tmp_path):
    if not _gcc_can("-m32", tmp_path):
        pytest.skip("gcc -m32 (freestanding) is not available")

    from mlitool.emit.writer import emit

    graph, model = _lowered(*case)
    rep = memory_report(model, graph)
    emit(model, tmp_path, "net")
    by_kind: dict[str, int] = {}
    for size, kind, _ in _symbols(tmp_path, model.mli_version):
        by_kind[kind.lower()] = by_kind.get(kind.lower(), 0) + size
    assert rep.rom_total == by_kind.get("r", 0)  # .rodata: all const objects
    assert rep.activation_structs == by_kind.get("d", 0)  # .data: the writable mli_tensors


def test_rom_against_manifest_and_tflite():
    import json
    import tempfile

    from mlitool.emit.writer import emit

    graph, model = _lowered(*CASES[0])
    rep = memory_report(model, graph)
    with tempfile.TemporaryDirectory() as d:
        emit(model, d, "net")
        manifest = json.loads((__import__("pathlib").Path(d) / "net.json").read_text())
    tot = rep.rom_totals()
    assert tot["weights"] == manifest["totals"]["weight_bytes"]
    assert tot["bias"] == manifest["totals"]["bias_bytes"]
    assert tot["params"] + tot["per_axis"] == manifest["totals"]["param_bytes"]
    # the .tflite constants, straight from the IR graph
    consts = [t for t in graph.tensors if t.data is not None]
    assert rep.tflite_weight_bytes == sum(t.data.nbytes for t in consts)
    assert rep.float32_bytes == 4 * sum(
        t.data.size for t in consts if t.quant is not None or t.dtype.startswith("float")
    )
    # resnet8: no activation needs more than conv output + residual + next conv output (16 KiB each)
    assert rep.arena.arena_bytes == rep.arena.lower_bound == 3 * 16384
    assert rep.arena.unshared_bytes == sum(
        t.nbytes for t in model.tensors.values() if not t.role.is_constant and t.buffer is None
    )
    _check_no_overlap(rep.arena)


# --- arena placement ---------------------------------------------------------------------------


def _check_no_overlap(plan) -> None:
    ps = plan.placements
    for a, b in itertools.combinations(ps, 2):
        if a.buffer.first <= b.buffer.last and b.buffer.first <= a.buffer.last:
            assert a.offset + a.buffer.size <= b.offset or b.offset + b.buffer.size <= a.offset, (
                a,
                b,
            )
    for p in ps:
        assert p.offset % plan.align == 0 and p.offset >= 0
        assert p.offset + p.buffer.size <= plan.arena_bytes


def _model_from_spec(sizes, reads, outputs) -> MliModel:
    """A chain of layers: layer i reads tensors `reads[i]` and writes tensor i + 1 (t0 is the
    model input). Element type int8, so a tensor of n elements is n bytes."""
    tensors = {}
    for i, n in enumerate(sizes):
        role = Role.INPUT if i == 0 else Role.OUTPUT if i in outputs else Role.ACTIVATION
        tensors[f"t{i}"] = MliTensor(f"t{i}", role, (n,), ElType.SA8)
    layers = [
        MliLayer(i, "ADD", "eltwise_add", "k", [f"t{j}" for j in r], [f"t{i + 1}"])
        for i, r in enumerate(reads)
    ]
    return MliModel(
        "spec.tflite",
        "2.0",
        "sa8",
        "hwc",
        tensors,
        layers,
        ["t0"],
        [f"t{i}" for i in sorted(outputs)],
    )


def _expected_lifetimes(sizes, reads, outputs):
    end = len(reads) - 1
    out = {}
    for i, n in enumerate(sizes):
        first = 0 if i == 0 else i - 1
        users = [pos for pos, r in enumerate(reads) if i in r]
        last = end if i in outputs else max(users + [first])
        out[f"t{i}"] = (n, first, last)
    return out


@st.composite
def graphs(draw):
    n_layers = draw(st.integers(1, 5))
    sizes = [draw(st.integers(1, 64)) for _ in range(n_layers + 1)]
    reads = []
    for i in range(n_layers):
        k = draw(st.integers(1, min(2, i + 1)))
        reads.append(sorted(draw(st.sets(st.integers(0, i), min_size=k, max_size=k))))
    extra = draw(st.sets(st.integers(1, n_layers), max_size=2))
    return sizes, reads, {n_layers} | extra


@settings(max_examples=150, deadline=None)
@given(graphs(), st.sampled_from([1, 4]))
def test_random_graphs_placement_valid_and_bounded(spec, align):
    sizes, reads, outputs = spec
    model = _model_from_spec(sizes, reads, outputs)
    bufs = activation_buffers(model)
    assert {b.name: (b.size, b.first, b.last) for b in bufs} == _expected_lifetimes(
        sizes, reads, outputs
    )
    plan = plan_arena(bufs, align)
    _check_no_overlap(plan)
    optimum = brute_force_arena(bufs, align)
    assert plan.lower_bound <= optimum <= plan.arena_bytes <= plan.unshared_bytes


@settings(max_examples=150, deadline=None)
@given(graphs(), st.sampled_from([1, 4]))
def test_lower_bound_is_the_peak_of_bytes_alive_at_any_layer(spec, align):
    sizes, reads, outputs = spec
    life = _expected_lifetimes(sizes, reads, outputs).values()
    peak = max(
        sum(-(-n // align) * align for n, first, last in life if first <= t <= last)
        for t in range(len(reads))
    )
    model = _model_from_spec(sizes, reads, outputs)
    assert plan_arena(activation_buffers(model), align).lower_bound == peak


def test_greedy_matches_brute_force_often():
    """How often greedy-by-size reaches the optimum on random graphs of <= 6 buffers."""
    rng = np.random.default_rng(5)
    hits = total = 0
    for _ in range(300):
        n_layers = int(rng.integers(2, 6))
        sizes = [int(s) for s in rng.integers(1, 100, n_layers + 1)]
        reads = [sorted({int(rng.integers(0, i + 1)), i}) for i in range(n_layers)]
        model = _model_from_spec(sizes, reads, {n_layers})
        bufs = activation_buffers(model)
        plan = plan_arena(bufs)
        opt = brute_force_arena(bufs)
        assert plan.lower_bound <= opt <= plan.arena_bytes
        hits += plan.arena_bytes == opt
        total += 1
    print(f"greedy-by-size optimal on {hits}/{total} random graphs")
    assert hits / total >= 0.8


@pytest.mark.parametrize(
    "sizes,reads,outputs,optimum",
    [
        # a chain: the peak is the largest producer/consumer pair
        ([100, 50, 80, 20], [[0], [1], [2]], {3}, 150),
        # a residual block: t1 stays alive across the branch until the add
        ([10, 40, 30, 30, 40], [[0], [1], [2], [1, 3]], {4}, 110),
        # two outputs alive to the end
        ([64, 32, 16, 8], [[0], [1], [2]], {1, 3}, 96),
        # the peak only at the last layer
        ([10, 20, 40], [[0], [1]], {2}, 60),
    ],
)
def test_hand_made_cases_reach_the_optimum(sizes, reads, outputs, optimum):
    model = _model_from_spec(sizes, reads, outputs)
    bufs = activation_buffers(model)
    plan = plan_arena(bufs)
    _check_no_overlap(plan)
    assert plan.lower_bound == optimum == brute_force_arena(bufs) == plan.arena_bytes
    assert plan.unshared_bytes == sum(sizes)


def test_views_count_once_and_extend_the_root_lifetime():
    t = {
        "x": MliTensor("x", Role.INPUT, (4, 4), ElType.SA8),
        "a": MliTensor("a", Role.ACTIVATION, (2, 8), ElType.FX16),
        "v": MliTensor("v", Role.ACTIVATION, (16,), ElType.FX16, buffer="a"),
        "y": MliTensor("y", Role.OUTPUT, (16,), ElType.FX16),
        "w": MliTensor("w", Role.WEIGHTS, (16,), ElType.FX16, data=np.zeros(16, np.int16)),
    }
    layers = [
        MliLayer(0, "CONV_2D", "conv2d", "k", ["x"], ["a"], weights="w"),
        MliLayer(1, "RESHAPE", "view", "", ["a"], ["v"]),
        MliLayer(2, "RELU", "relu", "k", ["v"], ["y"]),
    ]
    model = MliModel("m.tflite", "2.0", "fx16", "hwc", t, layers, ["x"], ["y"])
    bufs = {b.name: b for b in activation_buffers(model)}
    assert set(bufs) == {"x", "a", "y"}
    assert (bufs["a"].size, bufs["a"].first, bufs["a"].last) == (32, 0, 2)
    assert (bufs["x"].first, bufs["x"].last, bufs["y"].first, bufs["y"].last) == (0, 0, 2, 2)
    rep = memory_report(model)
    assert rep.arena.arena_bytes == 64  # a + y at layer 2; x + a at layer 0
    assert rep.activation_structs == 4 * 80 and rep.rom_total == 32 + 80


def test_alignment_rounds_offsets_and_sizes():
    bufs = [Buffer("a", 5, 0, 1), Buffer("b", 3, 1, 2), Buffer("c", 7, 2, 2)]
    plan = plan_arena(bufs, align=8)
    _check_no_overlap(plan)
    assert plan.arena_bytes == 16 and plan.unshared_bytes == 24 and plan.lower_bound == 16


def test_static_ram_equals_the_runtime_scratch_and_the_tables_are_const(tmp_path):
    """The LSTM's scratch array as gcc sizes it is the static RAM; the look-up tables are
    read-only data (nm kind r) and the footprint's ROM `lut_tables` (data + mli_lut each)."""
    if not _gcc_can("-m32", tmp_path):
        pytest.skip("gcc -m32 (freestanding) is not available")
    from mlitool.emit.writer import emit
    from mlitool.footprint.image import lut_table_bytes

    graph, model = _lowered("tflm/mnist_lstm_int8.tflite", "sa8", "2.0", "hwc")
    emit(model, tmp_path, "net", runtime=True)
    symbols = _symbols(tmp_path, "2.0")
    sizes = {name: size for size, _, name in symbols}
    static = sum(v for k, v in sizes.items() if k.endswith("_scratch"))
    assert static == memory_report(model, graph).static_ram == 4 * 20
    tables = [(size, kind) for size, kind, name in symbols if name.endswith(("_lut", "_lut_data"))]
    assert {kind.lower() for _, kind in tables} == {"r"}
    assert (
        sum(size for size, _ in tables) == lut_table_bytes(model) == 2 * (320 + 344 + 358) + 3 * 32
    )
