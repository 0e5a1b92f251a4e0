"""Write the small TFLite sample models that mlitool's docs and tests use.

Generated with TensorFlow 2.21.0 (the `tensorflow-cpu` wheel, Keras 3.15.1, numpy 2.4.6, Python 3.11).
TensorFlow is not a dependency of mlitool: run this in a virtual environment of its own, e.g.

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python samples/make_samples.py

Everything is seeded (numpy generators, Keras, TF op determinism), so a rerun with the same versions
writes byte-identical files. int8 models are full-integer quantized with a representative dataset:
int8 input and output tensors, int8 activations, int8 weights (per-channel for CONV_2D and
DEPTHWISE_CONV_2D, as the converter does by default), int32 biases.

Outputs (see samples/README.md):
  cnn_int8.tflite, cnn_float.tflite   small image CNN (32x32x3 -> 10 classes), float32 twin
  fc_int8.tflite, fc_float.tflite     fully connected 64 -> 32 -> 16 -> 4
  cnn_calib.npy                       float32 [32,32,32,3] calibration inputs (also the quantizer's)
  cnn_input_int8.npy                  int8 [4,32,32,3] inputs for cnn_int8 (feed x[i:i+1])
  ops/*.tflite                        one tiny model per op, int8 and (`*_float`) float32
  ops.json                            op list of every file written, as the converter produced it
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # bit-stable float kernels while training

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402
from tensorflow.lite.tools import flatbuffer_utils  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

TF_VERSION = "2.21.0"
SEED = 20240611
OUT = Path(__file__).resolve().parent
OPS_DIR = OUT / "ops"

CNN_SHAPE = (1, 32, 32, 3)
CNN_CLASSES = 10


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from a name, so each model's data does not depend on the others."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# --------------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------------


def convert(
    fn: Callable,
    shapes: list[tuple[int, ...]],
    samples: list[list[np.ndarray]] | None,
    *,
    io_int8: bool = True,
    per_tensor_dense: bool = False,
) -> bytes:
    """Convert a function of float32 inputs; int8 when `samples` (representative data) are given.

    Variables (Keras weights) are frozen into constants first, so the file holds plain constant
    tensors with static shapes, batch 1.
    """
    concrete = tf.function(fn, autograph=False).get_concrete_function(
        *[tf.TensorSpec(s, tf.float32) for s in shapes]
    )
    frozen = convert_variables_to_constants_v2(concrete)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
    if samples is not None:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: iter(samples)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        # Private flag, the only switch for per-tensor FULLY_CONNECTED weights in TF 2.21.
        conv._experimental_disable_per_channel_quantization_for_dense_layers = per_tensor_dense
        if io_int8:
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
    return conv.convert()


def op_names(model: bytes) -> list[str]:
    """Op types in execution order, read from the flatbuffer itself."""
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in m.operatorCodes]
    return [names[codes[op.opcodeIndex]] for op in m.subgraphs[0].operators]


def reshape_to_squeeze(model: bytes, squeeze_dims: list[int]) -> bytes:
    """Turn the single RESHAPE of `model` into a SQUEEZE (the converter always emits RESHAPE)."""
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    (code,) = m.operatorCodes
    code.builtinCode = schema.BuiltinOperator.SQUEEZE
    code.deprecatedBuiltinCode = schema.BuiltinOperator.SQUEEZE
    code.version = 1
    sub = m.subgraphs[0]
    (op,) = sub.operators
    op.inputs = op.inputs[:1]  # SQUEEZE has no shape input
    op.builtinOptionsType = schema.BuiltinOptions.SqueezeOptions
    op.builtinOptions = schema.SqueezeOptionsT()
    op.builtinOptions.squeezeDims = list(squeeze_dims)
    return bytes(flatbuffer_utils.convert_object_to_bytearray(m))


# --------------------------------------------------------------------------------------------
# The CNN and the fully connected model
# --------------------------------------------------------------------------------------------


def synthetic_images(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Images in [0, 1]: one smooth colour template per class plus noise; labels 0..9."""
    yy, xx = np.mgrid[0:32, 0:32] / 31.0
    freq = rng_for("templates").uniform(0.5, 3.0, size=(CNN_CLASSES, 3, 2))
    phase = rng_for("templates").uniform(0, 2 * np.pi, size=(CNN_CLASSES, 3))
    templates = 0.5 + 0.4 * np.sin(
        2 * np.pi * (freq[:, :, 0, None, None] * xx + freq[:, :, 1, None, None] * yy)
        + phase[:, :, None, None]
    )  # [class, 3, 32, 32]
    labels = rng.integers(0, CNN_CLASSES, size=n)
    images = templates[labels].transpose(0, 2, 3, 1) + rng.normal(0, 0.15, size=(n, 32, 32, 3))
    return np.clip(images, 0.0, 1.0).astype(np.float32), labels


def build_cnn() -> keras.Model:
    L = keras.layers
    x_in = keras.Input(CNN_SHAPE[1:])
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv1")(x_in)  # 32x32x16
    x = L.MaxPooling2D(2, name="maxpool")(x)  # 16x16x16
    y = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dwconv")(x)
    y = L.Conv2D(16, 1, name="pwconv")(y)
    x = L.ReLU(name="res_relu")(L.Add(name="residual")([x, y]))
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu", name="conv2")(x)  # 8x8x32
    x = L.AveragePooling2D(8, name="avgpool")(x)  # 1x1x32
    x = L.Flatten(name="flatten")(x)
    x = L.Dense(CNN_CLASSES, name="fc")(x)
    out = L.Softmax(name="softmax")(x)
    return keras.Model(x_in, out, name="cnn")


def train(model: keras.Model, x: np.ndarray, y: np.ndarray, epochs: int) -> float:
    """A short fit so weights and activations are not random noise; returns training accuracy."""
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    hist = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=True, verbose=0)
    return float(hist.history["accuracy"][-1])


def make_cnn(written: dict[str, list[str]]) -> None:
    model = build_cnn()
    x_train, y_train = synthetic_images(rng_for("cnn-train"), 2000)
    acc = train(model, x_train, y_train, epochs=3)
    print(f"cnn: training accuracy {acc:.3f}")

    calib, _ = synthetic_images(rng_for("cnn-calib"), 32)
    np.save(OUT / "cnn_calib.npy", calib)
    fn = lambda t: model(t, training=False)  # noqa: E731
    write("cnn_float.tflite", convert(fn, [CNN_SHAPE], None), written)
    int8 = convert(fn, [CNN_SHAPE], [[c[None]] for c in calib])
    write("cnn_int8.tflite", int8, written)

    # int8 inputs: fresh images quantized with the int8 model's own input parameters.
    scale, zero = input_quant(int8)
    images, _ = synthetic_images(rng_for("cnn-input"), 4)
    q = np.clip(np.round(images / scale) + zero, -128, 127).astype(np.int8)
    np.save(OUT / "cnn_input_int8.npy", q)


def make_fc(written: dict[str, list[str]]) -> None:
    L = keras.layers
    x_in = keras.Input((64,))
    x = L.Dense(32, activation="relu", name="fc1")(x_in)
    x = L.Dense(16, activation="relu", name="fc2")(x)
    out = L.Dense(4, name="fc3")(x)
    model = keras.Model(x_in, out, name="fc")

    # Four classes told apart by which quarter of the 64 features carries a positive bump.
    rng = rng_for("fc-train")
    labels = rng.integers(0, 4, size=2000)
    feats = rng.normal(0, 1, size=(2000, 64)).astype(np.float32)
    feats[np.arange(2000)[:, None], labels[:, None] * 16 + np.arange(16)] += 1.5
    acc = train(keras.Model(x_in, L.Softmax()(out)), feats, labels, epochs=3)  # ships logits
    print(f"fc: training accuracy {acc:.3f}")

    calib = [[f[None]] for f in rng_for("fc-calib").normal(0, 1, (32, 64)).astype(np.float32)]
    fn = lambda t: model(t, training=False)  # noqa: E731
    write("fc_float.tflite", convert(fn, [(1, 64)], None), written)
    write("fc_int8.tflite", convert(fn, [(1, 64)], calib), written)


def input_quant(model: bytes) -> tuple[float, int]:
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    sub = m.subgraphs[0]
    q = sub.tensors[sub.inputs[0]].quantization
    return float(q.scale[0]), int(q.zeroPoint[0])


# --------------------------------------------------------------------------------------------
# One model per op
# --------------------------------------------------------------------------------------------


@dataclass
class OpCase:
    """One tiny model: `make(rng)` returns the function; inputs are (shape, spread) pairs."""

    name: str
    make: Callable[[np.random.Generator], Callable]
    inputs: list[tuple[tuple[int, ...], float]]
    expect: list[str]  # ops the int8 file must contain
    float_twin: bool = True
    io_int8: bool = True
    per_tensor_dense: bool = False
    post: Callable[[bytes], bytes] | None = None


def const(rng: np.random.Generator, shape, spread: float = 1.0) -> tf.Tensor:
    return tf.constant(rng.normal(0, spread, size=shape).astype(np.float32))


def with_const(f: Callable, c: tf.Tensor) -> Callable:
    return lambda a: f(a, c)


def binary_cases() -> list[OpCase]:
    fns = {
        "ADD": tf.add,
        "SUB": tf.subtract,
        "MUL": tf.multiply,
        "MINIMUM": tf.minimum,
        "MAXIMUM": tf.maximum,
    }
    cases = []
    for op, f in fns.items():
        cases.append(
            OpCase(
                op.lower(),
                lambda rng, f=f: lambda a, b: f(a, b),
                [((1, 4, 4, 8), 1.0), ((1, 4, 4, 8), 3.0)],
                [op],
            )
        )
        # The constant is a per-channel vector, broadcast over H and W.
        cases.append(
            OpCase(
                op.lower() + "_const",
                lambda rng, f=f: with_const(f, const(rng, (8,), 2.0)),
                [((1, 4, 4, 8), 1.0)],
                [op],
            )
        )
    return cases


def conv_bias(rng, kh, kw, cin, cout):
    return const(rng, (kh, kw, cin, cout), 1.0 / np.sqrt(kh * kw * cin)), const(rng, (cout,), 0.1)


def conv_dilation(rng):
    w, b = conv_bias(rng, 3, 3, 4, 8)
    return lambda x: tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME", dilations=2) + b)


def conv_stride2_same(rng):
    w, b = conv_bias(rng, 3, 3, 4, 8)
    return lambda x: tf.nn.conv2d(x, w, 2, "SAME") + b  # 8x8 -> 4x4: padding 0 before, 1 after


def depthwise_mult2(rng):
    w = const(rng, (3, 3, 4, 2), 1.0 / 3)
    b = const(rng, (8,), 0.1)
    return lambda x: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME") + b


def fully_connected_keep_dims(rng):
    w, b = const(rng, (16, 8), 0.25), const(rng, (8,), 0.1)
    return lambda x: tf.matmul(x, w) + b  # [1,4,16] -> [1,4,8]


def fully_connected_per_tensor(rng):
    w, b = const(rng, (16, 8), 0.25), const(rng, (8,), 0.1)
    return lambda x: tf.nn.relu(tf.matmul(x, w) + b)


def quantize_dequantize(rng):
    w, b = conv_bias(rng, 1, 1, 8, 8)
    return lambda x: tf.nn.conv2d(x, w, 1, "VALID") + b


def prelu(rng):
    layer = keras.layers.PReLU(shared_axes=[1, 2])
    layer.build((1, 4, 4, 8))
    layer.set_weights([np.linspace(0.05, 0.4, 8, dtype=np.float32).reshape(1, 1, 8)])
    return lambda x: layer(x)


def op_cases() -> list[OpCase]:
    s = (1, 4, 4, 8)
    cases = binary_cases() + [
        OpCase("relu", lambda r: tf.nn.relu, [(s, 1.0)], ["RELU"]),
        OpCase("relu6", lambda r: tf.nn.relu6, [(s, 4.0)], ["RELU6"]),
        OpCase(
            "relu_n1_to_1",
            lambda r: lambda x: tf.clip_by_value(x, -1.0, 1.0),
            [(s, 2.0)],
            ["RELU_N1_TO_1"],
        ),
        OpCase(
            "leaky_relu",
            lambda r: lambda x: tf.nn.leaky_relu(x, alpha=0.2),
            [(s, 1.0)],
            ["LEAKY_RELU"],
        ),
        OpCase("prelu", prelu, [(s, 1.0)], ["PRELU"]),
        OpCase("logistic", lambda r: tf.sigmoid, [(s, 3.0)], ["LOGISTIC"]),
        OpCase("tanh", lambda r: tf.tanh, [(s, 2.0)], ["TANH"]),
        OpCase("softmax", lambda r: tf.nn.softmax, [((1, 10), 2.0)], ["SOFTMAX"]),
        OpCase(
            "l2_normalization",
            lambda r: lambda x: tf.math.l2_normalize(x, axis=-1),
            [(s, 1.0)],
            ["L2_NORMALIZATION"],
        ),
        OpCase(
            "arg_max",
            lambda r: lambda x: tf.argmax(x, axis=-1, output_type=tf.int32),
            [(s, 1.0)],
            ["ARG_MAX"],
        ),
        OpCase(
            "transpose",
            lambda r: lambda x: tf.transpose(x, [0, 3, 1, 2]),
            [((1, 4, 6, 8), 1.0)],
            ["TRANSPOSE"],
        ),
        OpCase("reshape", lambda r: lambda x: tf.reshape(x, (1, 16, 8)), [(s, 1.0)], ["RESHAPE"]),
        OpCase(
            "squeeze",
            lambda r: lambda x: tf.reshape(x, (1, 8)),
            [((1, 1, 1, 8), 1.0)],
            ["SQUEEZE"],
            post=lambda m: reshape_to_squeeze(m, [1, 2]),
        ),
        # Two model inputs: the int8 quantizer gives them the output's scale (TFLite's int8
        # CONCATENATION requires equal scales and zero points on every input and the output).
        # axis=-1 is stored as -1 in the file; concatenation_requant uses axis=3.
        OpCase(
            "concatenation",
            lambda r: lambda a, b: tf.concat([a, b], axis=-1),
            [(s, 1.0), ((1, 4, 4, 4), 4.0)],
            ["CONCATENATION"],
        ),
        # Inputs of different scales: TANH fixes its output at 1/128, so the quantizer inserts a
        # requantizing int8 -> int8 QUANTIZE before the CONCATENATION.
        OpCase(
            "concatenation_requant",
            lambda r: lambda a, b: tf.concat([tf.tanh(a), b], axis=3),
            [(s, 1.0), ((1, 4, 4, 4), 4.0)],
            ["TANH", "QUANTIZE", "CONCATENATION"],
        ),
        OpCase(
            "pad",
            lambda r: lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]),
            [(s, 1.0)],
            ["PAD"],
        ),
        OpCase(
            "mean_hw",
            lambda r: lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True),
            [((1, 5, 5, 8), 1.0)],
            ["MEAN"],
        ),
        OpCase("conv_dilation", conv_dilation, [((1, 8, 8, 4), 1.0)], ["CONV_2D"]),
        OpCase("conv_stride2_same", conv_stride2_same, [((1, 8, 8, 4), 1.0)], ["CONV_2D"]),
        OpCase("depthwise_mult2", depthwise_mult2, [((1, 6, 6, 4), 1.0)], ["DEPTHWISE_CONV_2D"]),
        # 7x7 window, stride 7, SAME over a 3x3 map: one output, padding 2 on each side; MLI 2.0.2
        # pooling writes out of bounds here (min(pad) < kernel - in_size - 1).
        OpCase(
            "avg_pool_global_same",
            lambda r: lambda x: tf.nn.avg_pool2d(x, 7, 7, "SAME"),
            [((1, 3, 3, 8), 1.0)],
            ["AVERAGE_POOL_2D"],
        ),
        OpCase(
            "max_pool_global_same",
            lambda r: lambda x: tf.nn.max_pool2d(x, 7, 7, "SAME"),
            [((1, 3, 3, 8), 1.0)],
            ["MAX_POOL_2D"],
        ),
        OpCase(
            "max_pool",
            lambda r: lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"),
            [((1, 7, 7, 8), 1.0)],
            ["MAX_POOL_2D"],
        ),
        OpCase(
            "fully_connected_keep_dims",
            fully_connected_keep_dims,
            [((1, 4, 16), 1.0)],
            ["FULLY_CONNECTED"],
        ),
        OpCase(
            "fully_connected_per_tensor",
            fully_connected_per_tensor,
            [((1, 16), 1.0)],
            ["FULLY_CONNECTED"],
            per_tensor_dense=True,
        ),
        # Float input and output around an int8 CONV_2D: QUANTIZE in, DEQUANTIZE out.
        OpCase(
            "quantize_dequantize",
            quantize_dequantize,
            [(s, 1.0)],
            ["QUANTIZE", "CONV_2D", "DEQUANTIZE"],
            float_twin=False,
            io_int8=False,
        ),
        OpCase("split", lambda r: lambda x: tf.split(x, 2, axis=-1), [(s, 1.0)], ["SPLIT"]),
        OpCase(
            "split_v", lambda r: lambda x: tf.split(x, [3, 5], axis=-1), [(s, 1.0)], ["SPLIT_V"]
        ),
        OpCase(
            "slice",
            lambda r: lambda x: tf.slice(x, [0, 1, 0, 2], [1, 2, 3, 4]),
            [(s, 1.0)],
            ["SLICE"],
        ),
        OpCase(
            "strided_slice", lambda r: lambda x: x[:, 1:3, 0:4, 2:6], [(s, 1.0)], ["STRIDED_SLICE"]
        ),
    ]
    return cases


def make_op(case: OpCase, written: dict[str, list[str]]) -> None:
    rng = rng_for(case.name)
    fn = case.make(rng)
    shapes = [shape for shape, _ in case.inputs]
    samples = [
        [rng.normal(0, spread, size=shape).astype(np.float32) for shape, spread in case.inputs]
        for _ in range(32)
    ]
    post = case.post or (lambda m: m)
    int8 = post(
        convert(fn, shapes, samples, io_int8=case.io_int8, per_tensor_dense=case.per_tensor_dense)
    )
    write(f"ops/{case.name}.tflite", int8, written, case.expect)
    if case.float_twin:
        write(f"ops/{case.name}_float.tflite", post(convert(fn, shapes, None)), written)


# --------------------------------------------------------------------------------------------


def write(
    rel: str, model: bytes, written: dict[str, list[str]], expect: list[str] | None = None
) -> None:
    ops = op_names(model)
    missing = [op for op in expect or [] if op not in ops]
    if missing:
        print(
            f"WARNING {rel}: intended op(s) {missing} not produced; converter gave {ops}",
            file=sys.stderr,
        )
    (OUT / rel).parent.mkdir(parents=True, exist_ok=True)
    (OUT / rel).write_bytes(model)
    written[rel] = ops
    print(f"{rel:42s} {len(model):7d} B  {' '.join(ops)}")


def main(argv: list[str]) -> int:
    if tf.__version__ != TF_VERSION:
        print(
            f"note: TensorFlow {tf.__version__}, the committed files came from {TF_VERSION}; "
            "outputs may differ",
            file=sys.stderr,
        )
    keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    only = set(argv)  # optional: "cnn", "fc", "ops" to write a subset
    written: dict[str, list[str]] = {}
    manifest = OUT / "ops.json"
    if only and manifest.exists():
        written.update(json.loads(manifest.read_text()))
    if not only or "cnn" in only:
        make_cnn(written)
    if not only or "fc" in only:
        make_fc(written)
    if not only or "ops" in only:
        for case in op_cases():
            make_op(case, written)
    manifest.write_text(json.dumps(dict(sorted(written.items())), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
