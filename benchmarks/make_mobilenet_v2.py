"""Write a 224x224 MobileNetV2-style int8 model (random weights, fixed seed) for the benchmarks.

    python benchmarks/make_mobilenet_v2.py OUT.tflite [--width 1.0]

Stem conv 3x3/2, seventeen inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project,
residual ADD where shapes allow) with MobileNetV2's channel and stride schedule, 1x1 conv to
1280, global average pool, FULLY_CONNECTED to 1000 classes: about 300 M MACs at width 1.0.
Per-channel int8 weights, int32 bias, RELU6 where MobileNetV2 has it. Written with the project's
own flatbuffer builder (tests/support/tflite_build.py); no TensorFlow needed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.tflite_build import T, graph_model, options  # noqa: E402

# (expansion, output channels, repeats, first stride) of MobileNetV2
BLOCKS = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
]
RELU6 = 3
SAME, VALID = 0, 1


class Net:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.tensors: list[T] = []
        self.ops: list[tuple] = []

    def act(self, shape, scale=0.05) -> int:
        self.tensors.append(T(list(shape), scale=[scale], zero_point=[-128 if scale < 0.05 else 0]))
        return len(self.tensors) - 1

    def _weights(self, shape, axis: int, x_scale: float) -> tuple[int, int]:
        co = shape[axis]
        w = self.rng.integers(-127, 128, shape).astype(np.int8)
        ws = self.rng.uniform(0.002, 0.02, co)
        self.tensors.append(
            T(list(shape), data=w, scale=ws.tolist(), zero_point=[0] * co, axis=axis)
        )
        b = self.rng.integers(-4000, 4000, co).astype(np.int32)
        self.tensors.append(
            T([co], dtype="int32", data=b, scale=(ws * x_scale).tolist(), zero_point=[0] * co)
        )
        return len(self.tensors) - 2, len(self.tensors) - 1

    def conv(self, x: int, co: int, k: int, stride: int, relu: bool) -> int:
        n, h, w, ci = self.tensors[x].shape
        wi, bi = self._weights((co, k, k, ci), 0, self.tensors[x].scale[0])
        y = self.act((1, -(-h // stride), -(-w // stride), co))
        self.ops.append(
            (
                "CONV_2D",
                [x, wi, bi],
                [y],
                options(
                    "Conv2DOptions",
                    padding=SAME,
                    strideW=stride,
                    strideH=stride,
                    fusedActivationFunction=RELU6 if relu else 0,
                ),
            )
        )
        return y

    def dw(self, x: int, stride: int) -> int:
        n, h, w, c = self.tensors[x].shape
        wi, bi = self._weights((1, 3, 3, c), 3, self.tensors[x].scale[0])
        y = self.act((1, -(-h // stride), -(-w // stride), c))
        self.ops.append(
            (
                "DEPTHWISE_CONV_2D",
                [x, wi, bi],
                [y],
                options(
                    "DepthwiseConv2DOptions",
                    padding=SAME,
                    strideW=stride,
                    strideH=stride,
                    depthMultiplier=1,
                    fusedActivationFunction=RELU6,
                ),
            )
        )
        return y

    def add(self, a: int, b: int) -> int:
        y = self.act(self.tensors[a].shape)
        self.ops.append(("ADD", [a, b], [y], options("AddOptions")))
        return y


def build(width: float = 1.0, seed: int = 0) -> bytes:
    net = Net(seed)
    x = net.act((1, 224, 224, 3), scale=1 / 128)
    y = net.conv(x, int(32 * width), 3, 2, relu=True)
    for expansion, channels, repeats, stride in BLOCKS:
        co = max(8, int(channels * width))
        for r in range(repeats):
            ci = net.tensors[y].shape[3]
            h = net.conv(y, ci * expansion, 1, 1, relu=True) if expansion != 1 else y
            h = net.dw(h, stride if r == 0 else 1)
            h = net.conv(h, co, 1, 1, relu=False)
            y = net.add(h, y) if (r > 0 and ci == co) else h
    y = net.conv(y, 1280, 1, 1, relu=True)
    n, h, w, c = net.tensors[y].shape
    pooled = net.act((1, 1, 1, c))
    net.ops.append(
        (
            "AVERAGE_POOL_2D",
            [y],
            [pooled],
            options(
                "Pool2DOptions", padding=VALID, strideW=1, strideH=1, filterWidth=w, filterHeight=h
            ),
        )
    )
    flat = net.act((1, c))
    net.tensors.append(T([2], dtype="int32", data=np.int32([1, c])))
    shape = len(net.tensors) - 1
    net.ops.append(("RESHAPE", [pooled, shape], [flat], None))
    wi, bi = net._weights((1000, c), 0, net.tensors[flat].scale[0])
    logits = net.act((1, 1000), scale=0.1)
    net.ops.append(("FULLY_CONNECTED", [flat, wi, bi], [logits], options("FullyConnectedOptions")))
    return graph_model(net.tensors, net.ops, [x], [logits])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--width", type=float, default=1.0)
    a = ap.parse_args()
    a.out.write_bytes(build(a.width))
    print(f"wrote {a.out} ({a.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
