"""Fingerprint everything mlitool writes for a set of models, to show a refactoring changed no byte.

    python tools/output_snapshot.py OUT.json [--quick]
    python tools/output_snapshot.py --diff A.json B.json

Converts every model of samples/, ../shared/models and tests/corpus in sa8 / fx16 / fx8w16d (MLI 2.0) and fx16
(MLI 1.1, 1.0), with and without --no-runtime (float models with --weights-only, float models
with a calibration file beside them also calibrated), and runs `verify --json` (which runs every executor mode) and
`report --json` on the shared int8 models; records the SHA-256 of each file written, or the exit
code and stderr of a refusal. Run by hand (minutes), not in CI.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"
CONVERTS = [("sa8", "2.0"), ("fx16", "2.0"), ("fx8w16d", "2.0"), ("fx16", "1.1"), ("fx16", "1.0")]


def _mlitool(args: list[str]) -> tuple[int, str, str]:
    from mlitool.cli.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    return code, out.getvalue(), err.getvalue().replace(str(ROOT), "<root>")  # any checkout


def _files(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def models(quick: bool) -> list[Path]:
    found = sorted((ROOT / "samples").glob("*.tflite"))
    if not quick:
        found += sorted((ROOT / "samples" / "ops").glob("*.tflite"))
    found += sorted(SHARED.glob("*/*.tflite"))
    if not quick:
        found += sorted((ROOT / "tests" / "corpus").glob("*.tflite"))
    return found


def snapshot(quick: bool) -> dict[str, object]:
    result: dict[str, object] = {}
    for model in models(quick):
        # Named the same from any checkout: samples/... or shared/models/...
        rel = str(model.relative_to(ROOT if ROOT in model.parents else ROOT.parent))
        # Float models: weights only, and the calibrated CNN sample.
        floats = "float" in model.name or "hybrid" in model.name
        settings = [["--weights-only"]] if floats else [[]]
        calibration = model.with_name(model.stem + "_calib.npy")
        if model.name == "cnn_float.tflite":
            calibration = ROOT / "samples" / "cnn_calib.npy"
        if floats and calibration.exists():
            settings.append(["--calibration", calibration])
        for fmt, mli in CONVERTS:
            for extra in (s + r for s in settings for r in ([], ["--no-runtime"])):
                with tempfile.TemporaryDirectory() as tmp:
                    code, _, err = _mlitool(
                        ["convert", model, "-o", tmp, "--format", fmt, "--mli", mli, "-q", *extra]
                    )
                    flags = " ".join(Path(e).name if isinstance(e, Path) else e for e in extra)
                    key = f"convert {rel} {fmt} {mli} {flags}".strip()
                    result[key] = _files(Path(tmp)) if code == 0 else {"exit": code, "err": err}
        if model.parent.parent == SHARED and "int8" in model.name:
            for cmd in (
                ["verify", model, "--samples", "8", "--json", "-q"],
                ["report", model, "--samples", "4", "--json", "-q"],
            ):
                code, out, err = _mlitool(cmd)
                result[f"{cmd[0]} {rel}"] = {
                    "exit": code,
                    "out": hashlib.sha256(out.encode()).hexdigest(),
                    "err": err if code else "",
                }
        print(rel, file=sys.stderr)
    return result


def main() -> None:
    if sys.argv[1] == "--diff":
        a, b = (json.loads(Path(p).read_text()) for p in sys.argv[2:4])
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        for k in differ:
            print(f"{k}\n  before {a.get(k)}\n  after  {b.get(k)}")
        print(f"{len(differ)} of {len(a.keys() | b.keys())} entries differ")
        sys.exit(1 if differ else 0)
    doc = snapshot("--quick" in sys.argv)
    out = Path(sys.argv[1])
    out.with_suffix(".tmp").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    out.with_suffix(".tmp").replace(out)


if __name__ == "__main__":
    main()
