"""Write tests/corpus: small random-weight versions of the models people export from Keras.

Generated with TensorFlow 2.21.0 (the `tensorflow-cpu` wheel, Keras 3). TensorFlow is a tool of
this script only, never of mlitool or its tests: run it in a virtual environment of its own, e.g.

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tools/make_corpus.py [NAME ...]

NAME (optional) writes only the architectures named (e.g. `unet gru`), keeping the other entries
of corpus.json. Everything is seeded per architecture (Keras weights, the representative data),
so a rerun with the same versions writes byte-identical files. Weights are untrained; the
normalisation layers get seeded random statistics so that they are not identities.

Variants: `int8` (full-integer, int8 input and output), `16x8` (int16 activations, int8 weights,
int16 input and output), `float32` (plus NAME_calib.npy: 8 float32 calibration samples). Batch:
`dynamic` (Keras' default None: the file's shape signature has -1, as a plain Keras export does)
or `fixed` (batch_size=1). Any conversion the TFLite converter refuses is left out and listed in
corpus.json under "dropped" (and in the README).
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
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402
from tensorflow.lite.tools import flatbuffer_utils  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

TF_VERSION = "2.21.0"
SEED = 20250123
OUT = Path(__file__).resolve().parents[1] / "tests" / "corpus"
N_REPRESENTATIVE = 24
N_CALIB = 8
CALIB_MAX_BYTES = 32 * 1024  # larger sets are not stored: corpus_table draws them from input_range
L = keras.layers


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from a name, so each model's data does not depend on the others."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# --------------------------------------------------------------------------------------------
# Architectures: each builder returns a callable on float32 tensors (a Keras model or a function
# of Keras layers and tf ops); `data` draws representative / calibration inputs.
# --------------------------------------------------------------------------------------------


@dataclass
class Arch:
    name: str
    what: str  # one line for the README
    build: Callable[[bool], Callable]  # argument: fixed batch (for Keras Input(batch_size=1))
    shape: tuple[int, ...]  # one sample's input shape (no batch)
    low: float = -1.0  # representative data: uniform in [low, high] (smoothed for images)
    high: float = 1.0


def randomize_norms(model: keras.Model, rng: np.random.Generator) -> None:
    """Seeded non-trivial statistics for BatchNormalization / LayerNormalization (else identity)."""
    for layer in model._flatten_layers(include_self=False):
        if isinstance(layer, L.BatchNormalization):
            g, b, m, v = layer.get_weights()
            layer.set_weights(
                [
                    rng.uniform(0.6, 1.4, g.shape).astype(np.float32),
                    rng.normal(0, 0.1, b.shape).astype(np.float32),
                    rng.normal(0, 0.1, m.shape).astype(np.float32),
                    rng.uniform(0.6, 1.4, v.shape).astype(np.float32),
                ]
            )
        elif isinstance(layer, L.LayerNormalization) and layer.get_weights():
            layer.set_weights(
                [
                    rng.uniform(0.6, 1.4, w.shape).astype(np.float32)
                    if i == 0
                    else rng.normal(0, 0.1, w.shape).astype(np.float32)
                    for i, w in enumerate(layer.get_weights())
                ]
            )


def inp(shape, fixed: bool) -> keras.KerasTensor:
    return keras.Input(shape, batch_size=1 if fixed else None)


def app(ctor: Callable, **kw) -> Callable[[bool], Callable]:
    def build(fixed: bool) -> keras.Model:
        x = inp((32, 32, 3), fixed)
        return ctor(input_tensor=x, weights=None, include_top=True, classes=10, **kw)

    return build


def lam(f: Callable, name: str) -> L.Layer:
    return L.Lambda(f, name=name)


def conv_bn(x, filters, k=3, strides=1, act="relu", name=""):
    x = L.Conv2D(filters, k, strides=strides, padding="same", use_bias=False, name=name + "conv")(x)
    x = L.BatchNormalization(name=name + "bn")(x)
    return L.Activation(act, name=name + act)(x) if act else x


def efficientnet_like(fixed: bool) -> keras.Model:
    """Stem, three MBConv blocks (expand, depthwise, squeeze-excite, project, residual), head."""

    def mbconv(x, cin, cout, expand, stride, name):
        y = conv_bn(x, cin * expand, 1, act="swish", name=name + "exp_") if expand > 1 else x
        y = L.DepthwiseConv2D(3, stride, padding="same", use_bias=False, name=name + "dw")(y)
        y = L.Activation("swish", name=name + "dw_swish")(
            L.BatchNormalization(name=name + "dwbn")(y)
        )
        # Squeeze-excite as keras.applications.EfficientNet writes it (pool, reshape, two 1x1).
        c = y.shape[-1]
        s = L.GlobalAveragePooling2D(name=name + "se_pool")(y)
        s = L.Reshape((1, 1, c), name=name + "se_reshape")(s)
        s = L.Conv2D(max(1, cin // 4), 1, activation="swish", name=name + "se_reduce")(s)
        s = L.Conv2D(c, 1, activation="sigmoid", name=name + "se_expand")(s)
        y = L.Multiply(name=name + "se_mul")([y, s])
        y = conv_bn(y, cout, 1, act=None, name=name + "proj_")
        return L.Add(name=name + "add")([x, y]) if stride == 1 and cin == cout else y

    x_in = inp((32, 32, 3), fixed)
    x = conv_bn(x_in, 16, 3, 2, act="swish", name="stem_")
    x = mbconv(x, 16, 16, 1, 1, "b1_")
    x = mbconv(x, 16, 24, 4, 2, "b2_")
    x = mbconv(x, 24, 24, 4, 1, "b3_")
    x = conv_bn(x, 96, 1, act="swish", name="head_")
    x = L.GlobalAveragePooling2D(name="pool")(x)
    x = L.Dropout(0.2)(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def resnet_like(fixed: bool) -> keras.Model:
    """ResNet v1 basic blocks: conv-bn-relu, residual ADD, 1x1 projection on stride 2."""

    def block(x, filters, stride, name):
        y = conv_bn(x, filters, 3, stride, name=name + "a_")
        y = conv_bn(y, filters, 3, 1, act=None, name=name + "b_")
        if stride != 1 or x.shape[-1] != filters:
            x = conv_bn(x, filters, 1, stride, act=None, name=name + "proj_")
        return L.ReLU(name=name + "out")(L.Add(name=name + "add")([x, y]))

    x_in = inp((32, 32, 3), fixed)
    x = conv_bn(x_in, 8, 3, name="stem_")
    x = L.MaxPooling2D(2, name="stem_pool")(x)
    for i, (f, s) in enumerate([(8, 1), (8, 1), (16, 2), (16, 1), (32, 2)]):
        x = block(x, f, s, f"s{i}_")
    x = L.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def densenet_like(fixed: bool) -> keras.Model:
    """DenseNet: BN-ReLU-Conv layers whose outputs are concatenated; transitions with avg pool."""

    def dense_block(x, layers, growth, name):
        for i in range(layers):
            y = L.ReLU(name=f"{name}{i}_relu")(L.BatchNormalization(name=f"{name}{i}_bn")(x))
            y = L.Conv2D(2 * growth, 1, use_bias=False, name=f"{name}{i}_c1")(y)
            y = L.ReLU(name=f"{name}{i}_relu2")(L.BatchNormalization(name=f"{name}{i}_bn2")(y))
            y = L.Conv2D(growth, 3, padding="same", use_bias=False, name=f"{name}{i}_c2")(y)
            x = L.Concatenate(name=f"{name}{i}_concat")([x, y])
        return x

    def transition(x, name):
        x = L.ReLU(name=name + "relu")(L.BatchNormalization(name=name + "bn")(x))
        x = L.Conv2D(x.shape[-1] // 2, 1, use_bias=False, name=name + "conv")(x)
        return L.AveragePooling2D(2, name=name + "pool")(x)

    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(16, 3, 2, padding="same", use_bias=False, name="stem")(x_in)
    x = dense_block(x, 3, 8, "d1_")
    x = transition(x, "t1_")
    x = dense_block(x, 3, 8, "d2_")
    x = L.ReLU(name="relu")(L.BatchNormalization(name="bn")(x))
    x = L.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def convnext_like(fixed: bool) -> keras.Model:
    """ConvNeXt: patchify stem + LayerNorm; blocks of depthwise 7x7, LayerNorm, Dense x4, GELU,
    Dense, layer scale, residual; downsampling LayerNorm + 2x2 conv; head pool, LayerNorm, Dense."""

    def block(x, dim, name):
        y = L.DepthwiseConv2D(7, padding="same", name=name + "dw")(x)
        y = L.LayerNormalization(epsilon=1e-6, name=name + "ln")(y)
        y = L.Dense(4 * dim, name=name + "pw1")(y)
        y = L.Activation("gelu", name=name + "gelu")(y)
        y = L.Dense(dim, name=name + "pw2")(y)
        scale = keras.ops.convert_to_tensor(np.full(dim, 0.5, np.float32))
        y = lam(lambda t: t * scale, name + "scale")(y)
        return L.Add(name=name + "add")([x, y])

    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(16, 4, 4, name="stem")(x_in)
    x = L.LayerNormalization(epsilon=1e-6, name="stem_ln")(x)
    x = block(x, 16, "s0_")
    x = L.LayerNormalization(epsilon=1e-6, name="down_ln")(x)
    x = L.Conv2D(32, 2, 2, name="down")(x)
    x = block(x, 32, "s1_")
    x = L.GlobalAveragePooling2D(name="pool")(x)
    x = L.LayerNormalization(epsilon=1e-6, name="head_ln")(x)
    return keras.Model(x_in, L.Dense(10, name="fc")(x))


def xception_like(fixed: bool) -> keras.Model:
    """Xception entry flow: separable convs, max pool, strided 1x1 residual ADD."""

    def block(x, filters, name):
        r = L.Conv2D(filters, 1, 2, padding="same", use_bias=False, name=name + "res")(x)
        r = L.BatchNormalization(name=name + "res_bn")(r)
        y = L.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name + "sep1")(x)
        y = L.ReLU(name=name + "relu")(L.BatchNormalization(name=name + "bn1")(y))
        y = L.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name + "sep2")(y)
        y = L.BatchNormalization(name=name + "bn2")(y)
        y = L.MaxPooling2D(3, 2, padding="same", name=name + "pool")(y)
        return L.Add(name=name + "add")([y, r])

    x_in = inp((32, 32, 3), fixed)
    x = conv_bn(x_in, 16, 3, name="stem_")
    x = block(x, 32, "b1_")
    x = block(x, 64, "b2_")
    x = L.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def inception_like(fixed: bool) -> keras.Model:
    """Inception modules: 1x1, 1x1-3x3, 1x1-3x3-3x3 and avgpool-1x1 branches, concatenated."""

    def module(x, f, name):
        b1 = conv_bn(x, f, 1, name=name + "b1_")
        b2 = conv_bn(conv_bn(x, f, 1, name=name + "b2a_"), f, 3, name=name + "b2b_")
        b3 = conv_bn(x, f // 2, 1, name=name + "b3a_")
        b3 = conv_bn(conv_bn(b3, f, 3, name=name + "b3b_"), f, 3, name=name + "b3c_")
        b4 = L.AveragePooling2D(3, 1, padding="same", name=name + "b4_pool")(x)
        b4 = conv_bn(b4, f // 2, 1, name=name + "b4_")
        return L.Concatenate(name=name + "concat")([b1, b2, b3, b4])

    x_in = inp((32, 32, 3), fixed)
    x = conv_bn(x_in, 16, 3, 2, name="stem_")
    x = module(x, 16, "m1_")
    x = L.MaxPooling2D(3, 2, padding="same", name="pool1")(x)
    x = module(x, 24, "m2_")
    x = L.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def unet(fixed: bool) -> keras.Model:
    """U-Net: two down levels (conv, max pool), one up by UpSampling2D (nearest), one by
    Conv2DTranspose, skip concatenations, 1x1 sigmoid mask."""
    x_in = inp((32, 32, 3), fixed)
    c1 = L.Conv2D(8, 3, padding="same", activation="relu", name="c1")(x_in)
    p1 = L.MaxPooling2D(2, name="p1")(c1)
    c2 = L.Conv2D(16, 3, padding="same", activation="relu", name="c2")(p1)
    p2 = L.MaxPooling2D(2, name="p2")(c2)
    c3 = L.Conv2D(32, 3, padding="same", activation="relu", name="c3")(p2)
    u2 = L.UpSampling2D(2, interpolation="nearest", name="up2")(c3)
    u2 = L.Concatenate(name="cat2")([u2, c2])
    c4 = L.Conv2D(16, 3, padding="same", activation="relu", name="c4")(u2)
    u1 = L.Conv2DTranspose(8, 2, 2, name="up1")(c4)
    u1 = L.Concatenate(name="cat1")([u1, c1])
    c5 = L.Conv2D(8, 3, padding="same", activation="relu", name="c5")(u1)
    return keras.Model(x_in, L.Conv2D(1, 1, activation="sigmoid", name="mask")(c5))


def yolo_tiny(fixed: bool) -> keras.Model:
    """Tiny-YOLO-like: conv + LeakyReLU backbone, neck upsampling by UpSampling2D (bilinear) and
    tf.image.resize (nearest), concatenation, three 1x1 detection heads (three outputs)."""

    def cbl(x, f, name, k=3):
        x = L.Conv2D(f, k, padding="same", use_bias=False, name=name)(x)
        return L.LeakyReLU(0.1, name=name + "_leaky")(L.BatchNormalization(name=name + "_bn")(x))

    x_in = inp((64, 64, 3), fixed)
    x = L.MaxPooling2D(2, name="p0")(cbl(x_in, 8, "c0"))  # 32
    x = L.MaxPooling2D(2, name="p1")(cbl(x, 12, "c1"))  # 16
    p3 = cbl(x, 16, "c2")  # 16x16
    x = L.MaxPooling2D(2, name="p2")(p3)  # 8
    p4 = cbl(x, 24, "c3")  # 8x8
    x = L.MaxPooling2D(2, name="p3")(p4)  # 4
    p5 = cbl(x, 32, "c4")  # 4x4
    head5 = L.Conv2D(3 * 7, 1, name="head5")(p5)
    up5 = L.UpSampling2D(2, interpolation="bilinear", name="up5")(cbl(p5, 16, "lat5", 1))
    n4 = cbl(L.Concatenate(name="cat4")([up5, p4]), 16, "n4")
    head4 = L.Conv2D(3 * 7, 1, name="head4")(n4)
    up4 = lam(lambda t: tf.image.resize(t, (16, 16), method="nearest"), "up4")(n4)
    n3 = cbl(L.Concatenate(name="cat3")([up4, p3]), 12, "n3")
    head3 = L.Conv2D(3 * 7, 1, name="head3")(n3)
    return keras.Model(x_in, [head5, head4, head3])


def kws_conv1d(fixed: bool) -> keras.Model:
    """Keyword spotter on 49 frames x 10 MFCCs: Conv1D stack, GlobalAveragePooling1D, Dense."""
    x_in = inp((49, 10), fixed)
    x = L.Conv1D(16, 3, padding="same", activation="relu", name="c1")(x_in)
    x = L.Conv1D(24, 3, strides=2, activation="relu", name="c2")(x)
    x = L.BatchNormalization(name="bn")(x)
    x = L.Conv1D(32, 3, padding="same", activation="relu", name="c3")(x)
    x = L.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(x_in, L.Dense(12, activation="softmax", name="fc")(x))


def rnn(cell: type) -> Callable[[bool], keras.Model]:
    def build(fixed: bool) -> keras.Model:
        x_in = inp((16, 8), fixed)
        x = cell(16, unroll=True, name="rnn")(x_in)
        return keras.Model(x_in, L.Dense(4, name="fc")(x))

    return build


def transformer(fixed: bool) -> keras.Model:
    """Transformer encoder block on 16 tokens of 32: MultiHeadAttention, residual, LayerNorm,
    GELU feed-forward, residual, LayerNorm, GlobalAveragePooling1D, Dense."""
    x_in = inp((16, 32), fixed)
    a = L.MultiHeadAttention(num_heads=2, key_dim=16, name="mha")(x_in, x_in)
    x = L.LayerNormalization(epsilon=1e-6, name="ln1")(L.Add(name="add1")([x_in, a]))
    f = L.Dense(64, activation="gelu", name="ff1")(x)
    f = L.Dense(32, name="ff2")(f)
    x = L.LayerNormalization(epsilon=1e-6, name="ln2")(L.Add(name="add2")([x, f]))
    x = L.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(x_in, L.Dense(5, activation="softmax", name="fc")(x))


def act_zoo(fixed: bool) -> keras.Model:
    """One conv, then each activation on its own branch, each an output (a concatenation would
    take every branch to float when one op, e.g. ELU, stays float in the int8 converter)."""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)  # 16x16x8
    acts = ["hard_swish", "elu", "gelu", "selu", "swish", "hard_sigmoid"]
    ys = [L.Activation(a, name=a)(x) for a in acts]
    ys.append(lam(lambda t: tf.exp(tf.minimum(t, 2.0)), "exp")(x))
    return keras.Model(x_in, ys)


def math_zoo(fixed: bool) -> keras.Model:
    """One conv, then tf.math on each branch: rsqrt, sqrt, abs, negative, log of a positive
    value, division, squared difference; each an output. (The int8 converter leaves NEG in
    float: DEQUANTIZE, NEG, QUANTIZE.)"""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)
    p = lam(lambda t: tf.abs(t) + 0.5, "positive")(x)
    ys = [
        lam(tf.math.rsqrt, "rsqrt")(p),
        lam(tf.sqrt, "sqrt")(p),
        lam(tf.abs, "abs")(x),
        lam(tf.negative, "neg")(x),
        lam(tf.math.log, "log")(p),
        lam(lambda t: t[0] / t[1], "div")([x, p]),
        lam(lambda t: tf.math.squared_difference(t[0], t[1]), "sqdiff")([x, p]),
    ]
    return keras.Model(x_in, ys)


def flatten_dense(fixed: bool) -> keras.Model:
    """Conv, max pool, Flatten, Dense: Flatten of a dynamic batch is SHAPE-STRIDED_SLICE-PACK-RESHAPE."""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", activation="relu", name="c1")(x_in)
    x = L.Conv2D(16, 3, 2, padding="same", activation="relu", name="c2")(x)
    x = L.MaxPooling2D(2, name="pool")(x)
    x = L.Flatten(name="flatten")(x)
    x = L.Dense(32, activation="relu", name="fc1")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc2")(x))


def resize(method: str) -> Callable[[bool], keras.Model]:
    """Resizes of a conv output 16x16 -> 32x32: TF2's tf.image.resize (half_pixel_centers), the v1
    op with align_corners, with neither flag, and 16 -> 24 -> 32 (non-integer scales);
    concatenated."""
    v1 = {
        "nearest": tf.compat.v1.image.resize_nearest_neighbor,
        "bilinear": tf.compat.v1.image.resize_bilinear,
    }[method]

    def build(fixed: bool) -> keras.Model:
        x_in = inp((32, 32, 3), fixed)
        x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)  # 16x16
        a = lam(lambda t: tf.image.resize(t, (32, 32), method=method), "half_pixel")(x)
        b = lam(lambda t: v1(t, (32, 32), align_corners=True), "align_corners")(x)
        c = lam(lambda t: tf.image.resize(t, (24, 24), method=method), "scale_1_5")(x)
        c = lam(lambda t: v1(t, (32, 32), half_pixel_centers=True), "to_32")(c)
        d = lam(lambda t: v1(t, (32, 32)), "legacy")(x)  # neither flag
        return keras.Model(x_in, L.Concatenate(name="concat")([a, b, c, d]))

    return build


def mean_axes(fixed: bool) -> keras.Model:
    """MEAN over the channels (keepdims), over W, and over H and W without keepdims."""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)
    c = lam(lambda t: tf.reduce_mean(t, axis=-1, keepdims=True), "mean_c")(x)  # 16x16x1
    y = L.Conv2D(4, 3, padding="same", name="conv2")(L.Concatenate(name="cat")([x, c]))
    w = lam(lambda t: tf.reduce_mean(t, axis=2), "mean_w")(y)  # 16x4
    hw = lam(lambda t: tf.reduce_mean(t, axis=[1, 2]), "mean_hw")(y)  # 4
    return keras.Model(x_in, [w, hw])


def space_depth(fixed: bool) -> keras.Model:
    """tf.nn.space_to_depth, conv, tf.nn.depth_to_space (sub-pixel upsampling)."""
    x_in = inp((32, 32, 3), fixed)
    x = lam(lambda t: tf.nn.space_to_depth(t, 2), "s2d")(x_in)  # 16x16x12
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv")(x)
    x = lam(lambda t: tf.nn.depth_to_space(t, 2), "d2s")(x)  # 32x32x4
    return keras.Model(x_in, L.Conv2D(3, 3, padding="same", name="out")(x))


def gather_tile(fixed: bool) -> keras.Model:
    """tf.gather (a channel shuffle, and rows), tf.tile."""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)  # 16x16x8
    perm = np.array([0, 4, 1, 5, 2, 6, 3, 7], np.int32)
    g = lam(lambda t: tf.gather(t, perm, axis=3), "shuffle")(x)
    r = lam(lambda t: tf.gather(t, np.arange(0, 16, 2, dtype=np.int32), axis=1), "rows")(g)
    t = lam(lambda t: tf.tile(t, [1, 2, 1, 1]), "tile")(r)  # 16x16x8
    return keras.Model(x_in, L.Conv2D(4, 1, name="out")(L.Add(name="add")([g, t])))


A = keras.applications
ARCHS = [
    Arch(
        "mobilenet",
        "keras.applications.MobileNet(alpha=0.25)",
        app(A.MobileNet, alpha=0.25),
        (32, 32, 3),
    ),
    Arch(
        "mobilenet_v2",
        "keras.applications.MobileNetV2(alpha=0.35)",
        app(A.MobileNetV2, alpha=0.35),
        (32, 32, 3),
    ),
    Arch(
        "mobilenet_v3_small",
        "keras.applications.MobileNetV3Small(alpha=0.1, minimalistic=False): HARD_SWISH, SE",
        app(A.MobileNetV3Small, alpha=0.1, minimalistic=False),
        (32, 32, 3),
        0.0,
        255.0,
    ),
    Arch(
        "mobilenet_v3_large",
        "keras.applications.MobileNetV3Large(alpha=0.1, minimalistic=False)",
        app(A.MobileNetV3Large, alpha=0.1, minimalistic=False),
        (32, 32, 3),
        0.0,
        255.0,
    ),
    Arch("efficientnet_like", efficientnet_like.__doc__, efficientnet_like, (32, 32, 3)),
    Arch("resnet_like", resnet_like.__doc__, resnet_like, (32, 32, 3)),
    Arch("densenet_like", densenet_like.__doc__, densenet_like, (32, 32, 3)),
    Arch("convnext_like", convnext_like.__doc__, convnext_like, (32, 32, 3)),
    Arch("xception_like", xception_like.__doc__, xception_like, (32, 32, 3)),
    Arch("inception_like", inception_like.__doc__, inception_like, (32, 32, 3)),
    Arch("unet", unet.__doc__, unet, (32, 32, 3)),
    Arch("yolo_tiny", yolo_tiny.__doc__, yolo_tiny, (64, 64, 3)),
    Arch("kws_conv1d", kws_conv1d.__doc__, kws_conv1d, (49, 10)),
    Arch("gru", "GRU(16, unroll=True) over 16 steps of 8, Dense", rnn(L.GRU), (16, 8)),
    Arch("lstm", "LSTM(16, unroll=True) over 16 steps of 8, Dense", rnn(L.LSTM), (16, 8)),
    Arch("transformer", transformer.__doc__, transformer, (16, 32)),
    Arch(
        "act_zoo",
        "Keras activations hard_swish, elu, gelu, selu, swish, hard_sigmoid and tf.exp, each an "
        "output (the int8 converter leaves ELU in float: DEQUANTIZE, ELU, QUANTIZE)",
        act_zoo,
        (32, 32, 3),
    ),
    Arch("math_zoo", math_zoo.__doc__, math_zoo, (32, 32, 3)),
    Arch("flatten_dense", flatten_dense.__doc__, flatten_dense, (32, 32, 3)),
    Arch(
        "resize_nearest",
        "RESIZE_NEAREST_NEIGHBOR: " + resize.__doc__,
        resize("nearest"),
        (32, 32, 3),
    ),
    Arch("resize_bilinear", "RESIZE_BILINEAR: " + resize.__doc__, resize("bilinear"), (32, 32, 3)),
    Arch("mean_axes", mean_axes.__doc__, mean_axes, (32, 32, 3)),
    Arch("space_depth", space_depth.__doc__, space_depth, (32, 32, 3)),
    Arch("gather_tile", gather_tile.__doc__, gather_tile, (32, 32, 3)),
]

# (architecture, variant, batch): int8 dynamic for all, some fixed; 16x8 and float32 for a subset.
FIXED_INT8 = ["resnet_like", "unet", "gru", "transformer", "flatten_dense"]
FIXED_ONLY = ["mobilenet"]  # keras.applications with Input(batch_size=1), as some export it
INT16 = [
    "efficientnet_like",
    "resnet_like",
    "densenet_like",
    "unet",
    "yolo_tiny",
    "kws_conv1d",
    "lstm",
    "transformer",
    "act_zoo",
    "resize_bilinear",
    "gather_tile",
]
FLOAT = [
    "space_depth",
    "convnext_like",
    "unet",
    "yolo_tiny",
    "kws_conv1d",
    "gru",
    "transformer",
    "flatten_dense",
]
FIXED_OTHER = {("unet", "float32"), ("kws_conv1d", "16x8")}


def variants() -> list[tuple[str, str, str]]:
    out = []
    for a in ARCHS:
        out.append((a.name, "int8", "fixed" if a.name in FIXED_ONLY else "dynamic"))
        if a.name in FIXED_INT8:
            out.append((a.name, "int8", "fixed"))
        for var, names in (("16x8", INT16), ("float32", FLOAT)):
            if a.name in names:
                out.append((a.name, var, "fixed" if (a.name, var) in FIXED_OTHER else "dynamic"))
    return out


# --------------------------------------------------------------------------------------------
# Data, conversion, the flatbuffer's facts
# --------------------------------------------------------------------------------------------


def sample_data(arch: Arch, n: int, tag: str) -> np.ndarray:
    """Seeded inputs in [low, high]; images are smoothed noise (neighbouring pixels correlate)."""
    rng = rng_for(f"{arch.name}/{tag}")
    x = rng.uniform(0.0, 1.0, size=(n, *arch.shape))
    if len(arch.shape) == 3:  # blur over H and W with a 3x3 box, twice, then re-stretch to [0,1]
        for _ in range(2):
            p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
            h, w = arch.shape[:2]
            x = sum(p[:, i : i + h, j : j + w] for i in range(3) for j in range(3)) / 9.0
        lo = x.min(axis=(1, 2, 3), keepdims=True)
        x = (x - lo) / (x.max(axis=(1, 2, 3), keepdims=True) - lo)
    return (arch.low + (arch.high - arch.low) * x).astype(np.float32)


def convert(fn: Callable, arch: Arch, variant: str, fixed: bool) -> bytes:
    spec = tf.TensorSpec((1 if fixed else None, *arch.shape), tf.float32)
    concrete = tf.function(lambda t: fn(t, training=False), autograph=False).get_concrete_function(
        spec
    )
    frozen = convert_variables_to_constants_v2(concrete)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
    if variant != "float32":
        data = sample_data(arch, N_REPRESENTATIVE, "representative")
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([d[None]] for d in data)
        if variant == "int8":
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = conv.inference_output_type = tf.int8
        else:
            ops = tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
            conv.target_spec.supported_ops = [ops]
            conv.inference_input_type = conv.inference_output_type = tf.int16
    return conv.convert()


def facts(model: bytes) -> dict:
    """Input shapes (signature: -1 for a dynamic batch) and dtypes, op types in execution order."""
    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    op_names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    types = {v: k.lower() for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in m.operatorCodes]
    sub = m.subgraphs[0]

    def shape(t):
        sig = t.shapeSignature if t.shapeSignature is not None else t.shape
        return [int(d) for d in sig]

    return {
        "inputs": [
            {"shape": shape(sub.tensors[i]), "dtype": types[sub.tensors[i].type]}
            for i in sub.inputs
        ],
        "outputs": len(sub.outputs),
        "ops": [op_names[codes[op.opcodeIndex]] for op in sub.operators],
    }


def first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    # The converter's message starts with a location; its useful part mentions "error:".
    errs = [ln for ln in lines if "error:" in ln]
    return (errs or lines or [type(exc).__name__])[0][:300]


def build(arch: Arch, fixed: bool) -> Callable:
    keras.utils.set_random_seed(zlib.crc32(arch.name.encode()) ^ SEED)
    model = arch.build(fixed)
    randomize_norms(model, rng_for(arch.name + "/norms"))
    return model


def main(argv: list[str]) -> int:
    if tf.__version__ != TF_VERSION:
        print(
            f"note: TensorFlow {tf.__version__}; the files came from {TF_VERSION}", file=sys.stderr
        )
    tf.config.experimental.enable_op_determinism()
    only = set(argv)
    unknown = only - {a.name for a in ARCHS}
    if unknown:
        print(f"unknown architecture(s): {sorted(unknown)}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = OUT / "corpus.json"
    doc = {"files": {}, "dropped": {}}
    if only and manifest.exists():
        doc = json.loads(manifest.read_text())
    archs = {a.name: a for a in ARCHS}
    for name, variant, batch in variants():
        if only and name not in only:
            continue
        arch = archs[name]
        stem = f"{name}_{variant}" + ("_b1" if batch == "fixed" else "")
        doc["files"].pop(stem + ".tflite", None)
        doc["dropped"].pop(stem + ".tflite", None)
        try:
            model = convert(build(arch, batch == "fixed"), arch, variant, batch == "fixed")
        except Exception as exc:  # the converter's refusal: record it, go on
            doc["dropped"][stem + ".tflite"] = first_line(exc)
            print(f"{stem:34s} DROPPED: {first_line(exc)}", file=sys.stderr)
            continue
        (OUT / f"{stem}.tflite").write_bytes(model)
        what = " ".join(arch.what.split())
        entry = {"architecture": name, "variant": variant, "batch": batch, "what": what}
        entry.update(facts(model))
        entry["input_range"] = [arch.low, arch.high]
        if variant == "float32":
            calib = sample_data(arch, N_CALIB, "calibration")
            small = calib.nbytes <= CALIB_MAX_BYTES
            if small:
                np.save(OUT / f"{stem}_calib.npy", calib)
            entry["calibration"] = f"{stem}_calib.npy" if small else None
        entry["bytes"] = len(model)
        doc["files"][stem + ".tflite"] = entry
        print(f"{stem:34s} {len(model):7d} B  {' '.join(entry['ops'])}")
    doc["files"] = dict(sorted(doc["files"].items()))
    doc["dropped"] = dict(sorted(doc["dropped"].items()))
    doc["generator"] = {
        "script": "tools/make_corpus.py",
        "tensorflow": tf.__version__,
        "seed": SEED,
    }
    manifest.write_text(json.dumps(doc, indent=1) + "\n")
    (OUT / "README.md").write_text(readme(doc))
    return 0


def readme(doc: dict) -> str:
    """tests/corpus/README.md, from corpus.json (so the two cannot disagree)."""
    files = doc["files"]
    archs: dict[str, list[str]] = {}
    for name, e in files.items():
        archs.setdefault(e["architecture"], []).append(name)
    total = sum(e["bytes"] for e in files.values())
    lines = [
        "# Corpus: small models as people export them from Keras",
        "",
        "Small random-weight (untrained, seeded) versions of the architectures people export,",
        f"converted by the real TFLite converter (TensorFlow {doc['generator']['tensorflow']}).",
        f"{len(files)} files, {total / 1e6:.2f} MB of .tflite. Written by `tools/make_corpus.py`,",
        "measured by `tools/corpus_table.py` (the table before the work of issue 23: `baseline.md`).",
        "",
        "Regenerate (TensorFlow is a tool of the generator only, never of mlitool or its tests):",
        "",
        "```sh",
        "python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0",
        "/tmp/tfvenv/bin/python tools/make_corpus.py            # everything (about a minute)",
        "/tmp/tfvenv/bin/python tools/make_corpus.py unet gru   # only these architectures",
        "```",
        "",
        "Seeded per architecture (weights, normalisation statistics, representative data), so a",
        "rerun with the same versions writes byte-identical files. Quantized files use a",
        f"representative dataset of {N_REPRESENTATIVE} seeded samples (images: smoothed noise) over",
        "each file's `input_range` (corpus.json).",
        "",
        "File names: `ARCH_VARIANT[_b1].tflite`.",
        "- `int8`: full-integer post-training quantization, int8 input and output.",
        "- `16x8`: `EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8`, int16 input and output.",
        "- `float32`: not quantized; `ARCH_float32[_b1]_calib.npy` holds 8 float32 calibration",
        f"  samples where they fit in {CALIB_MAX_BYTES // 1024} KB (else `calibration` is null in",
        "  corpus.json: draw samples uniformly over `input_range`).",
        "- batch: dynamic (Keras' default `None`: shape signature `-1`, as a plain export gives), or",
        "  fixed (`_b1`: `keras.Input(..., batch_size=1)`).",
        "",
        "`corpus.json`: per file its architecture, variant, batch, input shape signature and dtype,",
        "number of outputs, op types in execution order, size, input range and calibration file.",
        "",
        "The files are what the converter gives, islands included: TF 2.21's int8 quantizer leaves",
        "ELU and NEG (which LayerNormalization emits) in float, between DEQUANTIZE and QUANTIZE.",
        "",
        "## Architectures",
        "",
        "| architecture | files | what |",
        "|---|---|---|",
    ]
    for arch in ARCHS:
        if arch.name in archs:
            names = ", ".join(f"`{n}`" for n in archs[arch.name])
            lines.append(f"| {arch.name} | {names} | {' '.join(arch.what.split())} |")
    lines += ["", "## Refused by the TFLite converter (not in the corpus)", ""]
    if doc["dropped"]:
        lines += [f"- `{name}`: {why}" for name, why in doc["dropped"].items()]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
