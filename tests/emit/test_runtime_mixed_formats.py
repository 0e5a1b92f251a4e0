"""A model whose activations mix int8 and int16 (a per-layer fx16 override in an sa8 model):
the arena is aligned to the largest element, every buffer sits at a multiple of its own element
size, and the runtime runs bit-exact on the real MLI 2.0.2 library."""

from __future__ import annotations

from mlitool.mli.memory.arena import model_arena
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def _model(tmp_path):
    """x [1,5,5,3] -> global AVERAGE_POOL_2D (op 0, fx16) -> p; MUL(x, p) broadcast (op 1, sa8).
    x (read by both ops, so lowered as fx16 plus an sa8 copy) has 75 bytes as sa8: with the
    arena aligned to 1 the 6-byte fx16 `p` would start at the odd offset 225."""
    tensors = [
        T([1, 5, 5, 3], scale=[0.05], zero_point=[3], name="x"),
        T([1, 1, 1, 3], scale=[0.05], zero_point=[3], name="p"),
        T([1, 5, 5, 3], scale=[0.01], zero_point=[-2], name="y"),
    ]
    ops = [
        (
            "AVERAGE_POOL_2D",
            [0],
            [1],
            options(
                "Pool2DOptions", padding=1, strideW=1, strideH=1, filterWidth=5, filterHeight=5
            ),
        ),
        ("MUL", [0, 1], [2], options("MulOptions")),
    ]
    path = tmp_path / "mixed.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [2]))
    return path


def test_mixed_element_sizes_are_aligned_and_run(mli_builds, tmp_path):
    conv = H.convert(_model(tmp_path), "sa8", tmp_path / "out", overrides={0: "fx16"})
    model, arena = conv.model, conv.manifest["runtime"]["arena"]
    sizes = {b["name"]: model.tensors[b["name"]].el_type.dtype.itemsize for b in arena["buffers"]}
    assert sorted(sizes.values()) == [1, 1, 1, 2, 2]
    assert model.tensors["x_sa8"].nbytes == 75 and model.tensors["p"].nbytes == 6
    unaligned = {p.buffer.name: p.offset for p in model_arena(model, align=1).placements}
    assert unaligned["p"] == 225  # what the alignment prevents
    assert arena["align"] == 2
    assert "#define NET_ARENA_ALIGN 2u" in (tmp_path / "out" / "net.h").read_text()
    offsets = {b["name"]: b["offset"] for b in arena["buffers"]}
    assert offsets == {"p": 226, "x": 0, "x_sa8": 150, "p_sa8": 76, "y": 0}
    assert all(offsets[n] % sizes[n] == 0 for n in offsets)
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    H.assert_bit_exact(H.check(conv, objs, mli_builds, H.random_inputs(model, 8, 5)))
