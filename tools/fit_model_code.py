"""Fit `mlitool.image.CODE_BYTES`, the bytes of ARC HS code per thing the runtime emitter
writes, to the cross compiler's output.

    python tools/fit_model_code.py [MODEL ...]

Models: the given .tflite files, else the int8 models of ../shared/models/mlperf_tiny and
tests/corpus. Each is converted (`convert --target em`) and cross-linked as tools/link_image.py
does; the bytes of its runtime functions (NAME_init, NAME_run, NAME_bind_views, NAME_input,
NAME_output; the fallback kernels are measured apart, tools/measure_mli_code.py) are fitted by
least squares to `mlitool.image.code_counts` of the same model. Prints the constants (to 0.1 B)
to paste into mlitool/image.py, and each model's measured and estimated bytes.
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
    from mlitool import image
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


def main(argv=None) -> int:
    from mlitool.image import CODE_BYTES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    args = ap.parse_args(argv)
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
