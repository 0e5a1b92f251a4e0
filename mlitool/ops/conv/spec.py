"""OpSpecs of the ops that multiply-accumulate weights over windows or rows: CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV. Float mode `float_mode.py`, TFLite's
integer arithmetic `tflite_mode.py`, lowering onto MLI's MAC kernels `lower.py` (weights and
bias encodings `encoding.py`), support checks `checks.py`."""

from __future__ import annotations

from mlitool import ir
from mlitool.inspect.opstats import prod
from mlitool.mli.lower import checks as C
from mlitool.ops.conv import checks as CC
from mlitool.ops.conv import float_mode as F
from mlitool.ops.conv import lower
from mlitool.ops.conv import tflite_mode as TM
from mlitool.ops.spec import OpSpec, register
from mlitool.tflite import validate_weighted as V


# Multiply-accumulates per inference (inspect, reports), from the weights' and output's shapes.
def _conv_macs(g: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    """N*Ho*Wo*Co * Kh*Kw*Ci (Ci from the filter, so a grouped convolution counts right)."""
    return prod(out) * w[1] * w[2] * w[3] if len(w) == 4 else 0


def _depthwise_macs(g: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    return prod(out) * w[1] * w[2] if len(w) == 4 else 0


def _fc_macs(g: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    return prod(out) * w[1] if len(w) == 2 else 0


def _transpose_conv_macs(g: ir.Graph, op: ir.Op, w: tuple, out: tuple) -> int:
    """N*Hi*Wi*Ci * Kh*Kw*Co: every input element meets the whole filter once."""
    x = g.tensor(op.inputs[2]) if len(op.inputs) > 2 else None
    return prod(x.shape) * w[0] * w[1] * w[2] if x is not None and len(w) == 4 else 0


_MAC = dict(
    optional=1,
    mac=True,
    quantized=True,
    params=("weights",),
    weights=("weights",),
    lower=lower.lower_mac,
)
_CONV = ("input", "weights", "bias")
_MAC_INPUT = (CC.weights_constant, CC.input_nhwc)


def _conv(name: str, options: str, kind: str, checks: tuple, run: tuple, macs) -> None:
    """Register a convolution of NHWC windows; its options (stride, padding) must be there."""
    register(
        OpSpec(
            name,
            _CONV,
            **_MAC,
            options=options,
            options_required=True,
            shapes=V.window_shapes,
            kind=kind,
            checks=(*checks, *_MAC_INPUT),
            run=run,
            macs=macs,
        )
    )


_conv(
    "CONV_2D",
    "Conv2DOptions",
    "conv2d",
    (C.kernel_needs_mli2, CC.dilation_needs_mli2),  # grouped: MLI 2.x's group_conv2d
    (F.conv_2d, TM.conv_2d),
    _conv_macs,
)
# Over one input channel a conv2d, with a channel multiplier a group_conv2d (facts.layer_kind).
_conv(
    "DEPTHWISE_CONV_2D",
    "DepthwiseConv2DOptions",
    "depthwise_conv2d",
    (C.kernel_needs_mli2, CC.dilation_needs_mli2),
    (F.depthwise_conv_2d, TM.depthwise_conv_2d),
    _depthwise_macs,
)
# Over several rows a 1x1 conv2d (facts.layer_kind).
register(
    OpSpec(
        "FULLY_CONNECTED",
        _CONV,
        **_MAC,
        options="FullyConnectedOptions",
        shapes=V.fc_shapes,
        kind="fully_connected",
        checks=(CC.fc_weights_matrix, CC.fc_input_rows, CC.fc_rows_need_hwc),
        run=(F.fully_connected, TM.fully_connected),
        macs=_fc_macs,
    )
)
register(
    OpSpec(
        "TRANSPOSE_CONV",
        ("output_shape", "weights", "input", "bias"),
        **{**_MAC, "params": ("output_shape", "weights")},
        options="TransposeConvOptions",
        options_required=True,
        shapes=V.transpose_conv_shapes,
        kind="transpose_conv2d",
        checks=(
            C.kernel_needs_mli2,
            CC.weights_constant,
            CC.tconv_output_shape_constant,
            CC.tconv_input_nhwc,
            CC.tconv_stride_within_kernel,
            CC.tconv_output_reached,
            CC.tconv_padding_within_kernel,
        ),
        run=(F.transpose_conv, TM.transpose_conv),
        macs=_transpose_conv_macs,
    )
)
