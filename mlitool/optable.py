"""The built-in ops: one `OpSpec` (opspec.py) per TFLite op mlitool knows, registered on import.

Everything about an op is in its entry: input slots, options table, element types, validation
shape check, MLI layer kind, support checks, lowering and executor kernels. The stages that
dispatch on an op (validate, the support check, lowering, inspect, the executors) import this
module and read the registry; the functions named here read the op's facts through it.
"""

from __future__ import annotations

from mlitool import lstm_slots
from mlitool.execute import float_ops as F
from mlitool.execute import layout_ops as LO
from mlitool.execute import tflite_lstm
from mlitool.execute import tflite_mac as TM
from mlitool.execute import tflite_ops as T
from mlitool.mli.lower import activations as act
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import concat, mac, movement, recurrent
from mlitool.mli.lower.checks_recurrent import LSTM_CHECKS
from mlitool.opspec import (
    CONVERT,
    REGISTRY,
    VARIADIC,
    WIDEN,
    OpSpec,
    get,
    lowered_ops,
    register,
    spec,
)
from mlitool.tflite import validate_ops as V

__all__ = ["REGISTRY", "get", "lowered_ops", "spec"]  # the registry, loaded

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

register(
    OpSpec(
        "CONV_2D",
        _CONV,
        **_MAC,
        options="Conv2DOptions",
        options_required=True,
        shapes=V.window_shapes,
        kind="conv2d",
        checks=(C.dilation_needs_mli2, *_MAC_INPUT),
        run=(F.conv_2d, TM.conv_2d),
    )
)
# Over one input channel a conv2d, with a channel multiplier a group_conv2d (facts.layer_kind).
register(
    OpSpec(
        "DEPTHWISE_CONV_2D",
        _CONV,
        **_MAC,
        options="DepthwiseConv2DOptions",
        options_required=True,
        shapes=V.window_shapes,
        kind="depthwise_conv2d",
        checks=(C.kernel_needs_mli2, C.dilation_needs_mli2, *_MAC_INPUT),
        run=(F.depthwise_conv_2d, TM.depthwise_conv_2d),
    )
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
        checks=(C.mean_over_hw,),
        lower=act.lower_pool,
        run=(F.mean, T.mean),
    )
)

# Element-wise: two operands of one type, broadcast.
_ELTWISE = dict(
    all_data=True,
    quantized=True,
    shapes=V.eltwise_shapes,
    checks=(
        C.one_operand_variable,
        C.operands_broadcast,
        C.broadcast_needs_mli2,
        C.broadcast_against_activation,
        C.output_broadcast_shape,
    ),
    lower=act.lower_eltwise,
)
for _name, _options, _kind, _float, _tflite in (
    ("ADD", "AddOptions", "eltwise_add", F.add, T.add),
    ("SUB", "SubOptions", "eltwise_sub", F.sub, T.sub),
    ("MUL", "MulOptions", "eltwise_mul", F.mul, T.mul),
    ("MAXIMUM", "MaximumMinimumOptions", "eltwise_max", F.maximum, T.maximum),
    ("MINIMUM", "MaximumMinimumOptions", "eltwise_min", F.minimum, T.minimum),
):
    register(
        OpSpec(
            _name,
            ("input", "input2"),
            options=_options,
            kind=_kind,
            **_ELTWISE,
            run=(_float, _tflite),
        )
    )

# Activations: the output has the input's shape.
_ACT = dict(quantized=True, shapes=V.same_shape)
for _name, _float, _tflite in (
    ("RELU", F.relu, T.relu),
    ("RELU6", F.relu6, T.relu6),
    ("RELU_N1_TO_1", F.relu_n1_to_1, T.relu_n1_to_1),
):
    register(
        OpSpec(_name, ("input",), **_ACT, kind="relu", lower=act.lower_relu, run=(_float, _tflite))
    )
register(
    OpSpec(
        "LEAKY_RELU",
        ("input",),
        **_ACT,
        options="LeakyReluOptions",
        kind="leaky_relu",
        lower=act.lower_leaky_relu,
        run=(F.leaky_relu, T.leaky_relu),
    )
)
register(
    OpSpec(
        "PRELU",
        ("input", "alpha"),
        **_ACT,
        kind="prelu",
        checks=(C.kernel_needs_mli2, C.prelu_slope_one_axis),
        lower=act.lower_prelu,
        run=(F.prelu, T.prelu),
    )
)
register(
    OpSpec(
        "LOGISTIC",
        ("input",),
        **_ACT,
        types=WIDEN,
        kind="sigm",
        lower=act.lower_lut,
        run=(F.logistic, T.logistic),
    )
)
register(
    OpSpec(
        "TANH",
        ("input",),
        **_ACT,
        types=WIDEN,
        kind="tanh",
        lower=act.lower_lut,
        run=(F.tanh, T.tanh),
    )
)
register(
    OpSpec(
        "SOFTMAX",
        ("input",),
        **_ACT,
        types=WIDEN,
        options="SoftmaxOptions",
        kind="softmax",
        checks=(C.softmax_beta_one, C.softmax_one_axis_on_mli1),
        lower=act.lower_lut,
        run=(F.softmax, T.softmax),
    )
)
register(
    OpSpec(
        "L2_NORMALIZATION",
        ("input",),
        **_ACT,
        options="L2NormOptions",
        kind="l2_normalize",
        checks=(C.kernel_needs_mli2,),
        lower=act.lower_lut,
        run=(F.l2_normalization, T.l2_normalization),
    )
)
register(
    OpSpec(
        "QUANTIZE",
        ("input",),
        **_ACT,
        types=CONVERT,
        options="QuantizeOptions",
        kind="convert",
        checks=(C.float_needs_mli2,),
        lower=act.lower_quantize,
        run=(F.identity, T.quantize),
    )
)
register(
    OpSpec(
        "DEQUANTIZE",
        ("input",),
        **_ACT,
        types=CONVERT,
        options="DequantizeOptions",
        kind="convert",
        checks=(C.float_needs_mli2,),
        lower=act.lower_quantize,
        run=(F.identity, T.dequantize),
    )
)

# Data movement: one arithmetic-free kernel for both execution modes.
register(
    OpSpec(
        "CONCATENATION",
        ("input",),
        variadic=True,
        options="ConcatenationOptions",
        all_data=True,
        quantized=True,
        shapes=V.concat_shapes,
        kind="concat",
        reads_views=True,
        checks=(C.concat_inputs_variable, C.concat_keeps_batch),
        lower=concat.lower_concatenation,
        run=(F.concatenation, T.concatenation),
    )
)
_PAD = dict(quantized=True, kind="padding", lower=movement.lower_pad, run=(F.pad, T.pad))
register(
    OpSpec(
        "PAD",
        ("input", "paddings"),
        options="PadOptions",
        **_PAD,
        checks=(C.pad_spatial, C.pad_channels_need_mli2),
    )
)
register(
    OpSpec(
        "PADV2",
        ("input", "paddings", "constant_values"),
        optional=1,
        options="PadV2Options",
        **_PAD,
        checks=(C.pad_spatial, C.pad_channels_need_mli2, C.pad_value_constant, C.float_pad_zero),
    )
)
register(
    OpSpec(
        "RESHAPE",
        ("input", "shape"),
        optional=1,
        options="ReshapeOptions",
        shapes=V.same_size,
        kind="view",
        lower=movement.lower_reshape,
        run=(LO.reshape,) * 2,
    )
)
register(
    OpSpec(
        "SQUEEZE",
        ("input",),
        options="SqueezeOptions",
        shapes=V.same_size,
        kind="view",
        lower=movement.lower_reshape,
        run=(LO.reshape,) * 2,
    )
)
register(
    OpSpec(
        "EXPAND_DIMS",
        ("input", "axis"),
        options="ExpandDimsOptions",
        shapes=V.same_size,
        run=(LO.reshape,) * 2,
    )
)
register(
    OpSpec(
        "TRANSPOSE",
        ("input", "perm"),
        options="TransposeOptions",
        kind="permute",
        checks=(C.transpose_keeps_batch,),
        lower=movement.lower_transpose,
        run=(LO.transpose,) * 2,
    )
)
register(
    OpSpec(
        "ARG_MAX",
        ("input", "axis"),
        options="ArgMaxOptions",
        types=CONVERT,
        index_outputs=True,
        kind="argmax",
        checks=(
            C.kernel_needs_mli2,
            C.argmax_axis_constant,
            C.argmax_last_axis,
            C.argmax_row_starts_fit,
        ),
        lower=movement.lower_arg_max,
        run=(LO.arg_max,) * 2,
    )
)
register(
    OpSpec(
        "ARG_MIN",
        ("input", "axis"),
        options="ArgMinOptions",
        types=CONVERT,
        index_outputs=True,
        run=(LO.arg_min,) * 2,
    )
)

# Slices: views of their input where MLI can address them (else mli_mov copies).
_SLICE = dict(
    kind="view",
    checks=(C.slice_expressible, C.slice_keeps_batch),
    lower=movement.lower_slice,
    reads_views=True,
)
register(
    OpSpec(
        "SLICE",
        ("input", "begin", "size"),
        options="SliceOptions",
        **_SLICE,
        run=(LO.slice_op,) * 2,
    )
)
register(
    OpSpec(
        "STRIDED_SLICE",
        ("input", "begin", "end", "strides"),
        options="StridedSliceOptions",
        **_SLICE,
        run=(LO.strided_slice,) * 2,
    )
)
register(
    OpSpec(
        "SPLIT",
        ("axis", "input"),
        outputs=(1, VARIADIC),
        options="SplitOptions",
        **_SLICE,
        run=(LO.split,) * 2,
    )
)
register(
    OpSpec(
        "SPLIT_V",
        ("input", "size_splits", "axis"),
        outputs=(1, VARIADIC),
        options="SplitVOptions",
        **_SLICE,
        run=(LO.split_v,) * 2,
    )
)

# Optional slots sit between required ones: `lstm_shapes` checks which are present. Its
# rescales are internal; its fused activation is the gates' (LSTM_CHECKS).
register(
    OpSpec(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        lstm_slots.SLOTS,
        optional=4,
        required=1,
        options="UnidirectionalSequenceLSTMOptions",
        rescale=False,
        fused_activation=False,
        shapes=V.lstm_shapes,
        weights=tuple(lstm_slots.SLOTS[k] for k in lstm_slots.INPUT_WEIGHTS),
        kind="lstm_cell",
        checks=LSTM_CHECKS,
        lower=recurrent.lower_lstm,
        run=(F.unidirectional_sequence_lstm, tflite_lstm.unidirectional_sequence_lstm),
    )
)

# MLI 2.x has kernels that mlitool does not lower (yet): the support check names them. Not
# validated (no slots), not executed.
register(OpSpec("UNIDIRECTIONAL_SEQUENCE_RNN", not_lowered="mli_krn_rnn_dense_*"))
