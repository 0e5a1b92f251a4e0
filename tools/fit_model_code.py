"""Fit `mlitool.footprint.image.CODE_BYTES`, the bytes of ARC HS code per thing the runtime emitter
writes, to the cross compiler's output.

    python tools/fit_model_code.py [MODEL ...]
    python tools/fit_model_code.py --fast-memory 16K,32K,64K,128K [MODEL ...]

Models: the given .tflite files, else the int8 models of ../shared/models/mlperf_tiny and
tests/corpus. Each is converted (`convert --target em`) and cross-linked as tools/link_image.py
does; the bytes of its runtime functions (NAME_init, NAME_run, NAME_bind_views, NAME_input,
NAME_output; the fallback kernels are measured apart, tools/measure_mli_code.py) are fitted by
least squares to `mlitool.footprint.image.code_counts` of the same model. Prints the constants (to 0.1 B)
to paste into mlitool/footprint/image.py, and each model's measured and estimated bytes.

With --fast-memory it converts each model at each budget and fits `FAST_CODE_BYTES` to what the
fast-memory runtime adds: the model's .text and .rodata less its constants and tables, the
fallback kernels and the `CODE_BYTES` part (default models: vww, resnet8, kws, ad01 and four
corpus models).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import link_image  # noqa: E402

from tests.support import arc_image  # noqa: E402

RUNTIME = ("_init", "_run", "_bind_views", "_input", "_output")


def default_models() -> list[Path]:
    shared = link_image.default_models()[0].parent
    return sorted(shared.glob("*_int8.tflite")) + sorted(
        (ROOT / "tests" / "corpus").glob("*_int8.tflite")
    )


def sample(model: Path) -> tuple[dict[str, int], int]:
    """The model's code counts and the measured bytes of its runtime functions."""
    from mlitool.footprint import image
    from mlitool.pipeline import ModelOptions, load

    with tempfile.TemporaryDirectory(prefix="fit-code-") as tmp:
        tmp = Path(tmp)
        link_image.convert(model, tmp)
        linked = arc_image.link_model(tmp, model.stem, tmp)
    _, mli = load(model, ModelOptions())
    measured = sum(
        n for f, n in linked["functions"].items() if f.removeprefix(model.stem).endswith(RUNTIME)
    )
    return image.code_counts(mli), measured


FAST_CORPUS = ("mobilenet_v2_int8", "unet_int8", "transformer_int8", "kws_conv1d_int8")


def fast_sample(model: Path, budget: str) -> tuple[dict[str, int], int]:
    """The fast-memory counts and the measured bytes the fast runtime adds over the rest."""
    from mlitool.footprint import image
    from mlitool.mli.memory.placement import plan_model
    from mlitool.mli.specialize import specialize
    from mlitool.pipeline import ModelOptions, load

    with tempfile.TemporaryDirectory(prefix="fit-fast-") as tmp:
        tmp = Path(tmp)
        doc = link_image.convert(model, tmp, ["--fast-memory", budget])
        linked = arc_image.link_model(tmp, model.stem, tmp, fast=True)
    fp, m = doc["footprint"], linked["model"]
    _, mli = load(model, ModelOptions())
    counts = image.code_counts(specialize(mli), plan_model(mli, _bytes(budget)))
    rest = sum(image.CODE_BYTES[k] * counts[k] for k in image.CODE_BYTES)
    fallback = image.model_code_bytes(mli) - round(
        sum(image.CODE_BYTES[k] * n for k, n in image.code_counts(mli).items())
    )
    measured = m["text"] + m["rodata"] - fp["rom"]["constants"] - fp["rom"]["lut_tables"]
    return {k: counts[k] for k in image.FAST_CODE_BYTES}, round(measured - rest - fallback)


def _bytes(size: str) -> int:
    return int(size[:-1]) * {"K": 1024, "M": 1 << 20}[size[-1]] if size[-1] in "KM" else int(size)


def fit(rows, keys) -> dict[str, float]:
    x = np.array([[c[k] for k in keys] for _, c, _ in rows], dtype=float)
    y = np.array([b for _, _, b in rows], dtype=float)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    fitted = {k: round(float(v), 1) for k, v in zip(keys, coef)}
    for name, counts, measured in rows:
        est = round(sum(fitted[k] * counts[k] for k in keys))
        print(f"{name:34s} measured {measured:6d}  estimated {est:6d}  {est - measured:+6d} B")
    return fitted


def main(argv=None) -> int:
    from mlitool.footprint.image import CODE_BYTES, FAST_CODE_BYTES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--fast-memory", help="comma-separated budgets: fit FAST_CODE_BYTES")
    args = ap.parse_args(argv)
    if args.fast_memory:
        shared = link_image.default_models()[0].parent
        models = args.models or [
            *(shared / f"{m}.tflite" for m in (*link_image.MODELS, "ad01_int8")),
            *(ROOT / "tests" / "corpus" / f"{m}.tflite" for m in FAST_CORPUS),
        ]
        rows = []
        for m in models:
            for b in args.fast_memory.split(","):
                try:
                    rows.append((f"{m.stem} {b}", *fast_sample(m, b)))
                except RuntimeError as e:  # the model does not fit this budget
                    print(f"{m.stem} {b}: skipped ({e})", file=sys.stderr)
        print(f"FAST_CODE_BYTES = {fit(rows, list(FAST_CODE_BYTES))}")
        return 0
    rows = []
    for m in args.models or default_models():
        try:
            rows.append((m.stem, *sample(m)))
        except arc_image.ArcUnavailable as e:
            print(f"fit_model_code: {e}", file=sys.stderr)
            return 2
    keys = list(CODE_BYTES)
    x = np.array([[c[k] for k in keys] for _, c, _ in rows], dtype=float)
    y = np.array([b for _, _, b in rows], dtype=float)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    fitted = {k: round(float(v), 1) for k, v in zip(keys, coef)}
    print(f"CODE_BYTES = {fitted}")
    for (name, counts, measured), _ in zip(rows, x):
        est = round(sum(fitted[k] * counts[k] for k in keys))
        print(
            f"{name:28s} measured {measured:6d}  estimated {est:6d}  {100 * (est - measured) / measured:+5.1f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
