"""Measure the PyTorch-export corpus: which files convert, and whether tflite mode equals LiteRT.

    python tools/torch_corpus_table.py [--corpus DIR] [--only SUBSTR ...] [--c] [--json FILE]
                                       [--md FILE]

For every file of DIR/corpus.json (default tests/corpus_torch, made by tools/make_torch_corpus.py)
runs `mlitool convert` in process in sa8 and fx16: int8 files as they are; float-input files
(float_nchw, float_nhwc, pt2e_qdq) twice, `--weights-only` and `--calibration` with the file's
.npy. Then `mlitool`'s tflite mode on two seeded inputs against LiteRT's reference kernels at
every layer the file has (integers: equal; float32: the same bits, but within 1e-4 of the
tensor's largest magnitude in a file with a float op LiteRT runs through the host libm,
tests/support/litert.py LIBM_OPS: "float32 rounding (libm: OPS)" then, as rounding carries from
layer to layer). `--c`: also compile the emitted C of every conversion that succeeded against the real
MLI 2.0.2 library in the four builds and compare it with mli mode at every layer (slow).
Prints a Markdown table, a summary line and the refusals grouped by cause (the message with
numbers and names taken out), most files first. One failing file never stops the table.
Runs with mlitool's own environment (no torch).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tools/corpus_table and tests.support: shared with the checks
from tests.support.corpus import entries  # noqa: E402
from tools.corpus_table import mlitool, reason, short  # noqa: E402

FORMATS = ["sa8", "fx16"]


def is_float(entry: dict) -> bool:
    return entry["inputs"][0]["dtype"] == "float32"


def conversions(corpus: Path, entry: dict) -> dict[str, list[str]]:
    """{label: extra convert arguments}: float-input files weights-only and calibrated."""
    if not is_float(entry):
        return {fmt: ["--format", fmt] for fmt in FORMATS}
    calib = corpus / entry["calibration"]
    out = {}
    for fmt in FORMATS:
        out[f"{fmt} weights-only"] = ["--format", fmt, "--weights-only"]
        out[f"{fmt} calibrated"] = ["--format", fmt, "--calibration", calib]
    return out


def layer_inputs(graph, seed: int) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = {}
    for i in graph.inputs:
        t = graph.tensors[i]
        shape = (2, *t.shape)
        if np.dtype(t.dtype).kind == "f":
            xs[i] = rng.uniform(-1, 1, shape).astype(t.dtype)
        else:
            info = np.iinfo(np.dtype(t.dtype))
            xs[i] = rng.integers(info.min, info.max + 1, shape).astype(t.dtype)
    return xs


def float_tolerance(want: np.ndarray) -> float:
    """float32 results after a libm op may differ by 1e-4 of the tensor's largest magnitude: the
    host libm rounds otherwise, and each layer reads the previous layer's own result."""
    finite = np.abs(want[np.isfinite(want)])
    return max(1e-4 * float(finite.max(initial=0.0)), 1e-6)


def compare_layers(path: Path, seed: int) -> dict:
    """tflite mode against LiteRT at every tensor both have; the first that differs."""
    from mlitool import oracle
    from mlitool.errors import MlitoolError
    from mlitool.execute.reference.graph import run_graph
    from mlitool.pipeline import read
    from tests.support.litert import libm_ops

    try:
        g = read(path).main
        xs = layer_inputs(g, seed)
        ours = run_graph(g, xs, "tflite", keep=True)
    except MlitoolError as exc:
        first = str(exc).splitlines()[0]
        return {"status": "refused", "reason": re.sub(r"^\S+\.tflite: ", "", first)}
    every = [t for op in g.ops for t in op.outputs]
    ref = oracle.run_litert(path, g, xs, every)
    layers, libm, rounded = 0, sorted(libm_ops(g)), False  # libm: tests/support/litert.py
    for op in g.ops:
        for t in op.outputs:
            if t not in ref or t not in ours:
                continue
            layers += 1
            want, got = ref[t].reshape(ours[t].shape), ours[t]
            if np.dtype(want.dtype).kind == "f" and libm:  # the host libm's rounding
                bad = ~np.isclose(got, want, rtol=0, atol=float_tolerance(want), equal_nan=True)
                rounded = rounded or not np.array_equal(got, want, equal_nan=True)
            elif np.dtype(want.dtype).kind == "f":
                bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
            else:
                bad = got.astype(np.int64) != want
            n = int(np.count_nonzero(bad))
            if n:
                diff = np.abs(got.astype(np.float64) - want.astype(np.float64))[bad].max()
                why = f"{op.type} '{g.tensors[t].name}': {n} of {want.size} differ, max {diff:g}"
                return {"status": "differs", "reason": why, "layers": layers}
    if rounded:
        why = f"float32 rounding after the host libm ({', '.join(libm)})"
        return {"status": "rounding", "reason": why, "layers": layers}
    return {"status": "equal", "layers": layers}


def c_equals_mli(corpus: Path, name: str, args: list, tmp: Path) -> dict:
    """The emitted C on the real library (four builds) against mli mode at every layer."""
    from tests.support import runtime_harness as H
    from tests.support.mli_build import build_mli
    from tests.support.paths import mli_cflags

    fmt = args[args.index("--format") + 1]
    calib = args[args.index("--calibration") + 1] if "--calibration" in args else None
    try:
        results = H.run_case(
            corpus / name, fmt, tmp, build_mli(), mli_cflags("2.0"), calibration=calib, samples=2
        )
    except Exception as exc:
        return {"status": "error", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
    bad = {f"{r}/{a}": c.first_failure for (r, a), c in results.items() if c.differing}
    return {"status": "differs", "reason": str(bad)[:300]} if bad else {"status": "equal"}


def measure(corpus: Path, name: str, entry: dict, with_c: bool) -> dict:
    path = corpus / name
    seed = zlib.crc32(name.encode())
    row: dict = {"file": name, "variant": entry["variant"], "convert": {}, "c": {}}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for label, args in conversions(corpus, entry).items():
            out = tmp / label.replace(" ", "_")
            code, err = mlitool(["convert", path, *args, "--out", out, "-q"])
            row["convert"][label] = (
                {"ok": True}
                if code == 0
                else {
                    "ok": False,
                    "exit": code,
                    "reason": reason(code, err),
                    "details": details(err),
                }
            )
            warns = [ln for ln in err.splitlines() if "warning" in ln.lower()]
            if warns:
                row["convert"][label]["warnings"] = warns
            if with_c and code == 0 and "weights-only" not in label:
                row["c"][label] = c_equals_mli(corpus, name, args, tmp / (label + "_c"))
        try:
            row["tflite_vs_litert"] = compare_layers(path, seed)
        except Exception as exc:
            row["tflite_vs_litert"] = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
    row["converts_all"] = all(c["ok"] for c in row["convert"].values())
    return row


def details(stderr: str) -> list[str]:
    """The indented lines under an error that lists its reasons ("for 2 reasons:")."""
    lines = stderr.splitlines()
    at = next((i for i, ln in enumerate(lines) if "error" in ln.lower()), None)
    if at is None:
        return []
    out = []
    for ln in lines[at + 1 :]:
        if not ln.startswith((" ", "\t")):
            break
        out.append(ln.strip())
    return out


def why(conv: dict) -> str:
    """A refusal's first line, and the causes it lists (each once, numbers and names out)."""
    subs = dict.fromkeys(detail_cause(d) for d in conv.get("details", []))
    if not subs:
        return conv["reason"]
    head = re.sub(r"op\(s\) cannot be lowered.*$", "ops cannot be lowered:", conv["reason"])
    return f"{head} {'; '.join(subs)}"


def detail_cause(line: str) -> str:
    """One listed reason without the ops it names: "tensor '…' has batch N (MLI runs batch N)"."""
    line = re.sub(r"^op \d+ \((\w+)\): ", "", line)
    line = re.sub(r": \d+ ops: .*$", "", line)
    return cause(line)


def cell(convs: dict, fmt: str) -> str:
    """ok, or the reason; float files: both ways ok, else which way fails and why."""
    mine = {k: v for k, v in convs.items() if k.split()[0] == fmt}
    if all(v["ok"] for v in mine.values()):
        return "ok"
    if len(mine) == 1:
        return short(why(next(iter(mine.values()))), 160)
    reasons = {k.split()[1]: why(v) for k, v in mine.items() if not v["ok"]}
    if len(set(reasons.values())) == 1 and len(reasons) == len(mine):
        return short(next(iter(reasons.values())), 160)
    return "; ".join(f"{way}: {short(r, 70)}" for way, r in reasons.items())


def markdown(rows: list[dict], with_c: bool) -> str:
    head = "| model | variant | sa8 | fx16 | tflite mode = LiteRT (every layer) |"
    rule = "|---|---|---|---|---|"
    if with_c:
        head, rule = head + " C = mli mode |", rule + "---|"
    lines = [head, rule]
    for r in rows:
        t = r["tflite_vs_litert"]
        cells = [cell(r["convert"], f) for f in FORMATS]
        cells.append("equal" if t["status"] == "equal" else f"{t['status']}: {short(t['reason'])}")
        if with_c:
            cs = r["c"].values()
            cells.append(
                "—" if not cs else "equal" if all(c["status"] == "equal" for c in cs) else
                "; ".join(short(c["reason"], 60) for c in cs if c["status"] != "equal")
            )  # fmt: skip
        stem = r["file"].removesuffix(".tflite").removesuffix("_" + r["variant"])
        lines.append(f"| {stem} | {r['variant']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def cause(text: str) -> str:
    """A refusal's message without its numbers, names and lists: files refused alike group
    together."""
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"tensors? \d+ \(.*?\)(?: and \d+ more)?(?=; )", "tensors …", text)
    text = re.sub(r"(?<!\w)-?\d+(\.\d+)?(e-?\d+)?(?!\w)", "N", text)
    return short(text, 110)


def causes(rows: list[dict]) -> list[tuple[str, list[str]]]:
    """(cause, files it refuses) by the number of files, most first."""
    hits: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        for c in r["convert"].values():
            if not c["ok"]:
                subs = [detail_cause(d) for d in c.get("details", [])]
                for k in subs or [cause(c["reason"])]:
                    hits[k].add(r["file"])
        t = r["tflite_vs_litert"]
        if t["status"] not in ("equal", "rounding"):
            hits["tflite mode: " + cause(t["reason"])].add(r["file"])
    return sorted(((k, sorted(v)) for k, v in hits.items()), key=lambda kv: (-len(kv[1]), kv[0]))


def summary(rows: list[dict], with_c: bool) -> str:
    n = len(rows)
    conv = sum(r["converts_all"] for r in rows)
    eq = sum(r["tflite_vs_litert"]["status"] == "equal" for r in rows)
    near = sum(r["tflite_vs_litert"]["status"] == "rounding" for r in rows)
    text = (
        f"{conv} of {n} files convert in sa8 and fx16 (float-input files both weights-only and "
        f"calibrated); tflite mode equals LiteRT at every layer on {eq} of {n} bit for bit"
        f" and on {near} more within float32 rounding (the host libm)."
    )
    if with_c:
        runs = [c for r in rows for c in r["c"].values()]
        ok = sum(c["status"] == "equal" for c in runs)
        text += f" The C equals mli mode in {ok} of {len(runs)} conversions (four builds each)."
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus_torch")
    ap.add_argument("--only", nargs="*", default=[], help="files whose name contains one of these")
    ap.add_argument("--c", action="store_true", help="also run the emitted C on the real library")
    ap.add_argument("--json", type=Path, help="write every figure and full reason here")
    ap.add_argument("--md", type=Path, help="also write the table, summary and causes here")
    args = ap.parse_args(argv)

    rows = []
    for name, entry in entries(args.corpus).items():
        if args.only and not any(s in name for s in args.only):
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        try:
            rows.append(measure(args.corpus, name, entry, args.c))
        except Exception as exc:  # never lose the table to one file
            t = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
            rows.append(
                {"file": name, "variant": entry.get("variant", "?"), "convert": {}, "c": {},
                 "tflite_vs_litert": t, "converts_all": False}
            )  # fmt: skip
    text = markdown(rows, args.c) + "\n" + summary(rows, args.c) + "\n\n## Causes, by files hit\n\n"
    text += "".join(f"- {len(files)} files: {c}\n" for c, files in causes(rows))
    print(text, end="")
    if args.md:
        args.md.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
