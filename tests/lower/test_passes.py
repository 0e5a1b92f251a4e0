"""The lowering-stage graph passes (mlitool/passes), each on a small hand-built graph, the one
ordered list and its runner, and the lowering stage's place in `lower`."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli.lower.driver import lower
from mlitool.mli.target import MLI2, MLI11
from mlitool.ops import spec as opspec
from mlitool.passes.as_conv import depthwise_one_channel_as_conv, fc_rows_as_conv
from mlitool.passes.bias_scale import rescale_bias_as_tflite
from mlitool.passes.bool_islands import fuse_bool_islands
from mlitool.passes.cast_bool import cast_bool_as_select
from mlitool.passes.cast_quantize import cast_int_quantize, cast_of_dequantize
from mlitool.passes.constant_fold import fold_constants
from mlitool.passes.context import PassContext
from mlitool.passes.custom_ops import name_custom_ops
from mlitool.passes.dilated import fuse_space_to_batch_conv
from mlitool.passes.float16 import fold_float16_dequantize
from mlitool.passes.float_expressions import fuse_float_expressions
from mlitool.passes.float_regions import fuse_float_regions
from mlitool.passes.islands import fuse_float_islands
from mlitool.passes.moved_islands import fuse_moved_islands
from mlitool.passes.order_islands import read_int8_for_order
from mlitool.passes.pad_fusion import EXPLICIT_PADDING, FUSED_PAD, fuse_pad_into_conv
from mlitool.passes.pool_padding import fuse_lowest_pad_into_max_pool
from mlitool.passes.qdq import read_qdq_pairs
from mlitool.passes.quantize_early import quantize_before_concatenation
from mlitool.passes.runner import LOWERING, MODEL, PASSES, GraphPass, run_passes
from mlitool.passes.upsampling import fuse_tiled_upsampling


def fuse(graph, target):
    return fuse_pad_into_conv(graph, PassContext(target))


def q(scale, zp=0, axis=None):
    return ir.Quant(
        np.atleast_1d(np.asarray(scale, float)), np.atleast_1d(np.asarray(zp, np.int64)), axis
    )


def pad_conv(
    pads=((1, 1), (2, 0)),
    channels=(0, 0),
    padding="VALID",
    conv="CONV_2D",
    fill=None,
    also_output=False,
    second_reader=False,
) -> ir.Graph:
    """x [1,5,6,2] (zp 3) -> PAD (PADV2 with `fill`) -> 3x3 conv."""
    hw = (5 + sum(pads[0]), 6 + sum(pads[1]))
    c = 2 + sum(channels)
    paddings = np.array([[0, 0], pads[0], pads[1], channels], np.int32)
    w_shape = (4, 3, 3, c) if conv == "CONV_2D" else (1, 3, 3, c)
    tensors = [
        ir.Tensor(0, "x", (1, 5, 6, 2), "int8", quant=q(0.1, 3)),
        ir.Tensor(1, "paddings", (4, 2), "int32", data=paddings),
        ir.Tensor(2, "padded", (1, *hw, c), "int8", quant=q(0.1, 3)),
        ir.Tensor(3, "w", w_shape, "int8", data=np.ones(w_shape, np.int8), quant=q(0.01)),
        ir.Tensor(
            4, "y", (1, 1, 1, w_shape[-1] if conv != "CONV_2D" else 4), "int8", quant=q(0.2, -1)
        ),
        ir.Tensor(5, "fill", (1,), "int8", data=np.array([fill or 0], np.int8), quant=q(0.1, 3)),
        ir.Tensor(6, "z", (1, *hw, c), "int8", quant=q(0.1, 3)),
    ]
    pad = ir.Op(0, "PAD" if fill is None else "PADV2", (0, 1) if fill is None else (0, 1, 5), (2,))
    conv_op = ir.Op(
        1,
        conv,
        (2, 3, -1),
        (4,),
        {"padding": padding, "stride_h": 1, "stride_w": 1, "fused_activation": "NONE"},
    )
    ops = [pad, conv_op]
    if second_reader:
        ops.append(ir.Op(2, "RELU", (2,), (6,)))
    return ir.Graph("g", tensors, ops, [0], [4, 2] if also_output else [4])


@pytest.mark.parametrize(
    "padding,pads,total",
    [("VALID", ((1, 1), (2, 0)), (1, 1, 2, 0)), ("SAME", ((1, 1), (1, 0)), (2, 2, 2, 1))],
)  # SAME 3x3: one more on each side
@pytest.mark.parametrize("conv", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_pad_fused_into_conv(padding, pads, total, conv):
    g = pad_conv(pads, padding=padding, conv=conv)
    out = fuse(g, MLI2)
    assert [(op.index, op.type) for op in out.ops] == [(1, conv)]
    (fused,) = out.ops
    assert fused.inputs == (0, 3, -1)  # reads the PAD's input
    assert fused.options[EXPLICIT_PADDING] == total
    assert fused.options[FUSED_PAD] == "op 0 (PAD)"
    # the caller's graph is not changed
    assert [op.type for op in g.ops] == ["PAD", conv] and g.ops[1].inputs == (2, 3, -1)
    assert EXPLICIT_PADDING not in g.ops[1].options


def test_padv2_of_the_zero_point_fuses():
    assert [op.type for op in fuse(pad_conv(fill=3), MLI2).ops] == ["CONV_2D"]


@pytest.mark.parametrize(
    "graph,target",
    [
        (pad_conv(), MLI11),  # 1.x convolutions: no such padding
        (pad_conv(also_output=True), MLI2),  # the padded tensor is read outside
        (pad_conv(second_reader=True), MLI2),  # ... or by another op
        (pad_conv(channels=(1, 0)), MLI2),  # channels: not a conv padding
        (pad_conv(fill=5), MLI2),  # not real zero (zero point 3)
        (pad_conv(((3, 0), (0, 0))), MLI2),  # 3 >= the 3x3 kernel's extent
        (pad_conv(((1, 1), (2, 0)), padding="SAME"), MLI2),  # 2 + SAME's 1 >= 3
    ],
    ids=["mli1.1", "model-output", "two-readers", "channels", "fill", "too-wide", "too-wide-same"],
)
def test_pad_not_fused(graph, target):
    assert fuse(graph, target) is graph


def test_run_passes_in_order_on_a_copy():
    seen = []

    def first(g, ctx):
        seen.append(("first", len(g.ops), ctx.target))
        return g

    def other_stage(g, ctx):
        seen.append(("other stage", len(g.ops), ctx.target))
        return g

    def drop_last(g, ctx):
        """Drops the last op."""
        seen.append(("drop", len(g.ops), ctx.target))
        g.ops.pop()
        return g

    g = pad_conv()
    passes = (
        GraphPass(LOWERING, first),
        GraphPass(MODEL, other_stage),
        GraphPass(LOWERING, drop_last),
    )
    out = run_passes(g, PassContext(MLI2), LOWERING, passes)
    assert seen == [("first", 2, MLI2), ("drop", 2, MLI2)]
    assert len(out.ops) == 1 and len(g.ops) == 2  # the caller's op list kept


def test_one_ordered_list_of_passes():
    assert [p.run for p in PASSES] == [
        name_custom_ops,
        fold_float16_dequantize,
        read_qdq_pairs,
        fold_constants,
        fuse_tiled_upsampling,
        fuse_space_to_batch_conv,
        quantize_before_concatenation,
        fuse_float_islands,
        fuse_float_expressions,
        fuse_bool_islands,
        fuse_moved_islands,
        read_int8_for_order,
        cast_bool_as_select,
        cast_int_quantize,
        cast_of_dequantize,
        fuse_float_regions,
        rescale_bias_as_tflite,
        fuse_pad_into_conv,
        fuse_lowest_pad_into_max_pool,
        depthwise_one_channel_as_conv,
        fc_rows_as_conv,
    ]
    assert [p.stage for p in PASSES] == [MODEL] * 17 + [LOWERING] * 4
    assert all(p.run.__doc__ for p in PASSES)


def test_lower_reads_the_rewritten_graph():
    mli = lower(pad_conv(((1, 1), (1, 0)), padding="SAME"), format="sa8")
    (layer,) = mli.layers
    assert (layer.index, layer.op_type, layer.kind) == (1, "CONV_2D", "conv2d")
    assert mli.tensor(layer.inputs[0]).source == "x"
    assert [layer.cfg[f"padding_{s}"] for s in ("top", "bottom", "left", "right")] == [2, 2, 2, 1]


def _toy(name: str, exc: Exception) -> opspec.OpSpec:
    def fail(b, op, fmt):
        raise exc

    return opspec.OpSpec(name, ("input",), quantized=True, kind="relu", lower=fail)


def test_an_error_after_a_refusal_is_not_swallowed():
    """A refusal is recorded and lowering goes on; an unexpected error in a later, independent
    op is a bug and propagates (it used to be hidden behind the refusal)."""
    tensors = [ir.Tensor(i, f"t{i}", (1, 4), "int8", quant=q(0.1)) for i in range(4)]
    g = ir.Graph(
        "g",
        tensors,
        [ir.Op(0, "TOY_REFUSE", (0,), (1,)), ir.Op(1, "TOY_BUG", (2,), (3,))],
        [0, 2],
        [1, 3],
    )
    with (
        opspec.registered(_toy("TOY_REFUSE", UnsupportedError("refused"))),
        opspec.registered(_toy("TOY_BUG", RuntimeError("a bug"))),
    ):
        with pytest.raises(RuntimeError, match="a bug"):
            lower(g, format="sa8")
        g.ops.pop()
        with pytest.raises(UnsupportedError, match="op 0 \\(TOY_REFUSE\\): refused"):
            lower(g, format="sa8")
