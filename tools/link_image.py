"""Cross-link converted models for ARC HS and table the real image against the footprint
mlitool reports.

    python tools/link_image.py [--json FILE] [MODEL ...]

Models: the given .tflite files, else the MLPerf Tiny int8 models of ../shared/models/mlperf_tiny
(vww_96_int8, resnet8_int8, kws_ref_model_int8). Each is converted with `mlitool convert --target
em` (the ARC EM/HS arithmetic), its C compiled and linked with the real MLI 2.0.2 and a main that
inits the model and runs it once (tests/support/arc_image.py: Debian gcc-12-arc-linux-gnu,
-mcpu=hs38 -O2 -ffunction-sections -fdata-sections, --gc-sections, MLI DBG_MODE_RELEASE), and the
link map read per object: the model's .text/.rodata/.data/.bss, MLI's .text/.rodata. Linked ROM =
model .text+.rodata+.data + MLI .text+.rodata+.data; linked RAM = arena + model .data+.bss.
Prints a Markdown table with mlitool's reported figures beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import arc_image  # noqa: E402

MODELS = ("vww_96_int8", "resnet8_int8", "kws_ref_model_int8")


def default_models() -> list[Path]:
    shared = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
    return [shared / "models" / "mlperf_tiny" / f"{m}.tflite" for m in MODELS]


def convert(model: Path, out: Path, extra=()) -> dict:
    """`mlitool convert --target em --json` into `out`; its JSON document."""
    from mlitool.cli.entry import main

    buf = io.StringIO()
    args = ["convert", str(model), "--target", "em", "-o", str(out), "--json", "-q", *extra]
    with contextlib.redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as e:
            if e.code:
                raise RuntimeError(f"mlitool convert {model} failed (exit {e.code})") from e
    return json.loads(buf.getvalue())


def measure(model: Path, extra=()) -> dict:
    """The reported footprint and the linked image of one model."""
    with tempfile.TemporaryDirectory(prefix="link-image-") as tmp:
        tmp = Path(tmp)
        doc = convert(model, tmp, extra)
        name = model.stem
        linked = arc_image.link_model(tmp, name, tmp)
    m, mli = linked["model"], linked["mli"]
    arena = linked["main"]["bss"]
    return {
        "model": name,
        "reported": doc["footprint"],
        "linked": {
            **{f"model_{k}": v for k, v in m.items() if k != "other"},
            **{f"mli_{k}": v for k, v in mli.items() if k in ("text", "rodata", "data")},
            "arena": arena,
            "rom_bytes": m["text"]
            + m["rodata"]
            + m["data"]
            + mli["text"]
            + mli["rodata"]
            + mli["data"],
            "ram_bytes": arena + m["data"] + m["bss"],
        },
    }


def table(rows: list[dict]) -> str:
    head = (
        "| model | reported ROM | linked ROM | model .text / .rodata / .data / .bss | MLI code | "
        "reported RAM | linked RAM |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in rows:
        rep, ln = r["reported"], r["linked"]
        lines.append(
            f"| {r['model']} | {rep['rom_bytes']:,} | {ln['rom_bytes']:,} | "
            f"{ln['model_text']:,} / {ln['model_rodata']:,} / {ln['model_data']:,} / "
            f"{ln['model_bss']:,} | {ln['mli_text'] + ln['mli_rodata'] + ln['mli_data']:,} | "
            f"{rep['ram_bytes']:,} | {ln['ram_bytes']:,} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    try:
        rows = [measure(m) for m in (args.models or default_models())]
    except arc_image.ArcUnavailable as e:
        print(f"link_image: {e}", file=sys.stderr)
        return 2
    print(
        f"{arc_image.compiler_version()}, {' '.join(arc_image.CFLAGS)} "
        f"{' '.join(arc_image.LDFLAGS)}, MLI 2.0.2 "
        + " ".join(f"{k}={v}" for k, v in arc_image.MLI_SETTINGS.items())
    )
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
