"""A dilated conv exported through the batch axis (SPACE_TO_BATCH_ND -> [EXPAND_DIMS] -> CONV_2D
-> [RESHAPE] -> BATCH_TO_SPACE_ND) becomes one CONV_2D with dilation at import
(mlitool/passes/dilated.py): the rewritten graph in tflite mode equals LiteRT running the
original file, and its C equals the executor on the real MLI library."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

Q = dict(scale=0.05, zero_point=-3)


def _conv_model(path: Path, rank: int, pads: list, crops: list, depthwise: bool = False) -> Path:
    """x [1, 16, 3] (rank 3, block 2 along T; a 1 x 3 kernel between EXPAND_DIMS and RESHAPE)
    or [1, 8, 8, 3] (rank 4, block 2 x 2, a 3 x 3 kernel) -S2B-> conv (VALID) -B2S-> y; the conv
    a CONV_2D with 4 outputs, or a DEPTHWISE_CONV_2D (multiplier 1)."""
    rng = np.random.default_rng(5)
    block = [2] if rank == 3 else [2, 2]
    x_shape = [1, 16, 3] if rank == 3 else [1, 8, 8, 3]
    padded = [n + p0 + p1 for n, (p0, p1) in zip(x_shape[1:-1], pads)]
    inner = [4] + [n // 2 for n in padded] + [3]  # batch 2 (rank 3) or 4 (rank 4) inside
    k = [1, 3] if rank == 3 else [3, 3]
    cout = 3 if depthwise else 4
    w = rng.integers(-127, 128, (1, *k, 3) if depthwise else (4, *k, 3)).astype(np.int8)
    if rank == 3:
        inner[0] = 2
    conv_in = [inner[0], 1, inner[1], 3] if rank == 3 else inner
    conv_out = [conv_in[0], conv_in[1] - k[0] + 1, conv_in[2] - k[1] + 1, cout]
    view = [conv_out[0], conv_out[2], cout] if rank == 3 else conv_out
    spatial = view[1:-1]
    y_shape = [1] + [n * 2 - c0 - c1 for n, (c0, c1) in zip(spatial, crops)] + [cout]
    wscale = rng.uniform(0.002, 0.01, cout)
    tensors = [
        T(x_shape, name="x", **Q),
        T([len(block)], "int32", data=np.array(block, np.int32), name="block"),
        T([len(block), 2], "int32", data=np.array(pads, np.int32), name="pads"),
        T([len(block), 2], "int32", data=np.array(crops, np.int32), name="crops"),
        T(inner, name="s2b", **Q),
        T(conv_in, name="expanded", **Q),
        T(
            list(w.shape),
            data=w,
            scale=list(wscale),
            zero_point=[0] * cout,
            axis=3 if depthwise else 0,
            name="w",
        ),
        T(
            [cout],
            "int32",
            data=rng.integers(-500, 500, cout).astype(np.int32),
            name="b",
            scale=list(wscale * 0.05),
            zero_point=[0] * cout,
        ),
        T(conv_out, name="conv", scale=0.3, zero_point=5),
        T(view, name="view", scale=0.3, zero_point=5),
        T(y_shape, name="y", scale=0.3, zero_point=5),
        T([], "int32", data=np.array(-3, np.int32), name="axis"),
        T([len(view)], "int32", data=np.array(view, np.int32), name="shape"),
    ]
    conv_type = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    conv_opts = (
        options("DepthwiseConv2DOptions", padding=1, strideH=1, strideW=1, depthMultiplier=1)
        if depthwise
        else options("Conv2DOptions", padding=1, strideH=1, strideW=1)
    )
    ops = [("SPACE_TO_BATCH_ND", [0, 1, 2], [4], None)]
    if rank == 3:
        ops += [
            ("EXPAND_DIMS", [4, 11], [5], None),
            (conv_type, [5, 6, 7], [8], conv_opts),
            ("RESHAPE", [8, 12], [9], options("ReshapeOptions", newShape=view)),
            ("BATCH_TO_SPACE_ND", [9, 1, 3], [10], None),
        ]
    else:
        ops += [
            (conv_type, [4, 6, 7], [8], conv_opts),
            ("BATCH_TO_SPACE_ND", [8, 1, 3], [10], None),
        ]
    path.write_bytes(graph_model(tensors, ops, [0], [10], {conv_type: 3}))
    return path


def _same_as_litert(path: Path) -> None:
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    g = read(path).main
    inputs = random_inputs(g, 8, seed=3)
    y = g.outputs[0]
    ref = oracle.run_litert(path, g, inputs, [y])
    np.testing.assert_array_equal(run_graph(g, inputs, "tflite")[y], ref[y])


@pytest.mark.parametrize(
    "rank, pads", [(3, [[0, 0]]), (3, [[1, 1]]), (4, [[0, 0], [1, 1]])], ids=str
)
def test_space_to_batch_conv_is_one_dilated_conv(rank, pads, tmp_path):
    path = _conv_model(tmp_path / "d.tflite", rank, pads, pads)
    model = read(path)
    g = model.main
    conv = next(op for op in g.ops if op.type == "CONV_2D")
    kept = ["EXPAND_DIMS", "CONV_2D", "RESHAPE"] if rank == 3 else ["CONV_2D"]
    assert [op.type for op in g.ops] == kept
    assert (conv.options["dilation_h"], conv.options["dilation_w"]) == (
        (1, 2) if rank == 3 else (2, 2)
    )
    assert g.ops[0].inputs[0] == 0 and g.ops[-1].outputs[0] == 10
    b2s = 2 if rank == 3 else 1
    assert model.rewritten_ops == {
        f"op {conv.index} (CONV_2D)": [
            f"op {conv.index} (CONV_2D)",
            "op 0 (SPACE_TO_BATCH_ND)",
            f"op {conv.index + b2s} (BATCH_TO_SPACE_ND)",
        ]
    }
    _same_as_litert(path)


def test_crops_other_than_the_padding_are_left_alone(tmp_path):
    """Padding 2 at the start, cropped 2 at the end: the length of the dilated conv of x, but
    each output starts 2 earlier and reads the padding, so the chain stays as the file has it."""
    path = _conv_model(tmp_path / "d.tflite", 3, [[2, 0]], [[0, 2]])
    g = read(path).main
    assert g.ops[0].type == "SPACE_TO_BATCH_ND" and g.tensors[10].shape == (1, 12, 4)
    _same_as_litert(path)


def test_dilated_conv_runs_bit_exact(tmp_path, mli_builds):
    """The rewritten rank-3 chain (EXPAND_DIMS view, dilated conv) on the real library, sa8."""
    path = _conv_model(tmp_path / "d.tflite", 3, [[1, 1]], [[1, 1]])
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "sa8", mli_builds, mli_cflags("2.0")))


# (rank, pads, crops, depthwise) -> the op types left and the folded conv's padding: crops <= pads
# leave the padding pads - crops, TFLite's SAME where it is SAME's (Keras' padding="same" with a
# dynamic batch: pads 2, crops 0), else a PAD by it in place of the S2B.
CROPPED = {
    "keras_same": (4, [[2, 2], [2, 2]], [[0, 0], [0, 0]], False, ["CONV_2D"], "SAME"),
    "keras_same_depthwise": (
        4,
        [[2, 2], [2, 2]],
        [[0, 0], [0, 0]],
        True,
        ["DEPTHWISE_CONV_2D"],
        "SAME",
    ),
    "pad_left": (4, [[2, 2], [1, 1]], [[1, 0], [0, 0]], False, ["PAD", "CONV_2D"], "VALID"),
    "pad_left_depthwise": (
        4,
        [[2, 2], [1, 1]],
        [[1, 0], [0, 0]],
        True,
        ["PAD", "DEPTHWISE_CONV_2D"],
        "VALID",
    ),
    "pad_left_1d": (
        3,
        [[2, 2]],
        [[0, 1]],
        False,
        ["PAD", "EXPAND_DIMS", "CONV_2D", "RESHAPE"],
        "VALID",
    ),
    "depthwise_crops_equal": (
        4,
        [[0, 0], [1, 1]],
        [[0, 0], [1, 1]],
        True,
        ["DEPTHWISE_CONV_2D"],
        "VALID",
    ),
}


@pytest.mark.parametrize("name", sorted(CROPPED))
def test_crops_up_to_the_padding_fold_into_one_dilated_conv(name, tmp_path, mli_builds):
    rank, pads, crops, depthwise, kept, padding = CROPPED[name]
    path = _conv_model(tmp_path / "d.tflite", rank, pads, crops, depthwise)
    g = read(path).main
    assert [op.type for op in g.ops] == kept
    conv = next(op for op in g.ops if "CONV" in op.type)
    assert conv.options["padding"] == padding
    assert (conv.options["dilation_h"], conv.options["dilation_w"]) == (
        (1, 2) if rank == 3 else (2, 2)
    )
    if kept[0] == "PAD":
        assert g.ops[0].shown_type == "SPACE_TO_BATCH_ND"
    _same_as_litert(path)
    for fmt in ("sa8", "fx16"):
        out = tmp_path / fmt
        H.assert_bit_exact(H.run_case(path, fmt, out, mli_builds, mli_cflags("2.0")))
