"""Tabulate `convert --fast-memory` plans: per model and budget, what the fast buffer and the slow
arena take, how many layers run in more than one call, and the bytes moved per inference
against their lower bound (every constant once, each slow activation buffer once each way).

    python tools/fast_memory_table.py [--budgets 16K,32K,64K,128K] [--format FMT] [--json FILE]
                                      [MODEL ...]

Models: the given .tflite files, else every shared int8 model (../shared/models, or
$MLITOOL_SHARED/models) and the Keras fixtures the fast-memory tests use (tests/corpus), each
converted as `convert` does by default (sa8, MLI 2.0) or in `--format` (fx16 and fx8w16d
insert a relu after an ADD with a fused activation, and conversions around fallback C). The figures are the plan's
(`mlitool.mli.memory.placement.plan_figures`), the ones the manifest and `report --fast-memory` give; a
budget too small says the bytes the model needs at least. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERAS = ["mobilenet_v2_int8", "unet_int8", "kws_conv1d_int8", "transformer_int8"]


def default_models() -> list[Path]:
    shared = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared")) / "models"
    found = sorted(p for p in shared.rglob("*_int8.tflite"))
    return found + [ROOT / "tests" / "corpus" / f"{k}.tflite" for k in KERAS]


def measure(path: Path, budgets: list[int], fmt: str = "sa8") -> list[dict]:
    from mlitool.errors import MlitoolError, UnsupportedError
    from mlitool.mli.memory.placement import plan_figures, plan_model
    from mlitool.pipeline import ModelOptions, load, settle

    try:
        _, model = load(path, settle(ModelOptions(format=fmt)))
    except MlitoolError as exc:
        return [
            {"model": path.stem, "budget": b, "format": fmt, "error": str(exc)} for b in budgets
        ]
    rows = []
    for budget in budgets:
        row = {"model": path.stem, "budget": budget, "format": fmt}
        try:
            fig = plan_figures(plan_model(model, budget), model)
        except UnsupportedError as exc:
            need = re.search(r"needs at least (\d+) bytes", str(exc))
            row["needs"] = int(need.group(1)) if need else None
            row["error"] = str(exc)
        else:
            calls = [la["tiles"] for la in fig["layers"]]
            row.update({k: fig[k] for k in ("fast_bytes", "slow_bytes", "bytes_moved")})
            row["lower_bound_moved"] = fig["lower_bound_moved"]
            row["tiled_layers"] = fig["tiled_layers"]
            row["tiles"] = sum(c for c in calls if c > 1)
        rows.append(row)
    return rows


def _size(budget: int) -> str:
    return f"{budget // 1024}K" if budget % 1024 == 0 else str(budget)


def markdown(rows: list[dict]) -> str:
    out = [
        "| model | budget | fast B | slow B | tiled layers (calls) | bytes moved | lower bound "
        "| moved / bound |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        fmt = "" if r.get("format", "sa8") == "sa8" else f" ({r['format']})"
        head = f"| {r['model']}{fmt} | {_size(r['budget'])} |"
        if "error" in r:
            why = f"does not fit: needs {r['needs']:,} B" if r.get("needs") else r["error"]
            out.append(f"{head} {why} | | | | | |")
            continue
        ratio = r["bytes_moved"] / r["lower_bound_moved"] if r["lower_bound_moved"] else 1.0
        out.append(
            f"{head} {r['fast_bytes']:,} | {r['slow_bytes']:,} | {r['tiled_layers']} "
            f"({r['tiles']}) | {r['bytes_moved']:,} | {r['lower_bound_moved']:,} | {ratio:.3f} |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    from mlitool.mli.memory.placement import parse_size

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--budgets", default="16K,32K,64K,128K")
    ap.add_argument("--format", default="sa8", help="sa8 (default), fx16, fx8w16d or fx8")
    ap.add_argument("--json", type=Path, help="also write every figure to FILE")
    args = ap.parse_args(argv)
    budgets = [parse_size(b, "--budgets") for b in args.budgets.split(",")]
    models = args.models or default_models()
    rows = [r for p in models for r in measure(p, budgets, args.format.lower())]
    sys.stdout.write(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
