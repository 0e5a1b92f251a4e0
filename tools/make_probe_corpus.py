"""Write an unseen probe corpus (default /tmp/probe35, never committed) of Keras models that use
the ops of issue 35 where real models use them: an Embedding text classifier, dilated and grouped
convolutions, reflect padding, a ConvNeXt block, reversed slices, trigonometric position
features, cumulative sums, floor / round quantizers, argmin, a per-element PReLU, GATHER_ND. Measures mlitool on models it was not tuned on, as tools/make_corpus2.py does.

    /work/venv-tf/bin/python tools/make_probe_corpus.py [--out DIR] [--seed N] [NAME ...]

Reuses make_corpus.py's conversion (variants int8, 16x8, float32). Writes only .tflite files and
dropped.txt (the conversions the TFLite converter refuses). TensorFlow is a tool of this script only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_corpus as mc  # noqa: E402

keras, tf, np, L = mc.keras, mc.tf, mc.np, mc.L
Arch, inp, lam, conv_bn = mc.Arch, mc.inp, mc.lam, mc.conv_bn
ops = keras.ops


def text_classifier(fixed):
    """Token ids (floats in [0, 200)) -> Embedding(200, 16) -> GlobalAveragePooling1D -> Dense."""
    x_in = inp((20,), fixed)
    ids = lam(lambda t: ops.cast(t, "int32"), "ids")(x_in)
    x = L.Embedding(200, 16, name="emb")(ids)
    x = L.GlobalAveragePooling1D(name="gap")(x)
    return keras.Model(x_in, L.Dense(4, activation="softmax", name="fc")(x))


def text_cnn(fixed):
    """Token ids -> Embedding(300, 12) -> Conv1D(16, 3) -> GlobalMaxPooling1D -> Dense."""
    x_in = inp((24,), fixed)
    ids = lam(lambda t: ops.cast(t, "int32"), "ids")(x_in)
    x = L.Embedding(300, 12, name="emb")(ids)
    x = L.Conv1D(16, 3, activation="relu", name="conv")(x)
    x = L.GlobalMaxPooling1D(name="gmp")(x)
    return keras.Model(x_in, L.Dense(3, name="fc")(x))


def dilated_same(fixed):
    """Conv2D and DepthwiseConv2D with dilation_rate 2 and 3, padding same; 24x24."""
    x_in = inp((24, 24, 3), fixed)
    x = L.Conv2D(8, 3, dilation_rate=2, padding="same", activation="relu", name="c1")(x_in)
    x = L.DepthwiseConv2D(3, dilation_rate=3, padding="same", name="dw")(x)
    x = L.Conv2D(8, 3, dilation_rate=2, padding="valid", name="c2")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Dense(5, name="fc")(x))


def grouped(fixed):
    """Conv2D(groups=4) twice with a channel shuffle between; 16x16."""
    x_in = inp((16, 16, 8), fixed)
    x = L.Conv2D(16, 3, padding="same", groups=4, activation="relu", name="g1")(x_in)
    x = L.Reshape((16, 16, 4, 4), name="r1")(x)
    x = L.Permute((1, 2, 4, 3), name="shuffle")(x)
    x = L.Reshape((16, 16, 16), name="r2")(x)
    x = L.Conv2D(8, 1, groups=2, name="g2")(x)
    return keras.Model(x_in, x)


def reflect_pad(fixed):
    """ops.pad reflect and symmetric before valid convolutions; 20x20."""
    x_in = inp((20, 20, 3), fixed)
    x = lam(lambda t: ops.pad(t, [[0, 0], [2, 2], [2, 2], [0, 0]], mode="reflect"), "refl")(x_in)
    x = L.Conv2D(8, 5, activation="relu", name="c1")(x)
    x = lam(lambda t: ops.pad(t, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="symmetric"), "sym")(x)
    return keras.Model(x_in, L.Conv2D(4, 3, name="c2")(x))


def convnext_block(fixed):
    """ConvNeXt stem (4x4 stride 4, LayerNorm) and one block: 7x7 depthwise, LayerNorm, Dense x4,
    GELU, Dense, residual; 32x32."""
    x_in = inp((32, 32, 3), fixed)
    x = L.Conv2D(16, 4, strides=4, name="stem")(x_in)
    x = L.LayerNormalization(epsilon=1e-6, name="stem_ln")(x)
    y = L.DepthwiseConv2D(7, padding="same", name="dw")(x)
    y = L.LayerNormalization(epsilon=1e-6, name="ln")(y)
    y = L.Dense(64, activation="gelu", name="pw1")(y)
    y = L.Dense(16, name="pw2")(y)
    x = L.Add(name="res")([x, y])
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(x_in, L.Dense(4, name="fc")(x))


def reverse_slices(fixed):
    """x[:, ::-2], x[:, ::-1, 1:] and a flip, concatenated; [16, 6]."""
    x_in = inp((16, 6), fixed)
    a = lam(lambda t: t[:, ::-2], "rev2")(x_in)
    b = lam(lambda t: t[:, 8:0:-1, 1:], "rev1")(x_in)
    c = lam(lambda t: ops.flip(t, axis=2), "flip")(a)
    x = L.Concatenate(axis=2, name="cat")([a, c])
    return keras.Model(x_in, [L.Dense(4, name="fa")(x), L.Dense(4, name="fb")(b)])


def position_features(fixed):
    """Sinusoidal features of the input (sin, cos), a cumulative sum over time, Dense; [16, 4]."""
    x_in = inp((16, 4), fixed)
    s = lam(lambda t: ops.sin(t * 3.0), "sin")(x_in)
    c = lam(lambda t: ops.cos(t * 2.0), "cos")(x_in)
    cs = lam(lambda t: ops.cumsum(t, axis=1), "cumsum")(x_in)
    x = L.Concatenate(name="cat")([s, c, cs])
    return keras.Model(x_in, L.Dense(6, name="fc")(x))


def quantizers(fixed):
    """Floor / round / ceil quantizers and floor_mod between dense layers; [12]."""
    x_in = inp((12,), fixed)
    x = L.Dense(16, name="d1")(x_in)
    a = lam(lambda t: ops.floor(t * 4.0) / 4.0, "floor")(x)
    b = lam(lambda t: ops.round(t * 2.0), "round")(x)
    c = lam(lambda t: ops.ceil(t), "ceil")(x)
    m = lam(lambda t: tf.math.floormod(t, 0.75), "mod")(x)
    x = L.Concatenate(name="cat")([a, b, c, m])
    return keras.Model(x_in, L.Dense(4, name="d2")(x))


def argmin_head(fixed):
    """Distances to 8 prototypes (Dense), argmin and argmax as float outputs; [10]."""
    x_in = inp((10,), fixed)
    d = L.Dense(8, name="dist")(x_in)
    a = lam(lambda t: tf.cast(tf.math.argmin(t, axis=-1), tf.float32), "argmin")(d)
    b = lam(
        lambda t: tf.cast(tf.math.argmax(t, axis=-1, output_type=tf.int32), tf.float32), "argmax"
    )(d)
    return keras.Model(x_in, [d, a, b])


def prelu_full(fixed):
    """PReLU with a slope per element (no shared axes) and one shared over H, W; 12x12."""
    x_in = inp((12, 12, 4), fixed)
    x = L.Conv2D(8, 3, padding="same", name="c1")(x_in)
    x = L.PReLU(alpha_initializer=keras.initializers.RandomUniform(0.05, 0.4), name="p1")(x)
    x = L.Conv2D(8, 3, padding="same", name="c2")(x)
    x = L.PReLU(
        alpha_initializer=keras.initializers.RandomUniform(0.05, 0.4), shared_axes=[1, 2], name="p2"
    )(x)
    return keras.Model(x_in, x)


def gather_nd_rows(fixed):
    """tf.gather_nd of rows and elements of a [8, 6] feature map, then Dense; [8, 6]."""
    x_in = inp((8, 6), fixed)
    a = lam(lambda t: tf.gather_nd(t[0], [[0, 1], [3, 2], [7, 5], [2, 0]])[None], "gnd")(x_in)
    return keras.Model(x_in, L.Dense(4, name="fc")(L.Flatten(name="fl")(a)))


ARCHS = [
    Arch("text_classifier", text_classifier.__doc__, text_classifier, (20,), 0.0, 199.0),
    Arch("text_cnn", text_cnn.__doc__, text_cnn, (24,), 0.0, 299.0),
    Arch("dilated_same", dilated_same.__doc__, dilated_same, (24, 24, 3)),
    Arch("grouped", grouped.__doc__, grouped, (16, 16, 8)),
    Arch("reflect_pad", reflect_pad.__doc__, reflect_pad, (20, 20, 3)),
    Arch("convnext_block", convnext_block.__doc__, convnext_block, (32, 32, 3)),
    Arch("reverse_slices", reverse_slices.__doc__, reverse_slices, (16, 6)),
    Arch("position_features", position_features.__doc__, position_features, (16, 4)),
    Arch("quantizers", quantizers.__doc__, quantizers, (12,)),
    Arch("argmin_head", argmin_head.__doc__, argmin_head, (10,)),
    Arch("prelu_full", prelu_full.__doc__, prelu_full, (12, 12, 4)),
    Arch("gather_nd_rows", gather_nd_rows.__doc__, gather_nd_rows, (8, 6)),
]


FIXED = ["gather_nd_rows"]  # t[0] needs a static batch


def variants():
    return [
        (a.name, v, "fixed" if a.name in FIXED else "dynamic")
        for a in ARCHS
        for v in ("int8", "16x8", "float32")
    ]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/probe35"))
    ap.add_argument("--seed", type=int, default=35035)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    mc.SEED = args.seed
    tf.config.experimental.enable_op_determinism()
    args.out.mkdir(parents=True, exist_ok=True)
    archs = {a.name: a for a in ARCHS}
    dropped = []
    for name, variant, batch in variants():
        if args.names and name not in args.names:
            continue
        arch = archs[name]
        stem = f"{name}_{variant}"
        try:
            fixed = batch == "fixed"
            model = mc.convert(mc.build(arch, fixed), arch, variant, fixed)
        except Exception as exc:  # the converter's refusal: list it, go on
            dropped.append(f"{stem}.tflite: {mc.first_line(exc)}")
            print(f"{stem:30s} DROPPED: {mc.first_line(exc)}", file=sys.stderr)
            continue
        (args.out / f"{stem}.tflite").write_bytes(model)
        ops_used = " ".join(dict.fromkeys(mc.facts(model)["ops"]))
        print(f"{stem:30s} {len(model):7d} B  {ops_used}")
    (args.out / "dropped.txt").write_text("".join(d + "\n" for d in dropped))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
