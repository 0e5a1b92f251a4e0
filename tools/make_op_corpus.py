"""Write tests/corpus_ops: one tiny model per TFLite Micro builtin op and variant (issue 35).

The ops and the tensor types they run at are those of tools/tflm_ops.json (TFLite Micro's
registered builtin ops, read from its kernels). Every model is made by the real TFLite converter
from a tf.function of Keras layers and tf ops: `float32`, `int8` (full-integer, int8 input and
output, representative dataset) where TFLite Micro's kernel runs int8 or where TF leaves the op
as a float island (DEQUANTIZE -> float op -> QUANTIZE) inside an int8 model, `16x8` (int16
activations, int8 weights) where TFLite Micro's kernel runs int16. Index (int32) and bool tensors
come from an int32 model input or from comparisons inside the model. The ops the converter never
writes from TF are built with the flatbuffer model builder of tests/support (listed under
"builder" in corpus.json) or listed under "not_made" with the reason.

Generated with TensorFlow 2.21.0 (`tensorflow-cpu`, Keras 3). TensorFlow is a tool of this script
only: run it in a virtual environment of its own, with the `tflite` package for the builder:

    python3 -m venv /work/venv-tf && /work/venv-tf/bin/pip install tensorflow-cpu==2.21.0 tf-keras==2.21.0 tflite==2.18.0
    /work/venv-tf/bin/python tools/make_op_corpus.py [NAME ...]

NAME (optional) remakes only the cases whose name contains it, keeping the other entries of
corpus.json. Weights and data are seeded per case, so a rerun with the same versions writes the
same files. A conversion the converter refuses is listed under "dropped"; a 16x8 float32 constant
the converter leaves beside int16 data (GREATER, PADV2: files LiteRT refuses) is quantized to int16
(`quantize_16x8_constants`, listed under "constants_quantized").
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402
from tensorflow.lite.tools import flatbuffer_utils  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.tflite_build: the builder of the non-converter ops

TF_VERSION = "2.21.0"
SEED = 20251128
OUT = ROOT / "tests" / "corpus_ops"
N_REPRESENTATIVE = 32
L = keras.layers
F, I8, I16 = "float32", "int8", "16x8"


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


@dataclass
class Case:
    """One model: `make()` returns a function of the input tensor (Keras layers are made in
    make(), seeded, so their weights do not depend on the other cases)."""

    name: str
    op: str  # the TFLite op under test
    make: Callable[[], Callable]
    variants: tuple[str, ...] = (F, I8)
    shape: tuple[int, ...] = (8, 8, 4)
    dtype: str = "float32"  # the model input's dtype
    low: float = -1.0
    high: float = 1.0
    what: str = ""
    op_dtype: dict[str, str] = field(
        default_factory=dict
    )  # variant -> the op's dtype if not the variant's
    dynamic: bool = False  # batch None, as a plain Keras export has it (else batch 1)


def fn(f: Callable) -> Callable[[], Callable]:
    """A case of tf ops only (no weights)."""
    return lambda: f


def layer(ctor: Callable, **kw) -> Callable[[], Callable]:
    return lambda: ctor(**kw)


ALL = (F, I8, I16)
BOOL = {F: "bool", I8: "bool"}  # ops on the bool tensors a comparison makes, in either variant
FI = (F, I8)


def _dyn_update(x):
    from tensorflow.compiler.tf2xla.python import xla

    upd = tf.ones([1, 2, 2, 4]) * 0.5
    return xla.dynamic_update_slice(x, upd, tf.constant([0, 3, 2, 0]))


def _dyn_update_run_time(x):
    """Start indices computed at run time: [0, the row of the largest x[:, :, 0, 0] (ARG_MAX), 2,
    0] (int32 MUL and ADD of constants)."""
    from tensorflow.compiler.tf2xla.python import xla

    row = tf.argmax(x[:, :, 0, 0], axis=1, output_type=tf.int32)
    starts = row * tf.constant([0, 1, 0, 0], tf.int32) + tf.constant([0, 0, 2, 0], tf.int32)
    return xla.dynamic_update_slice(x, tf.ones([1, 3, 2, 4]) * 0.5, starts)


def _dyn_update_int32(x):
    """An int32 operand, its start indices computed at run time from its own values."""
    from tensorflow.compiler.tf2xla.python import xla

    starts = tf.concat([tf.zeros([1], tf.int32), x[0, :3, 0, 0] % 4], 0)
    return xla.dynamic_update_slice(x, tf.fill([1, 3, 2, 4], 7), starts)


def _dilated(depthwise: bool) -> Callable[[], Callable]:
    def make():
        if depthwise:
            return L.DepthwiseConv2D(3, dilation_rate=2, padding="same")
        return L.Conv2D(8, 3, dilation_rate=2, padding="same")

    return make


def _embedding() -> Callable:
    emb = L.Embedding(16, 4)

    def f(idx):  # index arithmetic as a Keras Embedding with masking / offsets writes it
        shifted = tf.where(idx < 8, idx + 8, idx - 8)
        return emb(shifted)

    return f


def _tf_keras_lstm(bidirectional: bool) -> Callable[[], Callable]:
    """A tf_keras (Keras 2) LSTM model: the converter fuses its LSTM into
    UNIDIRECTIONAL_SEQUENCE_LSTM only from tf_keras models (Keras 3's becomes a WHILE loop)."""

    def make():
        import tf_keras

        tf_keras.utils.set_random_seed(SEED)
        x = tf_keras.Input((5, 3), batch_size=1)
        lstm = tf_keras.layers.LSTM(6, return_sequences=True)
        y = tf_keras.layers.Bidirectional(lstm)(x) if bidirectional else lstm(x)
        return tf_keras.Model(x, y)

    return make


CASES: list[Case] = [
    # --- element-wise arithmetic
    Case("abs", "ABS", fn(tf.abs), ALL),
    Case("add", "ADD", fn(lambda x: x + tf.constant(np.linspace(-0.5, 0.5, 4), tf.float32)), ALL),
    Case("add_n", "ADD_N", fn(lambda x: tf.add_n([x, tf.nn.relu(x), tf.abs(x)])), FI),
    Case("sub", "SUB", fn(lambda x: x - tf.constant(np.linspace(-0.5, 0.5, 4), tf.float32)), ALL),
    Case("mul", "MUL", fn(lambda x: x * tf.constant(np.linspace(-2, 2, 4), tf.float32)), ALL),
    Case("div", "DIV", fn(lambda x: x / (tf.abs(x) + 1.0)), FI),
    Case(
        "squared_difference",
        "SQUARED_DIFFERENCE",
        fn(lambda x: tf.math.squared_difference(x, tf.constant(np.linspace(-1, 1, 4), tf.float32))),
        ALL,
    ),
    Case(
        "maximum",
        "MAXIMUM",
        fn(lambda x: tf.maximum(x, tf.constant(np.linspace(-0.5, 0.5, 4), tf.float32))),
        ALL,
    ),
    Case(
        "minimum",
        "MINIMUM",
        fn(lambda x: tf.minimum(x, tf.constant(np.linspace(-0.5, 0.5, 4), tf.float32))),
        ALL,
    ),
    Case("floor_div", "FLOOR_DIV", fn(lambda x: tf.math.floordiv(x, 0.3)), FI, low=-2, high=2),
    Case("floor_mod", "FLOOR_MOD", fn(lambda x: tf.math.floormod(x, 0.3)), FI, low=-2, high=2),
    Case("neg", "NEG", fn(lambda x: tf.negative(tf.nn.relu(x))), FI, what="NEG after RELU"),
    # --- element-wise math (float kernels in TFLite Micro; float islands in int8 models)
    Case("ceil", "CEIL", fn(tf.math.ceil), FI, low=-3, high=3),
    Case("floor", "FLOOR", fn(tf.math.floor), FI, low=-3, high=3),
    Case("round", "ROUND", fn(tf.math.round), FI, low=-3, high=3),
    Case("sin", "SIN", fn(tf.sin), FI, low=-3, high=3),
    Case("cos", "COS", fn(tf.cos), FI, low=-3, high=3),
    Case("exp", "EXP", fn(tf.exp), FI),
    Case("log", "LOG", fn(tf.math.log), FI, low=0.05, high=4),
    Case("sqrt", "SQRT", fn(tf.sqrt), FI, low=0.0, high=4),
    Case("rsqrt", "RSQRT", fn(tf.math.rsqrt), FI, low=0.05, high=4),
    Case("square", "SQUARE", fn(tf.square), FI),
    # --- activations
    Case("relu", "RELU", fn(tf.nn.relu), ALL),
    Case("relu6", "RELU6", fn(tf.nn.relu6), ALL, low=-8, high=8),
    Case("leaky_relu", "LEAKY_RELU", layer(L.LeakyReLU, negative_slope=0.2), ALL),
    Case("prelu", "PRELU", layer(L.PReLU, alpha_initializer=keras.initializers.Constant(0.3)), ALL),
    Case("elu", "ELU", fn(tf.nn.elu), FI),
    Case("logistic", "LOGISTIC", fn(tf.sigmoid), ALL, low=-4, high=4),
    Case("tanh", "TANH", fn(tf.tanh), ALL, low=-3, high=3),
    Case(
        "hard_swish", "HARD_SWISH", fn(lambda x: x * tf.nn.relu6(x + 3.0) / 6.0), FI, low=-4, high=4
    ),
    Case("softmax", "SOFTMAX", fn(tf.nn.softmax), ALL, low=-4, high=4),
    Case("log_softmax", "LOG_SOFTMAX", fn(tf.nn.log_softmax), FI, low=-4, high=4),
    Case(
        "l2_normalization", "L2_NORMALIZATION", fn(lambda x: tf.math.l2_normalize(x, axis=-1)), FI
    ),
    # --- convolutions, pooling, matmul
    Case("conv_2d", "CONV_2D", layer(L.Conv2D, filters=8, kernel_size=3, padding="same"), ALL),
    Case(
        "conv_2d_grouped",
        "CONV_2D",
        layer(L.Conv2D, filters=8, kernel_size=3, padding="same", groups=4),
        ALL,
        shape=(8, 8, 8),
        what="Keras Conv2D(groups=4)",
    ),
    Case(
        "conv_2d_dilated",
        "CONV_2D",
        _dilated(False),
        ALL,
        shape=(12, 12, 4),
        what="Keras Conv2D(dilation_rate=2, padding='same'): SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND around it, or folded",
    ),
    Case(
        "conv_2d_dilated_dynbatch",
        "CONV_2D",
        _dilated(False),
        ALL,
        shape=(12, 12, 4),
        dynamic=True,
        what="as conv_2d_dilated with a dynamic batch, as Keras exports it: the converter keeps SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND",
    ),
    Case(
        "depthwise_conv_2d_dilated_dynbatch",
        "DEPTHWISE_CONV_2D",
        _dilated(True),
        ALL,
        shape=(12, 12, 4),
        dynamic=True,
        what="as depthwise_conv_2d_dilated with a dynamic batch",
    ),
    Case(
        "depthwise_conv_2d",
        "DEPTHWISE_CONV_2D",
        layer(L.DepthwiseConv2D, kernel_size=3, padding="same"),
        ALL,
    ),
    Case(
        "depthwise_conv_2d_dilated",
        "DEPTHWISE_CONV_2D",
        _dilated(True),
        ALL,
        shape=(12, 12, 4),
        what="Keras DepthwiseConv2D(dilation_rate=2, padding='same')",
    ),
    Case(
        "transpose_conv",
        "TRANSPOSE_CONV",
        layer(L.Conv2DTranspose, filters=4, kernel_size=3, strides=2, padding="same"),
        ALL,
    ),
    Case(
        "fully_connected",
        "FULLY_CONNECTED",
        lambda: (lambda d: lambda x: d(tf.reshape(x, [1, -1])))(L.Dense(10)),
        ALL,
    ),
    Case(
        "batch_matmul",
        "BATCH_MATMUL",
        fn(lambda x: tf.matmul(x, x, transpose_b=True)),
        ALL,
        shape=(6, 4),
    ),
    Case("average_pool_2d", "AVERAGE_POOL_2D", layer(L.AveragePooling2D, pool_size=2), ALL),
    Case("max_pool_2d", "MAX_POOL_2D", layer(L.MaxPooling2D, pool_size=2), ALL),
    Case(
        "lstm",
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        _tf_keras_lstm(False),
        ALL,
        shape=(5, 3),
        what="tf_keras LSTM(6, return_sequences=True)",
    ),
    Case(
        "lstm_bidirectional",
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        _tf_keras_lstm(True),
        FI,
        shape=(5, 3),
        what="tf_keras Bidirectional(LSTM(6)): int8 cell-state scales not a power of two",
    ),
    # --- reductions
    Case("mean", "MEAN", fn(lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True)), ALL),
    Case("sum", "SUM", fn(lambda x: tf.reduce_sum(x, axis=-1)), ALL),
    Case("reduce_max", "REDUCE_MAX", fn(lambda x: tf.reduce_max(x, axis=-1)), FI),
    Case("reduce_min", "REDUCE_MIN", fn(lambda x: tf.reduce_min(x, axis=2)), FI),
    Case("arg_max", "ARG_MAX", fn(lambda x: tf.argmax(x, axis=-1, output_type=tf.int32)), FI),
    Case("arg_min", "ARG_MIN", fn(lambda x: tf.argmin(x, axis=-1, output_type=tf.int32)), FI),
    Case(
        "arg_min_cast",
        "ARG_MIN",
        fn(lambda x: tf.cast(tf.argmin(x, axis=-1), tf.float32)),
        FI,
        what="ARG_MIN then CAST of its index output to float32",
    ),
    Case("cumsum", "CUMSUM", fn(lambda x: tf.cumsum(x, axis=2)), FI),
    Case("cumsum_exclusive", "CUMSUM", fn(lambda x: tf.cumsum(x, axis=2, exclusive=True)), FI),
    Case("cumsum_reverse", "CUMSUM", fn(lambda x: tf.cumsum(x, axis=1, reverse=True)), FI),
    # --- shape and data movement
    Case("reshape", "RESHAPE", fn(lambda x: tf.reshape(tf.nn.relu(x), [1, 16, 16])), ALL),
    Case("transpose", "TRANSPOSE", fn(lambda x: tf.transpose(x, [0, 3, 1, 2])), ALL),
    Case(
        "concatenation", "CONCATENATION", fn(lambda x: tf.concat([x, tf.nn.relu(x)], axis=-1)), ALL
    ),
    Case("pack", "PACK", fn(lambda x: tf.stack([x, tf.nn.relu(x)], axis=1)), ALL),
    Case("unpack", "UNPACK", fn(lambda x: tf.unstack(x, axis=1)[2]), ALL),
    Case("split", "SPLIT", fn(lambda x: tf.split(x, 2, axis=-1)[1]), ALL),
    Case("split_v", "SPLIT_V", fn(lambda x: tf.split(x, [1, 3], axis=-1)[1]), ALL),
    Case("slice", "SLICE", fn(lambda x: tf.slice(x, [0, 1, 2, 0], [1, 5, 4, 3])), ALL),
    Case("strided_slice", "STRIDED_SLICE", fn(lambda x: x[:, 1:7:2, ::3, :]), ALL),
    Case("strided_slice_neg", "STRIDED_SLICE", fn(lambda x: x[:, ::-2]), ALL, what="x[:, ::-2]"),
    Case(
        "strided_slice_shrink",
        "STRIDED_SLICE",
        fn(lambda x: x[0, :, 3, 1:3]),
        ALL,
        what="shrink to a rank-2 [8, 2] tensor",
    ),
    Case("reverse_v2", "REVERSE_V2", fn(lambda x: tf.reverse(x, [2])), ALL),
    Case("pad", "PAD", fn(lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]])), ALL),
    Case(
        "padv2",
        "PADV2",
        fn(lambda x: tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], constant_values=0.5)),
        ALL,
    ),
    Case(
        "mirror_pad_reflect",
        "MIRROR_PAD",
        fn(lambda x: tf.pad(x, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="REFLECT")),
        FI,
    ),
    Case(
        "mirror_pad_symmetric",
        "MIRROR_PAD",
        fn(lambda x: tf.pad(x, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="SYMMETRIC")),
        FI,
    ),
    Case(
        "broadcast_to",
        "BROADCAST_TO",
        fn(
            lambda x: (
                tf.broadcast_to(tf.reduce_mean(x, axis=1, keepdims=True), [1, 3, 8, 4])
                * tf.constant([1.0, 2.0, 3.0, 4.0])
            )
        ),
        FI,
    ),
    Case("gather", "GATHER", fn(lambda x: tf.gather(x, [3, 0, 0, 7, 5], axis=1)), FI),
    Case("gather_nd", "GATHER_ND", fn(lambda x: tf.gather_nd(x[0], [[0, 1], [7, 7], [3, 2]])), FI),
    Case(
        "space_to_batch_nd",
        "SPACE_TO_BATCH_ND",
        fn(lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]])),
        FI,
    ),
    Case(
        "batch_to_space_nd",
        "BATCH_TO_SPACE_ND",
        fn(
            lambda x: tf.batch_to_space(
                tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]) * 2.0, [2, 2], [[1, 0], [0, 1]]
            )
        ),
        FI,
        what="SPACE_TO_BATCH_ND, MUL, BATCH_TO_SPACE_ND with crops",
    ),
    Case("depth_to_space", "DEPTH_TO_SPACE", fn(lambda x: tf.nn.depth_to_space(x, 2)), FI),
    Case("space_to_depth", "SPACE_TO_DEPTH", fn(lambda x: tf.nn.space_to_depth(x, 2)), FI),
    Case(
        "resize_bilinear",
        "RESIZE_BILINEAR",
        fn(lambda x: tf.image.resize(x, [12, 12], "bilinear")),
        FI,
    ),
    Case(
        "resize_nearest_neighbor",
        "RESIZE_NEAREST_NEIGHBOR",
        fn(lambda x: tf.image.resize(x, [16, 16], "nearest")),
        ALL,
    ),
    Case("dynamic_update_slice", "DYNAMIC_UPDATE_SLICE", fn(_dyn_update), ALL),
    # --- dynamic-shape ops: only a dynamic batch keeps them from being folded
    Case("fill", "FILL", fn(lambda x: tf.maximum(tf.fill(tf.shape(x), 0.25), x)), FI, dynamic=True),
    Case(
        "zeros_like",
        "ZEROS_LIKE",
        fn(lambda x: tf.maximum(tf.zeros_like(x), x * 0.5)),
        FI,
        dynamic=True,
    ),
    Case(
        "broadcast_args",
        "BROADCAST_ARGS",
        fn(
            lambda x: (
                x
                * tf.broadcast_to(
                    tf.constant([1.0, 2.0, 3.0, 4.0]),
                    tf.broadcast_dynamic_shape(tf.shape(x), [1, 8, 8, 4]),
                )
            )
        ),
        FI,
        dynamic=True,
    ),
    # --- comparisons, logic, select (bool tensors inside the model)
    Case("equal", "EQUAL", fn(lambda x: tf.where(tf.equal(tf.minimum(x, 0.5), 0.5), x, -x)), FI),
    Case(
        "not_equal",
        "NOT_EQUAL",
        fn(lambda x: tf.where(tf.not_equal(tf.minimum(x, 0.5), 0.5), x, -x)),
        FI,
    ),
    Case("greater", "GREATER", fn(lambda x: tf.where(x > 0.25, x, 0.5 * x)), ALL),
    Case("greater_equal", "GREATER_EQUAL", fn(lambda x: tf.where(x >= 0.25, x, 0.5 * x)), FI),
    Case("less", "LESS", fn(lambda x: tf.where(x < 0.25, x, 0.5 * x)), FI),
    Case("less_equal", "LESS_EQUAL", fn(lambda x: tf.where(x <= 0.25, x, 0.5 * x)), FI),
    Case(
        "select_v2",
        "SELECT_V2",
        fn(lambda x: tf.where(x > 0.0, x, tf.constant(np.linspace(-1, 1, 4), tf.float32))),
        ALL,
    ),
    Case(
        "logical_and",
        "LOGICAL_AND",
        fn(lambda x: tf.where(tf.logical_and(x > -0.5, x < 0.5), x, -x)),
        FI,
        op_dtype=BOOL,
    ),
    Case(
        "logical_or",
        "LOGICAL_OR",
        fn(lambda x: tf.where(tf.logical_or(x < -0.5, x > 0.5), x, -x)),
        FI,
        op_dtype=BOOL,
    ),
    Case(
        "reduce_all",
        "REDUCE_ALL",
        fn(lambda x: tf.where(tf.reduce_all(x > -0.9, axis=-1, keepdims=True), x, -x)),
        FI,
        op_dtype=BOOL,
    ),
    Case(
        "cast_bool_float",
        "CAST",
        fn(lambda x: tf.cast(x > 0.0, tf.float32) * x),
        FI,
        op_dtype=BOOL,
        what="bool -> float32",
    ),
    # --- int32 tensors
    Case(
        "embedding",
        "GATHER",
        _embedding,
        FI,
        shape=(6,),
        dtype="int32",
        low=0,
        high=15,
        what="Keras Embedding(16, 4) on int32 indices shifted by LESS / ADD / SUB / SELECT_V2 on int32",
        op_dtype={F: "int32", I8: "int32"},
    ),
    Case(
        "int32_arith",
        "MUL",
        fn(lambda i: tf.cast(tf.maximum(i * 3 - 7, i // 2) % 5, tf.float32)),
        (F,),
        shape=(8,),
        dtype="int32",
        low=-20,
        high=20,
        what="MUL / SUB / MAXIMUM / FLOOR_DIV / FLOOR_MOD on int32, CAST to float32",
        op_dtype={F: "int32"},
    ),
    Case(
        "cast_int32_int8",
        "CAST",
        fn(lambda i: tf.cast(i, tf.int8)),
        (F,),
        shape=(8,),
        dtype="int32",
        low=-100,
        high=100,
        op_dtype={F: "int32"},
    ),
    Case(
        "cast_int32_int16",
        "CAST",
        fn(lambda i: tf.cast(i, tf.int16)),
        (F,),
        shape=(8,),
        dtype="int32",
        low=-1000,
        high=1000,
        op_dtype={F: "int32"},
    ),
    Case(
        "cast_float_int32",
        "CAST",
        fn(lambda x: tf.cast(tf.cast(x * 10.0, tf.int32) + 1, tf.float32)),
        (F,),
        low=-3,
        high=3,
        what="float32 -> int32 -> ADD int32 -> float32",
    ),
    # --- int32 activations unlock these (tests/corpus_check/test_op_corpus_late.py)
    Case(
        "dus_run_time_starts",
        "DYNAMIC_UPDATE_SLICE",
        fn(_dyn_update_run_time),
        FI,
        what="start indices computed at run time (ARG_MAX row, int32 MUL and ADD)",
    ),
    Case(
        "dus_int32_data",
        "DYNAMIC_UPDATE_SLICE",
        fn(_dyn_update_int32),
        (F,),
        dtype="int32",
        low=-50,
        high=50,
        op_dtype={F: "int32"},
        what="int32 operand, start indices [0, x[0, :3, 0, 0] % 4] at run time",
    ),
    Case(
        "zeros_like_output",
        "ZEROS_LIKE",
        fn(lambda x: tf.zeros_like(x * 2.0)),
        FI,
        dynamic=True,
        what="ZEROS_LIKE as the graph output, batch dynamic (not folded)",
    ),
    Case(
        "zeros_like_int32_output",
        "ZEROS_LIKE",
        fn(lambda x: tf.zeros_like(x + 1)),
        (F,),
        dtype="int32",
        low=-100,
        high=100,
        dynamic=True,
        op_dtype={F: "int32"},
        what="int32 ZEROS_LIKE as the graph output, batch dynamic",
    ),
    Case(
        "padv2_int32_value",
        "PADV2",
        fn(lambda x: tf.pad(x * 3, [[0, 0], [1, 2], [2, 1], [0, 0]], constant_values=-7)),
        (F,),
        dtype="int32",
        low=-1000,
        high=1000,
        op_dtype={F: "int32"},
        what="int32 PADV2 with the value -7",
    ),
    Case(
        "gather_batch_dims",
        "GATHER",
        fn(
            lambda x: tf.gather(
                x,
                tf.constant([[[7, 0, 3], [1, 1, 6], [5, 2, 2], [0, 7, 4]] * 2], tf.int32),
                axis=2,
                batch_dims=2,
            )
        ),
        FI,
        what="batch_dims 2: each row picks its own 3 columns",
    ),
]


# --------------------------------------------------------------------------------------------
# The "no file" cells of the op table (issue 35): int32 ops on an int32 model input (prefix
# i32_), ops on the bool tensors of comparisons (prefix boolean_). Outputs stay int32 / bool
# where the op's output is the model's.
# --------------------------------------------------------------------------------------------

I32 = {F: "int32"}
_C6 = np.array([3, -2, 5, 1, -7, 4], np.int32)  # a constant row, broadcast over the last axis


def _i32(name: str, op: str, f: Callable, what: str = "", **kw) -> Case:
    opts = {"shape": (4, 6), "dtype": "int32", "low": -20, "high": 20, **kw}
    return Case(f"i32_{name}", op, fn(f), (F,), what=what, op_dtype=I32, **opts)


def _i32_dyn_update(i):
    from tensorflow.compiler.tf2xla.python import xla

    return xla.dynamic_update_slice(i, tf.fill([1, 2, 3], 9), tf.constant([0, 1, 2]))


def _bool(name: str, op: str, f: Callable, what: str = "") -> Case:
    return Case(f"boolean_{name}", op, fn(f), FI, what=what, op_dtype=BOOL)


CELL_CASES: list[Case] = [
    _i32("add", "ADD", lambda i: i + _C6),
    _i32("sub", "SUB", lambda i: i - _C6),
    _i32("maximum", "MAXIMUM", lambda i: tf.maximum(i, _C6)),
    _i32("minimum", "MINIMUM", lambda i: tf.minimum(i, _C6)),
    _i32("div", "DIV", lambda i: tf.raw_ops.Div(x=i, y=tf.constant(_C6)), "truncating division"),
    _i32("squared_difference", "SQUARED_DIFFERENCE", lambda i: tf.math.squared_difference(i, _C6)),
    _i32("equal", "EQUAL", lambda i: tf.where(tf.equal(i % 3, 0), i, 0)),
    _i32("not_equal", "NOT_EQUAL", lambda i: tf.where(tf.not_equal(i % 3, 0), i, 0)),
    _i32("greater", "GREATER", lambda i: tf.where(i > _C6, i, 0)),
    _i32("greater_equal", "GREATER_EQUAL", lambda i: tf.where(i >= _C6, i, 0)),
    _i32("less", "LESS", lambda i: tf.where(i < _C6, i, 0)),
    _i32("less_equal", "LESS_EQUAL", lambda i: tf.where(i <= _C6, i, 0)),
    _i32("concatenation", "CONCATENATION", lambda i: tf.concat([i, i * 2], axis=-1)),
    _i32("pack", "PACK", lambda i: tf.stack([i, i * 2], axis=1)),
    _i32("unpack", "UNPACK", lambda i: tf.unstack(i, axis=1)[2]),
    _i32("pad", "PAD", lambda i: tf.pad(i, [[0, 0], [1, 2], [2, 1]])),
    _i32("slice", "SLICE", lambda i: tf.slice(i, [0, 1, 2], [1, 2, 3])),
    _i32("split", "SPLIT", lambda i: tf.split(i, 2, axis=-1)[1]),
    _i32("split_v", "SPLIT_V", lambda i: tf.split(i, [2, 4], axis=-1)[1]),
    _i32("strided_slice", "STRIDED_SLICE", lambda i: i[:, ::-2, 1:6:2]),
    _i32("reverse_v2", "REVERSE_V2", lambda i: tf.reverse(i, [2])),
    _i32("dynamic_update_slice", "DYNAMIC_UPDATE_SLICE", _i32_dyn_update, "starts [0, 1, 2]"),
    _i32(
        "fill",
        "FILL",
        lambda i: tf.maximum(tf.fill(tf.shape(i), 3), i),
        "dynamic batch",
        dynamic=True,
    ),
    _i32(
        "zeros_like",
        "ZEROS_LIKE",
        lambda i: tf.maximum(tf.zeros_like(i), i),
        "dynamic batch",
        dynamic=True,
    ),
    _i32(
        "broadcast_args",
        "BROADCAST_ARGS",
        lambda i: i * tf.broadcast_to(_C6, tf.broadcast_dynamic_shape(tf.shape(i), [1, 4, 6])),
        "int32 shapes of a dynamic batch",
        dynamic=True,
    ),
    _bool(
        "concatenation",
        "CONCATENATION",
        lambda x: tf.where(tf.concat([x > 0.0, x < -0.5], axis=-1), 1.0, -1.0),
    ),
    _bool("equal", "EQUAL", lambda x: tf.where(tf.equal(x > 0.0, x < 0.5), x, 0.5)),
    _bool("not_equal", "NOT_EQUAL", lambda x: tf.where(tf.not_equal(x > 0.0, x < 0.5), x, 0.5)),
    _bool("reverse_v2", "REVERSE_V2", lambda x: tf.where(tf.reverse(x > 0.0, [2]), x, 0.5)),
    _bool(
        "slice",
        "SLICE",
        lambda x: tf.where(tf.slice(x > 0.0, [0, 1, 2, 0], [1, 5, 4, 3]), 1.0, -1.0),
    ),
    _bool("strided_slice", "STRIDED_SLICE", lambda x: tf.where((x > 0.0)[:, 1:7:2], 1.0, -1.0)),
]
CASES += CELL_CASES


def sample_data(case: Case, n: int, tag: str) -> np.ndarray:
    rng = rng_for(f"{case.name}/{tag}")
    shape = (n, *case.shape)
    if case.dtype == "int32":
        return rng.integers(int(case.low), int(case.high), size=shape, endpoint=True).astype(
            np.int32
        )
    return rng.uniform(case.low, case.high, size=shape).astype(np.float32)


def convert(f: Callable, case: Case, variant: str) -> tuple[bytes, str]:
    """The converted model and the op sets it was converted with."""
    spec = tf.TensorSpec((None if case.dynamic else 1, *case.shape), getattr(tf, case.dtype))
    if type(f).__module__.startswith("tf_keras"):
        frozen = None
    else:
        frozen = convert_variables_to_constants_v2(
            tf.function(f, autograph=False).get_concrete_function(spec)
        )

    def run(opsets) -> bytes:
        conv = (
            tf.lite.TFLiteConverter.from_keras_model(f)
            if frozen is None
            else tf.lite.TFLiteConverter.from_concrete_functions([frozen])
        )
        if variant != F:
            data = sample_data(case, N_REPRESENTATIVE, "representative")
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.representative_dataset = lambda: ([d[None]] for d in data)
            conv.target_spec.supported_ops = opsets
            io_type = tf.int8 if variant == I8 else tf.int16
            if case.dtype == "float32":
                conv.inference_input_type = io_type
            conv.inference_output_type = io_type
        return conv.convert()

    if variant == F:
        return run(None), "builtins"
    strict = (
        [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if variant == I8
        else [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
    )
    try:
        return most_integer(lambda: run(strict)), "integer only"
    except Exception:  # the op has no integer kernel: let the converter leave it in float
        opsets = strict + [tf.lite.OpsSet.TFLITE_BUILTINS]
        return most_integer(lambda: run(opsets)), "integer with float ops allowed"


# Ops whose operands TFLite requires of one type; the 16x8 converter leaves their constant
# operand (GREATER's threshold, PADV2's pad value) float32 beside int16 data, a file LiteRT and
# TFLite Micro refuse to prepare.
SAME_TYPE_OPS = {"EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "PADV2"}


def quantize_16x8_constants(model: bytes) -> tuple[bytes, list[str]]:
    """The converter's float32 constant operand of an op in SAME_TYPE_OPS that reads int16 data,
    quantized to int16 on that data's scale (zero point 0), as the op needs; what was done."""
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    op_names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    sub, done = m.subgraphs[0], []
    for op in sub.operators:
        c = m.operatorCodes[op.opcodeIndex]
        name = op_names.get(max(c.builtinCode, c.deprecatedBuiltinCode))
        ins = [sub.tensors[i] for i in op.inputs if i >= 0]
        data16 = [t for t in ins if t.type == schema.TensorType.INT16]
        if name not in SAME_TYPE_OPS or not data16:
            continue
        scale = float(data16[0].quantization.scale[0])
        for t in ins:
            buf = m.buffers[t.buffer]
            if t.type != schema.TensorType.FLOAT32 or buf.data is None or len(buf.data) == 0:
                continue
            real = np.frombuffer(bytes(bytearray(buf.data)), np.float32)
            q = np.clip(np.round(real / scale), -32768, 32767).astype(np.int16)
            buf.data = np.frombuffer(q.tobytes(), np.uint8)
            t.type = schema.TensorType.INT16
            t.quantization = schema.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [scale], [0]
            done.append(
                f"{name}: float32 constant {t.name.decode()} {real.tolist()} -> int16 {q.tolist()}"
            )
    if not done:
        return model, done
    return bytes(flatbuffer_utils.convert_object_to_bytearray(m)), done


def most_integer(run: Callable[[], bytes], tries: int = 6) -> bytes:
    """The converter of TF 2.21 does not always decide alike: an int8 SPLIT / SPLIT_V comes out as
    a float island (DEQUANTIZE -> SPLIT -> QUANTIZE) in some runs. Convert again while the model
    has a DEQUANTIZE, and keep the one with the fewest ops (then the first), so reruns agree."""
    best = run()
    for _ in range(tries - 1):
        if "DEQUANTIZE" not in facts(best)["ops"]:
            break
        again = run()
        if len(facts(again)["ops"]) < len(facts(best)["ops"]):
            best = again
    return best


def facts(model: bytes) -> dict:
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    op_names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    types = {v: k.lower() for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    codes = m.operatorCodes
    sub = m.subgraphs[0]

    def name(op) -> str:
        c = codes[op.opcodeIndex]
        code = max(c.builtinCode, c.deprecatedBuiltinCode)
        return c.customCode.decode() if code == schema.BuiltinOperator.CUSTOM else op_names[code]

    def tensor(i: int) -> dict:
        t = sub.tensors[i]
        return {"shape": [int(d) for d in t.shape], "dtype": types[t.type]}

    ops = [name(op) for op in sub.operators]
    dtypes = {}
    for op in sub.operators:  # the type of each op's first output, as its dtype
        dtypes.setdefault(name(op), set()).add(types[sub.tensors[op.outputs[0]].type])
    return {
        "inputs": [tensor(i) for i in sub.inputs],
        "outputs": [tensor(i) for i in sub.outputs],
        "ops": ops,
        "op_output_dtypes": {k: sorted(v) for k, v in dtypes.items()},
    }


def first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errs = [ln for ln in lines if "error:" in ln]
    return (errs or lines or [type(exc).__name__])[0][:300]


# --------------------------------------------------------------------------------------------
# Ops the converter does not write from TF: built with tests/support/tflite_build.
# --------------------------------------------------------------------------------------------


def builder_models() -> dict[str, tuple[bytes, dict]]:
    from tests.support.tflite_build import T, graph_model, options

    rng = rng_for("builder")
    out = {}
    # EMBEDDING_LOOKUP: int32 ids [3] into a float32 / int8 table [10, 4].
    table = rng.uniform(-1, 1, size=(10, 4)).astype(np.float32)
    out["embedding_lookup_float32.tflite"] = (
        graph_model(
            [
                T([3], "int32", name="ids"),
                T([10, 4], "float32", data=table, name="table"),
                T([3, 4], "float32", name="out"),
            ],
            [("EMBEDDING_LOOKUP", [0, 1], [2], None)],
            [0],
            [2],
        ),
        {
            "op": "EMBEDDING_LOOKUP",
            "variant": F,
            "dtype": "float32",
            "input_range": [0, 9],
            "what": "int32 ids into a float32 table",
        },
    )
    q = np.round(table / (1 / 127)).astype(np.int8)
    out["embedding_lookup_int8.tflite"] = (
        graph_model(
            [
                T([3], "int32", name="ids"),
                T([10, 4], "int8", scale=1 / 127, zero_point=0, data=q, name="table"),
                T([3, 4], "int8", scale=1 / 127, zero_point=0, name="out"),
            ],
            [("EMBEDDING_LOOKUP", [0, 1], [2], None)],
            [0],
            [2],
        ),
        {
            "op": "EMBEDDING_LOOKUP",
            "variant": I8,
            "dtype": "int8",
            "input_range": [0, 9],
            "what": "int32 ids into an int8 table, int8 output",
        },
    )
    # L2_POOL_2D: float32 only in TFLite Micro.
    pool = options("Pool2DOptions", padding=1, strideW=2, strideH=2, filterWidth=2, filterHeight=2)
    out["l2_pool_2d_float32.tflite"] = (
        graph_model(
            [T([1, 8, 8, 4], "float32", name="x"), T([1, 4, 4, 4], "float32", name="out")],
            [("L2_POOL_2D", [0], [1], pool)],
            [0],
            [1],
        ),
        {
            "op": "L2_POOL_2D",
            "variant": F,
            "dtype": "float32",
            "input_range": [-1, 1],
            "what": "2x2 stride 2 VALID",
        },
    )
    # LOGICAL_NOT: the converter folds tf.logical_not into the comparison or the select before it.
    out["logical_not_float32.tflite"] = (
        graph_model(
            [
                T([1, 8], "float32", name="x"),
                T([1], "float32", data=np.array([0.25], np.float32), name="c"),
                T([1, 8], "bool", name="gt"),
                T([1, 8], "bool", name="out"),
            ],
            [("GREATER", [0, 1], [2], None), ("LOGICAL_NOT", [2], [3], None)],
            [0],
            [3],
        ),
        {
            "op": "LOGICAL_NOT",
            "variant": F,
            "dtype": "bool",
            "input_range": [-1, 1],
            "what": "GREATER then LOGICAL_NOT, bool output",
        },
    )
    # 16x8 ops the converter refuses ("Unsupported input type INT16": PRELU, SELECT_V2,
    # DYNAMIC_UPDATE_SLICE) or writes with an unquantized float32 constant that LiteRT and TFLite
    # Micro refuse (GREATER's threshold, PADV2's pad value): int16 activations, zero point 0.
    a = {"scale": 1 / 4096, "zero_point": 0}  # activations in [-8, 8)
    shape = [1, 8, 8, 4]

    def i16(name: str, data=None, shp=None):
        return T(shp or shape, "int16", name=name, data=data, **a)

    def builder_16x8(name, tensors, ops, outputs, what):
        out[f"{name}_builder_int16.tflite"] = (
            graph_model(tensors, ops, [0], outputs),
            {
                "op": name.upper(),
                "variant": I16,
                "dtype": "int16",
                "input_range": [-8, 8],
                "what": what,
            },
        )

    thr = np.array([1024], np.int16)  # 0.25
    builder_16x8(
        "greater",
        [i16("x"), i16("thr", thr, [1]), T(shape, "bool", name="cond"), i16("out")],
        [("GREATER", [0, 1], [2], None), ("SELECT_V2", [2, 0, 1], [3], None)],
        [3],
        "GREATER against an int16 constant, then SELECT_V2",
    )
    builder_16x8(
        "select_v2",
        [
            i16("x"),
            i16("zero", np.zeros(1, np.int16), [1]),
            T(shape, "bool", name="cond"),
            i16(
                "y", (np.arange(4) * 1000 - 2000).astype(np.int16).reshape(1, 1, 1, 4), [1, 1, 1, 4]
            ),
            i16("out"),
        ],
        [("GREATER", [0, 1], [2], None), ("SELECT_V2", [2, 0, 3], [4], None)],
        [4],
        "SELECT_V2(x > 0, x, per-channel constant), broadcast",
    )
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    builder_16x8(
        "padv2",
        [
            i16("x"),
            T([4, 2], "int32", name="pads", data=pads),
            i16("value", np.array([2048], np.int16), [1]),
            i16("out", shp=[1, 10, 10, 4]),
        ],
        [("PADV2", [0, 1, 2], [3], None)],
        [3],
        "PADV2 with an int16 pad value of 0.5",
    )
    alpha = np.array([13, 26, 38, 51], np.int8).reshape(1, 1, 4)  # 0.1 .. 0.4
    builder_16x8(
        "prelu",
        [
            i16("x"),
            T([1, 1, 4], "int8", name="alpha", data=alpha, scale=1 / 128, zero_point=0),
            i16("out"),
        ],
        [("PRELU", [0, 1], [2], None)],
        [2],
        "PRELU, int16 input, int8 alpha per channel (TFLite Micro's 16x8 PRELU)",
    )
    upd = np.full((1, 2, 2, 4), 2048, np.int16)
    builder_16x8(
        "dynamic_update_slice",
        [
            i16("x"),
            i16("update", upd, [1, 2, 2, 4]),
            T([4], "int32", name="start", data=np.array([0, 3, 2, 0], np.int32)),
            i16("out"),
        ],
        [("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3], None)],
        [3],
        "a constant 2x2 update at [0, 3, 2, 0]",
    )
    # SVDF (TFLite Micro's keyword_scrambled example): rank 2, 2 units, memory 5, on [1, 8]
    # frames; the activation state is a variable tensor of zeros (one invoke from a reset state).
    svdf = options("SVDFOptions", rank=2, fusedActivationFunction=0)
    wf = rng.uniform(-1, 1, size=(4, 8)).astype(np.float32)
    wt = rng.uniform(-1, 1, size=(4, 5)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, size=(2,)).astype(np.float32)
    out["svdf_float32.tflite"] = (
        graph_model(
            [
                T([1, 8], "float32", name="x"),
                T([4, 8], "float32", data=wf, name="weights_feature"),
                T([4, 5], "float32", data=wt, name="weights_time"),
                T([2], "float32", data=bias, name="bias"),
                T([1, 20], "float32", name="state", is_variable=True),
                T([1, 2], "float32", name="out"),
            ],
            [("SVDF", [0, 1, 2, 3, 4], [5], svdf)],
            [0],
            [5],
        ),
        {
            "op": "SVDF",
            "variant": F,
            "dtype": "float32",
            "input_range": [-1, 1],
            "what": "rank 2, 2 units, memory 5, state reset to zeros",
        },
    )
    s_in, s_wf, s_wt, s_state, s_out = 1 / 128, 1 / 127, 1 / 32767, 1 / 4096, 1 / 16
    out["svdf_int8.tflite"] = (
        graph_model(
            [
                T([1, 8], "int8", name="x", scale=s_in, zero_point=0),
                T([4, 8], "int8", data=np.round(wf / s_wf), name="weights_feature", scale=s_wf),
                T([4, 5], "int16", data=np.round(wt / s_wt), name="weights_time", scale=s_wt),
                T(
                    [2],
                    "int32",
                    data=np.round(bias / (s_state * s_wt)),
                    name="bias",
                    scale=s_state * s_wt,
                ),
                T([1, 20], "int16", name="state", is_variable=True, scale=s_state),
                T([1, 2], "int8", name="out", scale=s_out, zero_point=0),
            ],
            # LiteRT's integer SVDF runs with a fused RELU only (as the keyword example has it)
            [
                (
                    "SVDF",
                    [0, 1, 2, 3, 4],
                    [5],
                    options("SVDFOptions", rank=2, fusedActivationFunction=1),
                )
            ],
            [0],
            [5],
        ),
        {
            "op": "SVDF",
            "variant": I8,
            "dtype": "int8",
            "input_range": [-1, 1],
            "what": "full-integer SVDF as TFLite Micro runs it: int8 input / weights_feature, int16"
            " weights_time and state, int32 bias, fused RELU",
        },
    )
    out["detection_postprocess_float32.tflite"] = (
        detection_postprocess(rng),
        {
            "op": "TFLite_Detection_PostProcess",
            "variant": F,
            "dtype": "float32",
            "input_range": [-1, 1],
            "what": "custom op of SSD detectors: 6 anchors, 2 classes + background, fast NMS, 3"
            " detections; box encodings the input, class scores and anchors constant",
        },
    )
    # EXPAND_DIMS and SQUEEZE: the converter writes RESHAPE for both when the shapes are static.
    for dtype, variant, q in (
        ("float32", F, {}),
        ("int8", I8, {"scale": 1 / 128, "zero_point": 0}),
    ):
        out[f"expand_dims_builder_{dtype}.tflite"] = (
            graph_model(
                [
                    T([1, 8, 4], dtype, name="x", **q),
                    T([1], "int32", data=np.array([2], np.int32), name="axis"),
                    T([1, 8, 1, 4], dtype, name="out", **q),
                ],
                [("EXPAND_DIMS", [0, 1], [2], None)],
                [0],
                [2],
            ),
            {
                "op": "EXPAND_DIMS",
                "variant": variant,
                "dtype": dtype,
                "input_range": [-1, 1],
                "what": "[1, 8, 4] -> [1, 8, 1, 4]",
            },
        )
        out[f"squeeze_builder_{dtype}.tflite"] = (
            graph_model(
                [T([1, 8, 1, 4], dtype, name="x", **q), T([1, 8, 4], dtype, name="out", **q)],
                [("SQUEEZE", [0], [1], options("SqueezeOptions", squeezeDims=[2]))],
                [0],
                [1],
            ),
            {
                "op": "SQUEEZE",
                "variant": variant,
                "dtype": dtype,
                "input_range": [-1, 1],
                "what": "[1, 8, 1, 4] -> [1, 8, 4], squeeze_dims [2]",
            },
        )
    # An int8 LSTM whose int16 cell state's scale is not a power of two (the converter writes
    # 2^-15; other tools need not): LiteRT's Prepare fails on it silently and outputs 0.
    from tests.support.lstm_models import int8_lstm_model

    out["lstm_cell_scale_int8.tflite"] = (
        int8_lstm_model(cell_scale=2.0**-12 * 1.3, cell_clip=0.9, seed=7),
        {
            "op": "UNIDIRECTIONAL_SEQUENCE_LSTM",
            "variant": I8,
            "dtype": "int8",
            "input_range": [-1, 1],
            "what": "integer LSTM (6 steps, 5 features, 7 cells) whose cell-state scale is"
            " 1.3 * 2^-12, not a power of two",
        },
    )
    out.update(detection_variants())
    # 16x8 PRELU with a slope along two axes (MLI's prelu takes one): its own seed, so the files
    # above keep their data.
    slope = rng_for("prelu_general").integers(-40, 100, size=(1, 8, 4)).astype(np.int8)
    alpha = T([1, 8, 4], "int8", name="alpha", data=slope, scale=1 / 128, zero_point=5)
    out["prelu_general_builder_int16.tflite"] = (
        graph_model([i16("x"), alpha, i16("out")], [("PRELU", [0, 1], [2], None)], [0], [2]),
        {
            "op": "PRELU",
            "variant": I16,
            "dtype": "int16",
            "input_range": [-8, 8],
            "what": "PRELU, int16 input, int8 alpha [1, 8, 4] (along W and C: prelu16 fallback C)",
        },
    )
    out.update(cell_builder_models())
    return out


def cell_builder_models() -> dict[str, tuple[bytes, dict]]:
    """The op table's "no file" cells the converter does not write (issue 35): CAST from int8 /
    int16, DEQUANTIZE of int8 / int16, QUANTIZE from float32, int8 and int16 (requantize),
    EXPAND_DIMS of int16."""
    from tests.support.tflite_build import T, graph_model

    shape = [1, 8, 4]
    q8 = {"scale": 0.05, "zero_point": 3}
    q8b = {"scale": 0.02, "zero_point": -5}
    q16 = {"scale": 1 / 4096, "zero_point": 0}
    q16b = {"scale": 1 / 2048, "zero_point": 0}
    kinds = {"float32": (F, "float32", {}, [-1, 1]), "int8": (I8, "int8", q8, [-1, 1])}
    kinds["int16"] = (I16, "int16", q16, [-8, 8])
    out = {}

    def one(stem, op, src, dst_dtype, dst_q, what, extra=(), variant=None, raw=False):
        """`variant`: the format the table converts in (fx16 where an int16 tensor is written);
        `raw`: an input without quantization (CAST's int16)."""
        own, dtype, q, rng = kinds[src]
        tensors = [T(shape, dtype, name="x", **({} if raw else q)), *extra]
        variant = variant or own
        dst = T(shape if op != "EXPAND_DIMS" else [1, 8, 1, 4], dst_dtype, name="out", **dst_q)
        ins = list(range(len(tensors)))
        out[f"{stem}_builder_{src}.tflite"] = (
            graph_model([*tensors, dst], [(op, ins, [len(tensors)], None)], [0], [len(tensors)]),
            {"op": op, "variant": variant, "dtype": src, "input_range": rng, "what": what},
        )

    # CAST ignores quantization: the raw values (an int16 input without quantization, as a
    # model's int16 integers are)
    one("cast_to_int32", "CAST", "int8", "int32", {}, "int8 (0.05, 3) -> int32, raw values")
    one("cast_to_float", "CAST", "int8", "float32", {}, "int8 -> float32", variant=F, raw=True)
    one("cast_to_int32", "CAST", "int16", "int32", {}, "int16 -> int32", raw=True)
    one("cast_to_int8", "CAST", "int16", "int8", {}, "int16 -> int8, the low 8 bits", raw=True)
    one("dequantize", "DEQUANTIZE", "int8", "float32", {}, "int8 (0.05, 3) -> float32")
    one("dequantize", "DEQUANTIZE", "int16", "float32", {}, "int16 (1/4096, 0) -> float32")
    one("quantize_to_int8", "QUANTIZE", "float32", "int8", q8, "float32 -> int8 (0.05, 3)")
    one("quantize_to_int16", "QUANTIZE", "float32", "int16", q16, "to int16 (1/4096)", variant=I16)
    one("quantize_to_int8", "QUANTIZE", "int8", "int8", q8b, "requantize (0.05, 3) -> (0.02, -5)")
    one("quantize_to_int16", "QUANTIZE", "int8", "int16", q16, "(0.05, 3) -> 1/4096", variant=I16)
    one("quantize_to_int8", "QUANTIZE", "int16", "int8", q8, "int16 (1/4096) -> int8 (0.05, 3)")
    one("quantize_to_int16", "QUANTIZE", "int16", "int16", q16b, "requantize 1/4096 -> 1/2048")
    axis = T([1], "int32", data=np.array([2], np.int32), name="axis")
    one("expand_dims", "EXPAND_DIMS", "int16", "int16", q16, "[1, 8, 4] -> [1, 8, 1, 4]", [axis])
    return out


def detection_variants() -> dict[str, tuple[bytes, dict]]:
    """TFLite_Detection_PostProcess, 20 anchors (10 places, each twice), 3 classes + background,
    box encodings the input and class scores constant (one input, as the corpus tools feed):
    regular NMS, and fast NMS with 2 classes per detection. TFLite Micro runs float32 inputs only (its
    kernel refuses others), so there is no int8 variant."""
    from tests.support.detection_models import detection_model, grid_anchors, options

    rng = rng_for("detection")
    anchors = np.concatenate([grid_anchors(2, 5)] * 2)  # each place twice: the NMS suppresses
    scores = rng.uniform(0, 1, size=(1, 20, 4)).astype(np.float32)
    common = dict(num_classes=3, max_detections=12, nms_score_threshold=0.5)
    variants = {
        "detection_postprocess_regular_float32.tflite": (
            options(**common, use_regular_nms=True, detections_per_class=4),
            "regular NMS (per class, 4 per class), 20 anchors (10 places twice), 3 classes + background,"
            " 12 detections; box encodings the input, class scores and anchors constant",
        ),
        "detection_postprocess_multiclass_float32.tflite": (
            # 6 of the ~10 places kept: every output row written (LiteRT leaves rows past the
            # count as they were, which a whole-output comparison would read)
            options(**{**common, "max_detections": 6}, max_classes_per_detection=2),
            "fast NMS with 2 classes per detection, 20 anchors (10 places twice), 3 classes +"
            " background, 6 detections; box encodings the input, class scores and anchors constant",
        ),
    }
    return {
        name: (
            detection_model(anchors, opts, scores=scores),
            {
                "op": "TFLite_Detection_PostProcess",
                "variant": F,
                "dtype": "float32",
                "input_range": [-1, 1],
                "what": what,
            },
        )
        for name, (opts, what) in variants.items()
    }


def detection_postprocess(rng: np.random.Generator) -> bytes:
    """TFLite_Detection_PostProcess as SSD exports write it (the options of TFLite Micro's test
    model): box encodings [1, 6, 4] (the model's input), class scores [1, 6, 3] and anchors
    [6, 4] constant; outputs boxes [1, 3, 4], classes [1, 3], scores [1, 3], count [1]."""
    import tflite
    from flatbuffers import flexbuffers

    from tests.support.tflite_build import Buf, Code, Op, Spec, T, build

    scores = rng.uniform(0, 1, size=(1, 6, 3)).astype(np.float32)
    centers = np.stack(np.meshgrid([0.25, 0.75], [0.2, 0.5, 0.8], indexing="ij"), -1).reshape(6, 2)
    anchors = np.concatenate([centers, np.full((6, 2), 0.4)], axis=1).astype(np.float32)
    opts = {
        "max_detections": 3,
        "max_classes_per_detection": 1,
        "detections_per_class": 1,
        "use_regular_nms": False,
        "nms_score_threshold": 0.3,
        "nms_iou_threshold": 0.5,
        "num_classes": 2,
        "y_scale": 10.0,
        "x_scale": 10.0,
        "h_scale": 5.0,
        "w_scale": 5.0,
    }
    tensors = [
        T([1, 6, 4], "float32", name="box_encodings"),
        T([1, 6, 3], "float32", name="class_predictions", buffer=1),
        T([6, 4], "float32", name="anchors", buffer=2),
        T([1, 3, 4], "float32", name="detection_boxes"),
        T([1, 3], "float32", name="detection_classes"),
        T([1, 3], "float32", name="detection_scores"),
        T([1], "float32", name="num_detections"),
    ]
    op = Op(0, [0, 1, 2], [3, 4, 5, 6], custom_options=bytes(flexbuffers.Dumps(opts)))
    code = Code(builtin=tflite.BuiltinOperator.CUSTOM, custom="TFLite_Detection_PostProcess")
    buffers = [Buf(), Buf(scores.tobytes()), Buf(anchors.tobytes())]
    return build(Spec(tensors, [op], [code], buffers, inputs=[0], outputs=[3, 4, 5, 6]))


NOT_MADE = {
    "SHAPE": "no model of its own: the converter folds it into a constant unless the shape is dynamic; it appears in fill_* and broadcast_args_* (dynamic batch)",
    "EXPAND_DIMS / SQUEEZE (converter)": "with static shapes the converter writes RESHAPE for tf.expand_dims / tf.squeeze; the files expand_dims_builder_* / squeeze_builder_* are builder-made",
    "SELECT": "not in TFLite Micro's resolver (it registers SELECT_V2 only), yet the converter writes SELECT for tf.where with operands of one shape (see equal_*, greater_*, logical_*)",
    "UNIDIRECTIONAL_SEQUENCE_LSTM 16x8": "LiteRT has no 16x8 (int16 activations) LSTM kernel and the converter refuses one (lstm_int16 under dropped): no file to check against",
    "QUANTIZE / DEQUANTIZE (converter)": "no converter model of their own: every int8 / 16x8 model with a float island has them, and int8 models requantize with QUANTIZE; the files quantize_to_*_builder_* / dequantize_builder_* are builder-made",
}


def main(argv: list[str]) -> int:
    if tf.__version__ != TF_VERSION:
        print(
            f"note: TensorFlow {tf.__version__}; the files came from {TF_VERSION}", file=sys.stderr
        )
    tf.config.experimental.enable_op_determinism()
    only = list(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = OUT / "corpus.json"
    doc = {"files": {}, "dropped": {}}
    if only and manifest.exists():
        doc = json.loads(manifest.read_text())
    for case in CASES:
        if only and not any(s in case.name for s in only):
            continue
        for variant in case.variants:
            stem = f"{case.name}_{'int16' if variant == I16 else variant}"
            doc["files"].pop(stem + ".tflite", None)
            doc["dropped"].pop(stem + ".tflite", None)
            keras.utils.set_random_seed(zlib.crc32(case.name.encode()) ^ SEED)
            try:
                model, opsets = convert(case.make(), case, variant)
            except Exception as exc:
                doc["dropped"][stem + ".tflite"] = first_line(exc)
                print(f"{stem:34s} DROPPED: {first_line(exc)}", file=sys.stderr)
                continue
            fixed = []
            if variant == I16:
                model, fixed = quantize_16x8_constants(model)
            (OUT / f"{stem}.tflite").write_bytes(model)
            info = facts(model)
            dtype = case.op_dtype.get(variant) or {I16: "int16"}.get(variant, variant)
            entry = {
                "op": case.op,
                "variant": variant,
                "dtype": dtype,
                "batch": "dynamic" if case.dynamic else "fixed",
                "what": case.what,
                "converter_opsets": opsets,
                "op_present": case.op in info["ops"],
                "input_range": [case.low, case.high],
                "bytes": len(model),
                **info,
            }
            if fixed:  # the converter's file LiteRT refuses, made valid
                entry["constants_quantized"] = fixed
            doc["files"][stem + ".tflite"] = entry
            print(f"{stem:34s} {len(model):7d} B  {' '.join(info['ops'])}")
    if not only or any("builder" in s for s in only):
        for name, (model, entry) in builder_models().items():
            (OUT / name).write_bytes(model)
            info = {k: v for k, v in facts(model).items()}
            doc["files"][name] = {
                **entry,
                "batch": "fixed",
                "converter_opsets": "builder",
                "op_present": True,
                "bytes": len(model),
                **info,
            }
            print(f"{name:34s} {len(model):7d} B  builder")
    doc["files"] = dict(sorted(doc["files"].items()))
    doc["dropped"] = dict(sorted(doc["dropped"].items()))
    doc["not_made"] = NOT_MADE
    doc["generator"] = {
        "script": "tools/make_op_corpus.py",
        "tensorflow": tf.__version__,
        "seed": SEED,
    }
    manifest.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
