"""Write tests/corpus_torch: small random-weight PyTorch models exported as people export them.

PyTorch, torchvision, litert-torch and ai-edge-quantizer are tools of this script only, never of
mlitool or its tests: run it in a virtual environment of its own (versions: VERSIONS below),

    python3 -m venv /work/venv-torch
    /work/venv-torch/bin/pip install torch==2.14.1 torchvision==0.29.1
    /work/venv-torch/bin/pip install litert-torch==0.10.0 ai-edge-quantizer==0.10.0
    (pip picks torchao 0.18.0, litert-converter 0.5.0, ai-edge-litert 2.3.0, numpy 2.4.6)
    /work/venv-torch/bin/python tools/make_torch_corpus.py [ARCH ...]

ARCH (optional) writes only the architectures named, keeping the other entries of corpus.json.
Each architecture is seeded (weights, BatchNorm statistics, calibration data). Weights are
untrained; BatchNorm running statistics are measured on seeded inputs (so every normalisation
centres and scales what really reaches it, as a trained network's do) and its affine parameters
are drawn near 1 and 0. Widths are thinned (not architectures dropped) so files stay small.

Five export variants of each architecture:
- `float_nchw`: `litert_torch.convert(model, sample)`: float, the model's own NCHW input.
- `float_nhwc`: the same through `litert_torch.to_channel_last_io` (channel-last input, and
  channel-last output where the output has channels).
- `pt2e_int8`: `torch.export` -> `PT2EQuantizer` (symmetric, per-channel) -> `prepare_pt2e`,
  calibration, `convert_pt2e` -> `litert_torch.convert(..., quant_config=QuantConfig(...))`.
- `pt2e_qdq`: the same PT2E model converted without `quant_config`: float I/O, a
  QUANTIZE -> DEQUANTIZE pair around activations and weights.
- `aeq_int8`: ai-edge-quantizer's `static_wi8_ai8` recipe on the `float_nchw` file, calibrated.
Float-input files get ARCH_LAYOUT_calib.npy (4 float32 samples) for `mlitool --calibration`.
A conversion that fails is left out and listed in corpus.json under "dropped".
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402
from torch import nn  # noqa: E402
from torchvision.models import efficientnet, mnasnet, mobilenetv3, resnet, squeezenet  # noqa: E402
from torchvision.ops.misc import Conv2dNormActivation  # noqa: E402

VERSIONS = {
    "torch": "2.14.1",
    "torchvision": "0.29.1",
    "litert-torch": "0.10.0",
    "ai-edge-quantizer": "0.10.0",
    "torchao": "0.18.0",
    "litert-converter": "0.5.0",
    "ai-edge-litert": "2.3.0",
    "numpy": "2.4.6",
}
SEED = 20261128
OUT = Path(__file__).resolve().parents[1] / "tests" / "corpus_torch"
N_CALIB = 4  # stored per float file: small enough to commit
N_REPRESENTATIVE = 16  # PT2E observers and ai-edge-quantizer calibration
VARIANTS = ["float_nchw", "float_nhwc", "pt2e_int8", "pt2e_qdq", "aeq_int8"]


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# --------------------------------------------------------------------------------------------
# Architectures: torchvision's classes with thinned widths, and three small models of our own.
# --------------------------------------------------------------------------------------------


def mobilenet_v2() -> nn.Module:
    m = torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.1, round_nearest=4)
    m.features[-1] = Conv2dNormActivation(
        m.features[-1][0].in_channels, 64, 1, activation_layer=nn.ReLU6
    )
    m.classifier[-1] = nn.Linear(64, 10)
    return m


def mobilenet_v3_small() -> nn.Module:
    setting, _ = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.1)
    return mobilenetv3.MobileNetV3(setting, last_channel=64, num_classes=10)


def resnet18() -> nn.Module:
    m = resnet.ResNet(resnet.BasicBlock, [2, 2, 2, 2], num_classes=10)
    widths = (4, 8, 16, 24)
    m.inplanes = widths[0]
    m.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
    m.bn1 = nn.BatchNorm2d(widths[0])
    m.layer1 = m._make_layer(resnet.BasicBlock, widths[0], 2)
    m.layer2 = m._make_layer(resnet.BasicBlock, widths[1], 2, stride=2)
    m.layer3 = m._make_layer(resnet.BasicBlock, widths[2], 2, stride=2)
    m.layer4 = m._make_layer(resnet.BasicBlock, widths[3], 2, stride=2)
    m.fc = nn.Linear(widths[3], 10)
    return m


def squeezenet1_1() -> nn.Module:
    m = squeezenet.SqueezeNet("1_1", num_classes=10)
    fire, pool = squeezenet.Fire, lambda: nn.MaxPool2d(3, 2, ceil_mode=True)
    m.features = nn.Sequential(
        nn.Conv2d(3, 16, 3, 2),
        nn.ReLU(inplace=True),
        pool(),
        fire(16, 4, 8, 8),
        fire(16, 4, 8, 8),
        pool(),
        fire(16, 8, 16, 16),
        fire(32, 8, 16, 16),
        pool(),
        fire(32, 12, 24, 24),
        fire(48, 12, 24, 24),
        fire(48, 16, 32, 32),
        fire(64, 16, 32, 32),
    )
    m.classifier = nn.Sequential(
        nn.Dropout(0.5), nn.Conv2d(64, 10, 1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1)
    )
    return m


def shufflenet_v2() -> nn.Module:
    return torchvision.models.ShuffleNetV2([4, 8, 4], [8, 16, 32, 64, 96], num_classes=10)


def mnasnet_small() -> nn.Module:
    m = mnasnet.MNASNet(0.05, num_classes=10)
    last = m.layers[-3].in_channels
    m.layers[-3] = nn.Conv2d(last, 64, 1, bias=False)
    m.layers[-2] = nn.BatchNorm2d(64)
    m.classifier[-1] = nn.Linear(64, 10)
    return m


def efficientnet_b0() -> nn.Module:
    setting, _ = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.1, depth_mult=0.5)
    return efficientnet.EfficientNet(setting, 0.2, num_classes=10, last_channel=64)


class DsCnn(nn.Module):
    """DS-CNN keyword spotter (Hello Edge): 49 frames x 10 MFCCs, conv, four depthwise-separable
    blocks, average pool, 12 classes."""

    def __init__(self, c: int = 24) -> None:
        super().__init__()
        layers = [
            nn.Conv2d(1, c, (10, 4), (2, 2), (5, 1), bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(),
        ]
        for _ in range(4):
            layers += [nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            layers += [nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, 12)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class UNet(nn.Module):
    """Two levels down (conv-bn-relu x2, max pool), up by ConvTranspose2d and by bilinear
    interpolation, skip concatenations, 1x1 conv and sigmoid mask."""

    def __init__(self) -> None:
        super().__init__()

        def block(i, o):
            return nn.Sequential(
                nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(),
                nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(),
            )  # fmt: skip

        self.d1, self.d2, self.mid = block(3, 8), block(8, 16), block(16, 24)
        self.up2 = nn.ConvTranspose2d(24, 16, 2, stride=2)
        self.u2 = block(32, 16)
        self.u1 = block(24, 8)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.mid(F.max_pool2d(b, 2))
        b = self.u2(torch.cat([self.up2(c), b], 1))
        up = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.head(self.u1(torch.cat([up, a], 1))))


class ConvGru(nn.Module):
    """Conv1d over 32 frames of 10 features, then a time-major GRU (PyTorch's default layout)
    and a classifier of its last step. `h0`: the initial state passed explicitly (zeros) and the
    final state returned beside the logits, as a streaming keyword spotter does (PT2E's GRU
    annotator needs both: without them the exporter fails, see corpus.json "dropped")."""

    def __init__(self, h0: bool) -> None:
        super().__init__()
        self.h0 = h0
        self.conv = nn.Sequential(
            nn.Conv1d(10, 16, 3, padding=1, bias=False), nn.BatchNorm1d(16), nn.ReLU()
        )
        self.gru = nn.GRU(16, 24)
        self.fc = nn.Linear(24, 12)

    def forward(self, x):
        y = self.conv(x).permute(2, 0, 1)  # (T, N, C): time-major
        if self.h0:
            out, h = self.gru(y, torch.zeros(1, x.shape[0], 24))
            return self.fc(out[-1]), h[0]
        out, _ = self.gru(y)
        return self.fc(out[-1])


@dataclass(frozen=True)
class Arch:
    name: str
    build: Callable[[], nn.Module]
    shape: tuple[int, ...]  # the NCHW (or NCW) input without the batch
    spatial_output: bool  # the output has channels: channel-last I/O moves them too
    what: str


ARCHS = [
    Arch("mobilenet_v2", mobilenet_v2, (3, 32, 32), False,
         "torchvision MobileNetV2(width_mult=0.1, round_nearest=4), last 1x1 conv 64 channels"),
    Arch("mobilenet_v3_small", mobilenet_v3_small, (3, 32, 32), False,
         "torchvision MobileNetV3-Small(width_mult=0.1), last_channel=64: hardswish, SE with hardsigmoid"),
    Arch("resnet18", resnet18, (3, 32, 32), False,
         "torchvision ResNet(BasicBlock, [2, 2, 2, 2]) with widths 4, 8, 16, 24: MaxPool2d(3, 2, padding=1)"),
    Arch("squeezenet1_1", squeezenet1_1, (3, 32, 32), False,
         "torchvision SqueezeNet 1.1, Fire modules at 1/8 width: MaxPool2d(ceil_mode=True)"),
    Arch("shufflenet_v2", shufflenet_v2, (3, 32, 32), False,
         "torchvision ShuffleNetV2([4, 8, 4], [8, 16, 32, 64, 96]): channel shuffle, MaxPool2d(3, 2, 1)"),
    Arch("mnasnet", mnasnet_small, (3, 32, 32), False,
         "torchvision MNASNet(alpha=0.05), last 1x1 conv 64 channels"),
    Arch("efficientnet_b0", efficientnet_b0, (3, 32, 32), False,
         "torchvision EfficientNet-B0 (width_mult=0.1, depth_mult=0.5, last_channel=64): SiLU, squeeze-excite, residuals"),
    Arch("ds_cnn", DsCnn, (1, 49, 10), False,
         "DS-CNN keyword spotter: 49 x 10 MFCC, conv 10x4 stride 2, four depthwise-separable blocks, 24 ch"),
    Arch("unet", UNet, (3, 32, 32), True,
         "U-Net: two levels, ConvTranspose2d up and F.interpolate(bilinear) up, skip concats, sigmoid mask"),
    Arch("conv_gru", lambda: ConvGru(False), (10, 32), False,
         "Conv1d(10, 16) + BatchNorm + ReLU, time-major GRU(16, 24) without h0, last step, Linear(24, 12)"),
    Arch("conv_gru_h0", lambda: ConvGru(True), (10, 32), False,
         "the same with an explicit zero h0 passed to the GRU, its final state a second output"),
]  # fmt: skip


def samples(arch: Arch, n: int, tag: str) -> np.ndarray:
    """Seeded inputs uniform over [-1, 1], smoothed along the last axis (neighbouring pixels or
    frames correlate, as real data's do), rescaled back to [-1, 1]."""
    x = rng_for(f"{arch.name}/{tag}").uniform(-1, 1, (n, *arch.shape))
    x = (x + np.roll(x, 1, -1) + np.roll(x, -1, -1)) / 3
    x /= np.abs(x).max()
    return x.astype(np.float32)


def build(arch: Arch) -> nn.Module:
    """Seeded weights; BatchNorm statistics measured on seeded inputs, affine drawn near (1, 0)."""
    torch.manual_seed(zlib.crc32(arch.name.encode()) ^ SEED)
    model = arch.build().eval()
    g = torch.Generator().manual_seed(SEED)
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in norms:
            bn.weight.copy_(torch.rand(bn.num_features, generator=g) * 0.8 + 0.6)
            bn.bias.copy_(torch.randn(bn.num_features, generator=g) * 0.1)
            bn.reset_running_stats()
            bn.momentum = None  # a cumulative average over the batches below
        for bn in norms:  # only the norms learn: no dropout, no stochastic depth
            bn.train()
        x = torch.from_numpy(samples(arch, 64, "statistics"))
        for part in x.split(16):
            model(part)
    return model.eval()


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet():
    """The exporters print progress and observer notes on stdout/stderr: keep our log readable."""
    out, err = io.StringIO(), io.StringIO()
    level = logging.root.level
    logging.disable(logging.WARNING)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        logging.disable(logging.NOTSET)
        logging.root.setLevel(level)


def pt2e_model(model: nn.Module, arch: Arch):
    from litert_torch.quantize import pt2e_quantizer as pq
    from torchao.quantization.pt2e import quantize_pt2e

    sample = (torch.from_numpy(samples(arch, 1, "sample")),)
    exported = torch.export.export(model, sample).module()
    quantizer = pq.PT2EQuantizer().set_global(
        pq.get_symmetric_quantization_config(is_per_channel=True)
    )
    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
    for x in samples(arch, N_REPRESENTATIVE, "representative"):
        prepared(torch.from_numpy(x[None]))
    return quantize_pt2e.convert_pt2e(prepared, fold_quantize=False), quantizer


def export(model: nn.Module, arch: Arch, variant: str, float_nchw: bytes | None) -> bytes:
    import litert_torch
    from litert_torch.quantize import quant_config

    sample = (torch.from_numpy(samples(arch, 1, "sample")),)
    with tempfile.TemporaryDirectory() as td, quiet():
        path = Path(td) / "m.tflite"
        if variant == "float_nchw":
            litert_torch.convert(model, sample).export(str(path))
        elif variant == "float_nhwc":
            wrapped = litert_torch.to_channel_last_io(
                model, args=[0], outputs=[0] if arch.spatial_output else None
            ).eval()
            nhwc = (sample[0].movedim(1, -1).contiguous(),)
            litert_torch.convert(wrapped, nhwc).export(str(path))
        elif variant == "pt2e_int8":
            converted, quantizer = pt2e_model(model, arch)
            config = quant_config.QuantConfig(pt2e_quantizer=quantizer)
            litert_torch.convert(converted, sample, quant_config=config).export(str(path))
        elif variant == "pt2e_qdq":
            converted, _ = pt2e_model(model, arch)
            litert_torch.convert(converted, sample).export(str(path))
        elif variant == "aeq_int8":
            if float_nchw is None:
                raise RuntimeError("no float_nchw file to quantize")
            path = aeq(float_nchw, arch, Path(td))
        return path.read_bytes()


def aeq(float_file: bytes, arch: Arch, tmp: Path) -> Path:
    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_quantizer import quantizer, recipe

    src, dst = tmp / "float.tflite", tmp / "aeq.tflite"
    src.write_bytes(float_file)
    sigs = Interpreter(model_path=str(src)).get_signature_list()
    (key,) = sigs
    (name,) = sigs[key]["inputs"]
    q = quantizer.Quantizer(str(src))
    q.load_quantization_recipe(recipe.static_wi8_ai8())
    data = [{name: x[None]} for x in samples(arch, N_REPRESENTATIVE, "representative")]
    q.quantize(q.calibrate({key: data})).export_model(str(dst), overwrite=True)
    return dst


def facts(model: bytes) -> dict:
    """Input shapes and dtypes, output count, op types in execution order (LiteRT's reading)."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=model)
    ins = it.get_input_details()
    return {
        "inputs": [
            {"shape": [int(d) for d in i["shape"]], "dtype": np.dtype(i["dtype"]).name} for i in ins
        ],
        "outputs": len(it.get_output_details()),
        "ops": [op["op_name"] for op in it._get_ops_details()],
    }


def first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return (lines or [type(exc).__name__])[0][:300]


def main(argv: list[str]) -> int:
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
    for arch in ARCHS:
        if only and arch.name not in only:
            continue
        model = build(arch)
        float_nchw = None
        for variant in VARIANTS:
            stem = f"{arch.name}_{variant}"
            doc["files"].pop(stem + ".tflite", None)
            doc["dropped"].pop(stem + ".tflite", None)
            try:
                data = export(model, arch, variant, float_nchw)
            except Exception as exc:  # the exporter's refusal: record it, go on
                doc["dropped"][stem + ".tflite"] = first_line(exc)
                print(f"{stem:34s} DROPPED: {first_line(exc)}", file=sys.stderr)
                continue
            if variant == "float_nchw":
                float_nchw = data
            (OUT / f"{stem}.tflite").write_bytes(data)
            entry = {"architecture": arch.name, "variant": variant, "what": arch.what}
            entry.update(facts(data))
            entry["input_range"] = [-1.0, 1.0]
            if entry["inputs"][0]["dtype"] == "float32":
                layout = "nhwc" if variant == "float_nhwc" else "nchw"
                calib = samples(arch, N_CALIB, "calibration")
                if layout == "nhwc":
                    calib = np.ascontiguousarray(np.moveaxis(calib, 1, -1))
                calib_name = f"{arch.name}_{layout}_calib.npy"
                np.save(OUT / calib_name, calib)
                entry["calibration"] = calib_name
            entry["bytes"] = len(data)
            doc["files"][stem + ".tflite"] = entry
            print(f"{stem:34s} {len(data):7d} B  {len(entry['ops'])} ops", flush=True)
    doc["files"] = dict(sorted(doc["files"].items()))
    doc["dropped"] = dict(sorted(doc["dropped"].items()))
    doc["generator"] = {"script": "tools/make_torch_corpus.py", "versions": VERSIONS, "seed": SEED}
    manifest.write_text(json.dumps(doc, indent=1) + "\n")
    (OUT / "README.md").write_text(readme(doc))
    return 0


def readme(doc: dict) -> str:
    """tests/corpus_torch/README.md, from corpus.json (so the two cannot disagree)."""
    files = doc["files"]
    total = sum(e["bytes"] for e in files.values())
    versions = ", ".join(f"{k} {v}" for k, v in doc["generator"]["versions"].items())
    lines = [
        "# Corpus: small models as people export them from PyTorch",
        "",
        "Small random-weight (untrained, seeded) versions of the architectures people train in",
        "PyTorch, exported by Google's path to TFLite: litert-torch (the renamed ai-edge-torch), PT2E",
        "quantization, and ai-edge-quantizer. Made by `tools/make_torch_corpus.py` with",
        f"{versions}. {len(files)} files, {total / 1e6:.2f} MB of .tflite.",
        "Measured by `tools/torch_corpus_table.py` (the table before the work of issue 34:",
        "`baseline.md`); checked by `tests/corpus_torch_check`.",
        "",
        "Regenerate (these packages are tools of the generator only, never of mlitool or its tests;",
        "on x86_64 Python 3.11 pip takes torch and torchvision from the machine's disk):",
        "",
        "```sh",
        "python3 -m venv /work/venv-torch",
        "/work/venv-torch/bin/pip install torch==2.14.1 torchvision==0.29.1",
        "/work/venv-torch/bin/pip install litert-torch==0.10.0 ai-edge-quantizer==0.10.0",
        "/work/venv-torch/bin/python tools/make_torch_corpus.py             # everything",
        "/work/venv-torch/bin/python tools/make_torch_corpus.py unet resnet18  # only these",
        "```",
        "",
        "File names: `ARCH_VARIANT.tflite`, batch 1 (PyTorch exports a fixed shape).",
        "- `float_nchw`: `litert_torch.convert(model, sample)`: float, NCHW input as in PyTorch.",
        "- `float_nhwc`: through `litert_torch.to_channel_last_io` (channel-last input; the U-Net's",
        "  output too).",
        "- `pt2e_int8`: `torch.export`, `PT2EQuantizer` (symmetric, per-channel), `prepare_pt2e`, 16",
        "  calibration samples, `convert_pt2e`, `litert_torch.convert(..., quant_config=...)`.",
        "- `pt2e_qdq`: the same PT2E model converted without `quant_config`: float I/O with",
        "  QUANTIZE -> DEQUANTIZE pairs.",
        "- `aeq_int8`: ai-edge-quantizer `static_wi8_ai8` of the `float_nchw` file, 16 samples.",
        "",
        f"Float-input files: `ARCH_nchw_calib.npy` / `ARCH_nhwc_calib.npy`, {N_CALIB} float32",
        "samples (smoothed uniform noise in [-1, 1]) for `--calibration` (named in corpus.json).",
        "BatchNorm statistics are measured on seeded inputs, so activations have trained-looking",
        "ranges. Seeded throughout: a rerun with the same versions writes byte-identical files",
        "(checked: ds_cnn and unet, all variants).",
        "",
        "## Architectures",
        "",
        "| architecture | input (NCHW) | what |",
        "|---|---|---|",
    ]
    for arch in ARCHS:
        lines.append(f"| {arch.name} | {'x'.join(map(str, arch.shape))} | {arch.what} |")
    lines += ["", "## Refused by the exporters (not in the corpus)", ""]
    lines += [f"- `{n}`: {why}" for n, why in doc["dropped"].items()] or ["None."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
