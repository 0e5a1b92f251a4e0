"""Write a second, unseen Keras-export corpus (default /tmp/hidden, never committed): other seeds,
input sizes, widths and architectures than tests/corpus, to measure mlitool on models it was not
tuned on (issue 23's "hidden corpus").

    /tmp/tfvenv/bin/python tools/make_corpus2.py [--out DIR] [--seed N] [NAME ...]

Reuses make_corpus.py's conversion (same variants: int8, 16x8, float32; dynamic or fixed batch).
Writes only .tflite files (no corpus.json: the folder is read as an unknown corpus would be, the
variant from the file) plus dropped.txt, the conversions the TFLite converter refuses.
TensorFlow is a tool of this script only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_corpus as mc  # noqa: E402

keras, tf, np, L = mc.keras, mc.tf, mc.np, mc.L
Arch, inp, lam, conv_bn = mc.Arch, mc.inp, mc.lam, mc.conv_bn


def ds_cnn(fixed):
    """DS-CNN keyword spotter (49x10 MFCC image): 10x4 stride-2 conv, four depthwise-separable
    blocks with BN and ReLU, average pool, Dense."""
    x_in = inp((49, 10, 1), fixed)
    x = conv_bn(x_in, 24, (10, 4), (2, 2), name="stem_")
    for i in range(4):
        x = L.DepthwiseConv2D(3, padding="same", use_bias=False, name=f"dw{i}")(x)
        x = L.ReLU(name=f"dw{i}_relu")(L.BatchNormalization(name=f"dw{i}_bn")(x))
        x = conv_bn(x, 24, 1, name=f"pw{i}_")
    x = L.AveragePooling2D((25, 5), name="pool")(x)
    x = L.Flatten(name="flat")(x)
    return keras.Model(x_in, L.Dense(12, activation="softmax", name="fc")(x))


def autoencoder(fixed):
    """Conv autoencoder on 48x48: strided convs down, Conv2DTranspose (same padding, stride 2) up,
    sigmoid output."""
    x_in = inp((48, 48, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", activation="relu", name="e1")(x_in)
    x = L.Conv2D(16, 3, 2, padding="same", activation="relu", name="e2")(x)
    x = L.Conv2DTranspose(16, 3, 2, padding="same", activation="relu", name="d1")(x)
    x = L.Conv2DTranspose(8, 3, 2, padding="same", activation="relu", name="d2")(x)
    return keras.Model(x_in, L.Conv2D(3, 3, padding="same", activation="sigmoid", name="out")(x))


def squeezenet(fixed):
    """SqueezeNet fire modules (squeeze 1x1, expand 1x1 and 3x3, concatenated) on 64x64."""

    def fire(x, s, e, name):
        x = L.Conv2D(s, 1, activation="relu", name=name + "sq")(x)
        a = L.Conv2D(e, 1, activation="relu", name=name + "e1")(x)
        b = L.Conv2D(e, 3, padding="same", activation="relu", name=name + "e3")(x)
        return L.Concatenate(name=name + "cat")([a, b])

    x_in = inp((64, 64, 3), fixed)
    x = L.Conv2D(16, 3, 2, activation="relu", name="stem")(x_in)
    x = L.MaxPooling2D(3, 2, name="p1")(x)
    x = fire(fire(x, 8, 16, "f2_"), 8, 16, "f3_")
    x = L.MaxPooling2D(3, 2, name="p3")(x)
    x = fire(x, 12, 24, "f4_")
    x = L.Conv2D(10, 1, activation="relu", name="conv10")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Softmax(name="sm")(x))


def fused_mbconv(fixed):
    """EfficientNetV2-like: fused MBConv (3x3 expand conv, 1x1 project, residual), then an MBConv
    with squeeze-excite; 40x40 input."""
    x_in = inp((40, 40, 3), fixed)
    x = conv_bn(x_in, 16, 3, 2, act="swish", name="stem_")
    y = conv_bn(x, 64, 3, 1, act="swish", name="f1_exp_")
    y = conv_bn(y, 16, 1, act=None, name="f1_proj_")
    x = L.Add(name="f1_add")([x, y])
    y = conv_bn(x, 64, 3, 2, act="swish", name="f2_exp_")
    x = conv_bn(y, 24, 1, act=None, name="f2_proj_")
    y = conv_bn(x, 96, 1, act="swish", name="m_exp_")
    y = L.DepthwiseConv2D(3, padding="same", use_bias=False, name="m_dw")(y)
    y = L.Activation("swish", name="m_dw_swish")(L.BatchNormalization(name="m_dwbn")(y))
    s = L.GlobalAveragePooling2D(keepdims=True, name="m_se_pool")(y)
    s = L.Conv2D(6, 1, activation="swish", name="m_se_r")(s)
    s = L.Conv2D(96, 1, activation="sigmoid", name="m_se_e")(s)
    y = L.Multiply(name="m_se_mul")([y, s])
    y = conv_bn(y, 24, 1, act=None, name="m_proj_")
    x = L.Add(name="m_add")([x, y])
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def nasnet_like(fixed):
    """NASNet-like cell: separable-conv branches, pooling branches, ADDs, concatenation; 36x36."""
    x_in = inp((36, 36, 3), fixed)
    x = conv_bn(x_in, 16, 3, 2, name="stem_")

    def sep(t, k, name):
        t = L.ReLU(name=name + "relu")(t)
        t = L.SeparableConv2D(16, k, padding="same", use_bias=False, name=name + "sep")(t)
        return L.BatchNormalization(name=name + "bn")(t)

    a = L.Add(name="c_a")([sep(x, 5, "b5_"), sep(x, 3, "b3_")])
    b = L.Add(name="c_b")(
        [L.AveragePooling2D(3, 1, padding="same", name="avg")(x), sep(x, 3, "b3b_")]
    )
    c = L.Add(name="c_c")([L.MaxPooling2D(3, 1, padding="same", name="max")(x), x])
    x = L.Concatenate(name="cell_cat")([a, b, c])
    x = L.ReLU(name="relu")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def bilstm(fixed):
    """Bidirectional LSTM (unrolled, return_sequences) then GRU, on 12 steps of 6; Dense."""
    x_in = inp((12, 6), fixed)
    x = L.Bidirectional(L.LSTM(8, unroll=True, return_sequences=True), name="bi")(x_in)
    x = L.GRU(8, unroll=True, name="gru")(x)
    return keras.Model(x_in, L.Dense(3, name="fc")(x))


def rnn_seq(fixed):
    """GRU and LSTM with return_sequences (unrolled, 10 steps of 5), TimeDistributed Dense."""
    x_in = inp((10, 5), fixed)
    x = L.GRU(12, unroll=True, return_sequences=True, name="gru")(x_in)
    x = L.LSTM(12, unroll=True, return_sequences=True, name="lstm")(x)
    return keras.Model(x_in, L.Dense(4, name="fc")(x))


def attention4(fixed):
    """MultiHeadAttention with 4 heads on 12 tokens of 24, residual, LayerNorm, ReLU FFN,
    GlobalMaxPooling1D."""
    x_in = inp((12, 24), fixed)
    a = L.MultiHeadAttention(num_heads=4, key_dim=6, name="mha")(x_in, x_in)
    x = L.LayerNormalization(epsilon=1e-5, name="ln1")(L.Add(name="add1")([x_in, a]))
    f = L.Dense(32, activation="relu", name="ff1")(x)
    x = L.Add(name="add2")([x, L.Dense(24, name="ff2")(f)])
    x = L.GlobalMaxPooling1D(name="pool")(x)
    return keras.Model(x_in, L.Dense(4, name="fc")(x))


def groupnorm(fixed):
    """Conv, GroupNormalization(4 groups), swish, conv; 24x24."""
    x_in = inp((24, 24, 3), fixed)
    x = L.Conv2D(16, 3, 2, padding="same", name="c1")(x_in)
    x = L.GroupNormalization(groups=4, name="gn")(x)
    x = L.Activation("swish", name="swish")(x)
    return keras.Model(x_in, L.Conv2D(4, 1, name="out")(x))


def layernorm_axes(fixed):
    """LayerNormalization over H, W and C of a feature map, and over the time axis of [T, C]."""
    x_in = inp((16, 16, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="c1")(x_in)
    a = L.LayerNormalization(axis=[1, 2, 3], name="ln_hwc")(x)
    t = L.Reshape((64, 8), name="seq")(x)
    b = L.LayerNormalization(axis=1, name="ln_t")(t)
    return keras.Model(x_in, [a, b])


def act_zoo2(fixed):
    """PReLU, softplus, swish, mish, relu6, tanh, softsign: each an output of one conv."""
    x_in = inp((20, 20, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="conv")(x_in)
    ys = [L.PReLU(shared_axes=[1, 2], name="prelu")(x)]
    ys += [L.Activation(a, name=a)(x) for a in ["softplus", "swish", "mish", "relu6", "tanh"]]
    return keras.Model(x_in, ys)


def pad_crop(fixed):
    """ZeroPadding2D, Cropping2D, UpSampling2D (bilinear), tf.image.resize (nearest,
    half_pixel), GlobalMaxPooling2D; 30x30."""
    x_in = inp((30, 30, 3), fixed)
    x = L.Conv2D(8, 3, 2, padding="same", name="c1")(x_in)  # 15x15
    x = L.ZeroPadding2D(((1, 2), (0, 1)), name="pad")(x)  # 18x16
    x = L.Cropping2D(((1, 1), (2, 0)), name="crop")(x)  # 16x14
    u = L.UpSampling2D(2, interpolation="bilinear", name="up")(x)  # 32x28
    r = lam(lambda t: tf.image.resize(t, (32, 28), method="nearest"), "resize")(x)
    y = L.Conv2D(4, 3, padding="same", name="c2")(L.Concatenate(name="cat")([u, r]))
    return keras.Model(x_in, [y, L.GlobalMaxPooling2D(name="gmp")(y)])


def pool1d(fixed):
    """Conv1D, AveragePooling1D, MaxPooling1D, GlobalMaxPooling1D on 50 steps of 6."""
    x_in = inp((50, 6), fixed)
    x = L.Conv1D(12, 5, activation="relu", name="c1")(x_in)
    x = L.AveragePooling1D(2, name="avg")(x)
    x = L.Conv1D(16, 3, activation="relu", name="c2")(x)
    x = L.MaxPooling1D(3, name="max")(x)
    x = L.GlobalMaxPooling1D(name="gmp")(x)
    return keras.Model(x_in, L.Dense(5, name="fc")(x))


def bn_clip(fixed):
    """Standalone BatchNormalization on the input, clip_by_value, conv, BN, clip."""
    x_in = inp((20, 20, 4), fixed)
    x = L.BatchNormalization(name="bn_in")(x_in)
    x = lam(lambda t: tf.clip_by_value(t, -0.5, 0.75), "clip")(x)
    x = L.Conv2D(8, 3, padding="same", name="c1")(x)
    x = L.BatchNormalization(name="bn")(x)
    return keras.Model(x_in, lam(lambda t: tf.clip_by_value(t, 0.0, 2.0), "clip2")(x))


def math2(fixed):
    """tf.square, tf.pow(x, 3), tf.math.reduce_variance over channels, softmax over H (not the
    last axis), each an output."""
    x_in = inp((16, 16, 3), fixed)
    x = L.Conv2D(6, 3, 2, padding="same", name="c1")(x_in)
    return keras.Model(
        x_in,
        [
            lam(tf.square, "square")(x),
            lam(lambda t: tf.pow(t, 3.0), "cube")(x),
            lam(lambda t: tf.math.reduce_variance(t, axis=-1), "var")(x),
            L.Softmax(axis=1, name="sm_h")(x),
        ],
    )


def concat_scales(fixed):
    """Concatenation of branches with very different ranges (x*8, x/16, relu6, tanh)."""
    x_in = inp((16, 16, 3), fixed)
    x = L.Conv2D(8, 3, padding="same", name="c1")(x_in)
    ys = [
        lam(lambda t: t * 8.0, "big")(x),
        lam(lambda t: t / 16.0, "small")(x),
        L.ReLU(6.0, name="relu6")(x),
        L.Activation("tanh", name="tanh")(x),
    ]
    return keras.Model(x_in, L.Conv2D(4, 1, name="out")(L.Concatenate(name="cat")(ys)))


def flatten_odd(fixed):
    """Odd 27x27 input, strided conv, Flatten, Dense, Dense."""
    x_in = inp((27, 27, 1), fixed)
    x = L.Conv2D(6, 5, 2, activation="relu", name="c1")(x_in)  # 12x12
    x = L.MaxPooling2D(2, name="pool")(x)  # 6x6
    x = L.Flatten(name="flat")(x)
    x = L.Dense(20, activation="tanh", name="fc1")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc2")(x))


def resnet_v2_like(fixed):
    """Pre-activation ResNet (BN-ReLU-conv), 40x40, bottleneck with projection."""

    def block(x, f, s, name):
        p = L.ReLU(name=name + "pre_relu")(L.BatchNormalization(name=name + "pre_bn")(x))
        sc = L.Conv2D(4 * f, 1, s, name=name + "sc")(p) if s != 1 or x.shape[-1] != 4 * f else x
        y = conv_bn(p, f, 1, name=name + "a_")
        y = conv_bn(y, f, 3, s, name=name + "b_")
        y = L.Conv2D(4 * f, 1, name=name + "c")(y)
        return L.Add(name=name + "add")([sc, y])

    x_in = inp((40, 40, 3), fixed)
    x = L.ZeroPadding2D(1, name="stem_pad")(x_in)
    x = L.Conv2D(16, 3, 2, name="stem")(x)
    x = block(x, 4, 1, "r1_")
    x = block(x, 8, 2, "r2_")
    x = L.ReLU(name="post_relu")(L.BatchNormalization(name="post_bn")(x))
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax", name="fc")(x))


def unet_bilinear(fixed):
    """U-Net on 36x36 with bilinear UpSampling2D and a transposed conv, skip concatenations."""
    x_in = inp((36, 36, 1), fixed)
    c1 = L.Conv2D(8, 3, padding="same", activation="relu", name="c1")(x_in)
    c2 = L.Conv2D(12, 3, padding="same", activation="relu", name="c2")(L.MaxPooling2D(2)(c1))
    c3 = L.Conv2D(16, 3, padding="same", activation="relu", name="c3")(L.MaxPooling2D(2)(c2))
    u2 = L.UpSampling2D(2, interpolation="bilinear", name="up2")(c3)
    c4 = L.Conv2D(12, 3, padding="same", activation="relu", name="c4")(
        L.Concatenate(name="cat2")([u2, c2])
    )
    u1 = L.Conv2DTranspose(8, 3, 2, padding="same", name="up1")(c4)
    c5 = L.Conv2D(8, 3, padding="same", activation="relu", name="c5")(
        L.Concatenate(name="cat1")([u1, c1])
    )
    return keras.Model(x_in, L.Conv2D(2, 1, activation="softmax", name="mask")(c5))


def tcn(fixed):
    """Temporal conv net: causal dilated Conv1D (dilation 2 and 4), residual ADDs, 64 steps."""
    x_in = inp((64, 4), fixed)
    x = L.Conv1D(12, 3, padding="causal", activation="relu", name="c0")(x_in)
    for d in (2, 4):
        y = L.Conv1D(12, 3, padding="causal", dilation_rate=d, activation="relu", name=f"c{d}")(x)
        x = L.Add(name=f"add{d}")([x, y])
    x = lam(lambda t: t[:, -1, :], "last")(x)
    return keras.Model(x_in, L.Dense(3, name="fc")(x))


def app(ctor, shape, **kw):
    def build(fixed):
        x = inp(shape, fixed)
        return ctor(input_tensor=x, weights=None, include_top=True, classes=7, **kw)

    return build


A = keras.applications
ARCHS = [
    Arch("ds_cnn", ds_cnn.__doc__, ds_cnn, (49, 10, 1)),
    Arch("autoencoder", autoencoder.__doc__, autoencoder, (48, 48, 3), 0.0, 1.0),
    Arch("squeezenet", squeezenet.__doc__, squeezenet, (64, 64, 3)),
    Arch("fused_mbconv", fused_mbconv.__doc__, fused_mbconv, (40, 40, 3)),
    Arch("nasnet_like", nasnet_like.__doc__, nasnet_like, (36, 36, 3)),
    Arch("bilstm", bilstm.__doc__, bilstm, (12, 6)),
    Arch("rnn_seq", rnn_seq.__doc__, rnn_seq, (10, 5)),
    Arch("attention4", attention4.__doc__, attention4, (12, 24)),
    Arch("groupnorm", groupnorm.__doc__, groupnorm, (24, 24, 3)),
    Arch("layernorm_axes", layernorm_axes.__doc__, layernorm_axes, (16, 16, 3)),
    Arch("act_zoo2", act_zoo2.__doc__, act_zoo2, (20, 20, 3)),
    Arch("pad_crop", pad_crop.__doc__, pad_crop, (30, 30, 3)),
    Arch("pool1d", pool1d.__doc__, pool1d, (50, 6)),
    Arch("bn_clip", bn_clip.__doc__, bn_clip, (20, 20, 4)),
    Arch("math2", math2.__doc__, math2, (16, 16, 3)),
    Arch("concat_scales", concat_scales.__doc__, concat_scales, (16, 16, 3)),
    Arch("flatten_odd", flatten_odd.__doc__, flatten_odd, (27, 27, 1)),
    Arch("resnet_v2_like", resnet_v2_like.__doc__, resnet_v2_like, (40, 40, 3)),
    Arch("unet_bilinear", unet_bilinear.__doc__, unet_bilinear, (36, 36, 1)),
    Arch("tcn", tcn.__doc__, tcn, (64, 4)),
    Arch(
        "mobilenet_v2_a50",
        "MobileNetV2(alpha=0.5) 48x48",
        app(A.MobileNetV2, (48, 48, 3), alpha=0.5),
        (48, 48, 3),
    ),
    Arch(
        "mobilenet_v3s_min",
        "MobileNetV3Small(alpha=0.75, minimalistic=True) 40x40",
        app(A.MobileNetV3Small, (40, 40, 3), alpha=0.75, minimalistic=True),
        (40, 40, 3),
        0.0,
        255.0,
    ),
    Arch(
        "mobilenet_a50",
        "MobileNet(alpha=0.5) 64x64",
        app(A.MobileNet, (64, 64, 3), alpha=0.5),
        (64, 64, 3),
    ),
]

INT16 = ["ds_cnn", "fused_mbconv", "rnn_seq", "act_zoo2", "pool1d", "concat_scales", "pad_crop"]
FLOAT = ["autoencoder", "bilstm", "attention4", "groupnorm", "flatten_odd", "unet_bilinear"]
FIXED = ["ds_cnn", "attention4", "flatten_odd", "tcn", "mobilenet_a50", "bn_clip"]


def variants():
    out = []
    for a in ARCHS:
        out.append((a.name, "int8", "dynamic"))
        if a.name in FIXED:
            out.append((a.name, "int8", "fixed"))
        if a.name in INT16:
            out.append((a.name, "16x8", "dynamic"))
        if a.name in FLOAT:
            out.append((a.name, "float32", "fixed" if a.name == "flatten_odd" else "dynamic"))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/hidden"))
    ap.add_argument("--seed", type=int, default=777001)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    mc.SEED = args.seed  # rng_for and build read it: other weights and data than tests/corpus
    tf.config.experimental.enable_op_determinism()
    args.out.mkdir(parents=True, exist_ok=True)
    archs = {a.name: a for a in ARCHS}
    dropped = []
    for name, variant, batch in variants():
        if args.names and name not in args.names:
            continue
        arch = archs[name]
        stem = f"{name}_{variant}" + ("_b1" if batch == "fixed" else "")
        try:
            model = mc.convert(mc.build(arch, batch == "fixed"), arch, variant, batch == "fixed")
        except Exception as exc:  # the converter's refusal: list it, go on
            dropped.append(f"{stem}.tflite: {mc.first_line(exc)}")
            print(f"{stem:30s} DROPPED: {mc.first_line(exc)}", file=sys.stderr)
            continue
        (args.out / f"{stem}.tflite").write_bytes(model)
        ops = " ".join(dict.fromkeys(mc.facts(model)["ops"]))
        print(f"{stem:30s} {len(model):7d} B  {ops}")
    (args.out / "dropped.txt").write_text("".join(d + "\n" for d in dropped))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
