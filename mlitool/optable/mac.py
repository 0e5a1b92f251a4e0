"""Built-in OpSpecs of the ops with weights or windows: CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, TRANSPOSE_CONV (MAC ops), the pools and MEAN."""

from __future__ import annotations

from mlitool.execute import float_ops as F
from mlitool.execute import reduce as RX
from mlitool.execute import tflite_mac as TM
from mlitool.execute import tflite_ops as T
from mlitool.mli.lower import activations as act
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import checks_values as CV
from mlitool.mli.lower import fallback_reduce as RF
from mlitool.mli.lower import mac
from mlitool.opspec import OpSpec, register
from mlitool.tflite import validate_weighted as V
from mlitool.tflite.validate_ops import reduce_shapes

_MAC = dict(
    optional=1,
    mac=True,
    quantized=True,
    params=("weights",),
    weights=("weights",),
    lower=mac.lower_mac,
)
_CONV = ("input", "weights", "bias")
_MAC_INPUT = (C.weights_constant, C.input_nhwc)


def _conv(name: str, options: str, kind: str, checks: tuple, run: tuple) -> None:
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
        )
    )


_conv(
    "CONV_2D",
    "Conv2DOptions",
    "conv2d",
    (C.dilation_needs_mli2, CV.conv_not_grouped),
    (F.conv_2d, TM.conv_2d),
)
# Over one input channel a conv2d, with a channel multiplier a group_conv2d (facts.layer_kind).
_conv(
    "DEPTHWISE_CONV_2D",
    "DepthwiseConv2DOptions",
    "depthwise_conv2d",
    (C.kernel_needs_mli2, C.dilation_needs_mli2),
    (F.depthwise_conv_2d, TM.depthwise_conv_2d),
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
        checks=(C.fc_weights_matrix, C.fc_input_rows, C.fc_rows_need_hwc),
        run=(F.fully_connected, TM.fully_connected),
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
            C.weights_constant,
            C.tconv_output_shape_constant,
            C.tconv_input_nhwc,
            C.tconv_stride_within_kernel,
            C.tconv_output_reached,
            C.tconv_padding_within_kernel,
        ),
        run=(F.transpose_conv, TM.transpose_conv),
    )
)

_POOL = dict(
    options="Pool2DOptions",
    options_required=True,
    quantized=True,
    shapes=V.window_shapes,
    lower=act.lower_pool,
)
register(
    OpSpec(
        "AVERAGE_POOL_2D",
        ("input",),
        **_POOL,
        kind="avepool",
        run=(F.average_pool_2d, T.average_pool_2d),
    )
)
register(
    OpSpec("MAX_POOL_2D", ("input",), **_POOL, kind="maxpool", run=(F.max_pool_2d, T.max_pool_2d))
)
register(
    OpSpec(
        "MEAN",
        ("input", "axis"),
        options="ReducerOptions",
        quantized=True,
        kind="avepool",
        shapes=reduce_shapes,
        checks=RF.CHECKS,
        lower=RF.lower_mean,
        run=(RX.float_kernel("MEAN"), RX.tflite_kernel("MEAN")),
    )
)
