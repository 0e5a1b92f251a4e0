"""Write an unseen PyTorch probe corpus (default /tmp/probe34, never committed): architectures
tools/make_torch_corpus.py does not hold, exported the same five ways, to measure mlitool on
PyTorch files it was not tuned on (issue 34's "unseen files").

    /work/venv-torch/bin/python tools/make_torch_probe.py [--out DIR] [ARCH ...]

Reuses make_torch_corpus.py's seeding, BatchNorm statistics and exports; writes the .tflite
files, the calibration .npy files and a corpus.json that tools/torch_corpus_table.py reads
(`--corpus DIR`). torch, torchvision, litert-torch and ai-edge-quantizer are tools of this script
only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_torch_corpus as mtc  # noqa: E402

torch, nn, F, torchvision = mtc.torch, mtc.nn, mtc.F, mtc.torchvision
Arch = mtc.Arch


def mobilenet_v3_large() -> nn.Module:
    from torchvision.models import mobilenetv3

    setting, _ = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.1)
    return mobilenetv3.MobileNetV3(setting, 64, num_classes=10)


def regnet_x() -> nn.Module:
    from torchvision.models import regnet

    params = regnet.BlockParams.from_init_params(depth=6, w_0=8, w_a=4.0, w_m=2.0, group_width=4)
    return regnet.RegNet(params, num_classes=10)


def densenet_small() -> nn.Module:
    from torchvision.models import densenet

    return densenet.DenseNet(
        growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2, num_classes=10
    )


def googlenet_like() -> nn.Module:
    class Inception(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.a = nn.Sequential(nn.Conv2d(c, 4, 1), nn.ReLU())
            self.b = nn.Sequential(nn.Conv2d(c, 4, 1), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1))
            self.c = nn.Sequential(nn.Conv2d(c, 2, 1), nn.ReLU(), nn.Conv2d(2, 4, 5, padding=2))
            self.d = nn.Sequential(nn.MaxPool2d(3, 1, 1), nn.Conv2d(c, 4, 1))

        def forward(self, x):
            return F.relu(torch.cat([self.a(x), self.b(x), self.c(x), self.d(x)], 1))

    return nn.Sequential(
        nn.Conv2d(3, 8, 3, 2, 1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        Inception(8),
        nn.MaxPool2d(2, ceil_mode=True),
        Inception(18),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(18, 10),
    )


class TinyViT(nn.Module):
    """Patch embedding (4x4 stride 4), a class token, learned positions, two pre-norm transformer
    blocks (nn.MultiheadAttention, GELU MLP), LayerNorm, head."""

    def __init__(self, d: int = 24) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, 4)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, 17, d) * 0.1)
        self.blocks = nn.ModuleList(
            [nn.TransformerEncoderLayer(d, 2, 48, 0.0, "gelu", batch_first=True, norm_first=True)
             for _ in range(2)]
        )  # fmt: skip
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x[:, 0]))


class Lstm(nn.Module):
    """Batch-first LSTM(8, 16) over 20 steps, the last step's output, Linear(16, 4)."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.lstm(x.transpose(1, 2))
        return self.fc(out[:, -1])


class Tcn(nn.Module):
    """Dilated causal Conv1d stack (dilations 1, 2, 4, left padding by F.pad), residuals,
    global average, Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Conv1d(6, 12, 1)
        self.convs = nn.ModuleList([nn.Conv1d(12, 12, 3, dilation=d) for d in (1, 2, 4)])
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        x = self.inp(x)
        for conv, d in zip(self.convs, (1, 2, 4)):
            x = x + F.relu(conv(F.pad(x, (2 * d, 0))))
        return self.fc(x.mean(-1))


class Hourglass(nn.Module):
    """Strided convs down, PixelShuffle and nearest interpolation up, GroupNorm, PReLU,
    a Hardtanh output (image-to-image)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.GroupNorm(2, 8), nn.PReLU(8))
        self.down2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU6())
        self.up = nn.Sequential(nn.Conv2d(16, 32, 1), nn.PixelShuffle(2))
        self.out = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        a = self.down(x)
        b = self.up(self.down2(a))
        y = torch.cat([a, b], 1)
        y = F.interpolate(y, scale_factor=2, mode="nearest")
        return F.hardtanh(self.out(y))


ARCHS = [
    Arch("mobilenet_v3_large", mobilenet_v3_large, (3, 32, 32), False,
         "torchvision MobileNetV3-Large(width_mult=0.1), last_channel=64"),
    Arch("regnet_x", regnet_x, (3, 32, 32), False,
         "torchvision RegNet (depth 6, w_0 8, group width 4): grouped 3x3 convolutions"),
    Arch("densenet", densenet_small, (3, 32, 32), False,
         "torchvision DenseNet(growth 4, blocks (2, 2)): dense concatenations, avg-pool transitions"),
    Arch("googlenet_like", googlenet_like, (3, 32, 32), False,
         "two Inception modules: 1x1 / 3x3 / 5x5 / pool branches concatenated"),
    Arch("tiny_vit", TinyViT, (3, 16, 16), False,
         "ViT: 4x4 patches, class token, 2 pre-norm encoder layers (2 heads), LayerNorm, head"),
    Arch("lstm", Lstm, (8, 20), False, "batch-first LSTM(8, 16) over 20 steps, last step, Linear"),
    Arch("tcn", Tcn, (6, 32), False, "dilated causal Conv1d stack with F.pad and residuals"),
    Arch("hourglass", Hourglass, (3, 32, 32), True,
         "strided convs, GroupNorm, PReLU, PixelShuffle, nearest interpolate, hardtanh"),
]  # fmt: skip


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/probe34"))
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    mtc.OUT = args.out
    mtc.ARCHS = ARCHS
    mtc.SEED = 34034
    return mtc.main(args.names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
