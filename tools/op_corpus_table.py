"""Measure the op corpus (tests/corpus_ops, issue 35): per file, does mlitool convert it, how does
each op run, does tflite mode equal LiteRT, does float mode run.

    python tools/op_corpus_table.py [--corpus DIR] [--only SUBSTR ...] [--json FILE] [--md FILE]

For every file of DIR/corpus.json, in process with the mlitool of this tree (PYTHONPATH=$PWD):
- `convert`: int8 files in sa8, 16x8 files in fx16, float32 files in sa8 with --weights-only;
- `inspect --json`: the "runs as" of the op under test (and of every op the support check refuses);
- `run --mode tflite` on one seeded input against the LiteRT interpreter's reference kernels, as
  tools/corpus_table.py compares (the same integers; float32 outputs: the same bits);
- `run --mode float` on the same input: runs or refused; on float32 files also compared with LiteRT.
A file is *refused* when convert fails, *not checkable* when it converts but tflite mode refuses
it (verify then has no TFLite reference), *differs* when tflite mode runs but disagrees with LiteRT,
*fine* otherwise. Runs with mlitool's own environment (no TensorFlow).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import corpus_table as ct  # noqa: E402  the CLI call, the reason line, the LiteRT comparison

FORMAT = {
    "int8": ["--format", "sa8"],
    "16x8": ["--format", "fx16"],
    "float32": ["--format", "sa8", "--weights-only"],
}


def input_array(path: Path, entry: dict, seed: int) -> np.ndarray:
    """One seeded sample of the model's (single) input: every level of an int8 / int16 input,
    integers in input_range for an int32 input, uniform over input_range for a float input."""
    (inp,) = entry["inputs"]
    shape = [abs(d) for d in inp["shape"]]
    rng = np.random.default_rng(seed)
    dtype = inp["dtype"]
    if dtype in ("int8", "int16"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    low, high = entry["input_range"]
    if dtype == "int32":
        return rng.integers(int(low), int(high), size=shape, endpoint=True, dtype=np.int32)
    return rng.uniform(low, high, size=shape).astype(np.float32)


def reason(code: int, stderr: str) -> str:
    """The error line and the indented lines under it (a refusal of several ops lists one reason
    per line), joined by '; '."""
    lines = stderr.splitlines()
    head = ct.reason(code, stderr)
    at = next((i for i, ln in enumerate(lines) if head in ln), None)
    if at is None:
        return head
    more = []
    for ln in lines[at + 1 :]:
        if not ln.startswith((" ", "\t")):
            break
        more.append(ln.strip())
    return "; ".join([head.rstrip(":")] + more)


def brief(text: str, width: int = 110) -> str:
    """A table cell: per reason line, the op types it names and the reason without tensor names."""
    parts = []
    for part in text.split("; "):
        part = re.sub(r"^\d+ op\(s\) cannot be lowered[^:]*:?\s*", "", part)
        part = re.sub(r"^graph '[^']*': (tflite|float) mode cannot run", "cannot run:", part)
        ops = list(dict.fromkeys(re.findall(r"op \d+ \((\w+)\)|(\w+) \(op \d+\)", part)))
        names = ", ".join(dict.fromkeys(a or b for a, b in ops))
        why = re.sub(r"\d+ ops?: .*$", "", part)  # the list of ops, given as names
        why = re.sub(r"op \d+ \(\w+\):? ?", "", why)
        why = re.sub(r"tensor '[^']*'|tensor \d+ '[^']*'", "tensor", why).strip(" :;,")
        parts.append(f"{names}: {why}" if names and why else names or why)
    text = re.sub(r"'[^']{25,}'", "'…'", "; ".join(p for p in parts if p))
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("|", "\\|")


def inspect(path: Path) -> dict:
    from mlitool.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["inspect", str(path), "--json"])
        except SystemExit:
            pass
    try:
        return json.loads(out.getvalue())
    except json.JSONDecodeError:
        return {"error": reason(1, err.getvalue())}


def runs_as(doc: dict, op: str) -> dict:
    """How the op under test runs (each distinct answer once) and the ops the support check refuses."""
    if "error" in doc:
        return {"op": [f"inspect failed: {doc['error']}"], "unsupported": []}
    mine, bad = [], []
    for row in doc.get("ops", []):
        rewritten = row.get("rewritten") or {}
        how = (
            row.get("runs_as")
            or (f"float island rewritten as int8 {rewritten['as']}" if "as" in rewritten else None)
            or (f"folded ({row['folded']})" if row.get("folded") else None)
            or "supported"
        )
        if not row.get("supported"):
            bad.append(f"{row['type']}: {row.get('unsupported_reason') or 'unsupported'}")
            how = "refused"
        if row["type"] == op and how not in mine:
            mine.append(how)
    return {"op": mine or ["(not in the file)"], "unsupported": bad}


def run_mode(path: Path, x: np.ndarray, tmp: Path, mode: str) -> tuple[dict | None, str | None]:
    # --input's leading dimension counts samples: a batch-1 input is one sample as it is, an
    # input without a batch dimension (EMBEDDING_LOOKUP's ids [3]) gets one.
    np.save(tmp / "input.npy", x if x.ndim > 1 and x.shape[0] == 1 else x[None])
    npz = tmp / f"{mode}.npz"
    code, err = ct.mlitool(
        ["run", path, "--mode", mode, "--input", tmp / "input.npy", "--npz", npz, "-q"]
    )
    if code != 0:
        return None, reason(code, err)
    with np.load(npz) as f:
        return {k: f[k].reshape(-1) if x.ndim == 1 else f[k] for k in f.files}, None


def compare(got: dict, want: dict) -> dict:
    if set(got) != set(want):
        return {"status": "differs", "reason": f"outputs {sorted(got)} vs LiteRT {sorted(want)}"}
    worst, ndiff, total = 0.0, 0, 0
    for name, w in want.items():
        g = np.asarray(got[name]).reshape(w.shape)
        if g.dtype != w.dtype:
            return {"status": "differs", "reason": f"{name}: dtype {g.dtype} vs {w.dtype}"}
        bits = f"u{w.dtype.itemsize}"
        same = g.view(bits) == w.view(bits) if w.dtype.kind == "f" else g == w
        ndiff += int(np.count_nonzero(~same))
        total += w.size
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        worst = max(worst, float(np.nanmax(diff, initial=0.0)))
    if ndiff == 0:
        return {"status": "equal"}
    return {"status": "differs", "reason": f"{ndiff} of {total} elements differ, max {worst:g}"}


def litert(path: Path, x: np.ndarray) -> tuple[dict, str]:
    from mlitool.oracle import interpreter

    it, kernels = interpreter(path)
    it.allocate_tensors()
    (d,) = it.get_input_details()
    it.set_tensor(d["index"], x.reshape(d["shape"]))
    it.invoke()
    return {o["name"]: it.get_tensor(o["index"]).copy() for o in it.get_output_details()}, kernels


def measure(corpus: Path, name: str, entry: dict) -> dict:
    path = corpus / name
    seed = zlib.crc32(name.encode())
    row = {"file": name, "op": entry["op"], "dtype": entry["dtype"], "variant": entry["variant"]}
    row["runs_as"] = runs_as(inspect(path), entry["op"])
    x = input_array(path, entry, seed)
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        code, err = ct.mlitool(
            ["convert", path, *FORMAT[entry["variant"]], "--out", tmp / "c", "-q"]
        )
        row["convert"] = (
            {"ok": True} if code == 0 else {"ok": False, "exit": code, "reason": reason(code, err)}
        )
        try:
            want, kernels = litert(path, x)
            row["litert_kernels"] = kernels
        except Exception as exc:
            want, row["litert_kernels"] = None, f"LiteRT error: {type(exc).__name__}: {exc}"
        got, why = run_mode(path, x, tmp, "tflite")
        if why is not None:
            row["tflite"] = {"status": "refused", "reason": why}
        elif want is None:
            row["tflite"] = {"status": "no LiteRT", "reason": row["litert_kernels"]}
        else:
            row["tflite"] = compare(got, want)
        got, why = run_mode(path, x, tmp, "float")
        if why is not None:
            row["float"] = {"status": "refused", "reason": why}
        elif want is not None and entry["variant"] == "float32":
            row["float"] = compare(got, want)
        else:
            row["float"] = {"status": "runs"}
    row["verdict"] = (
        "refused"
        if not row["convert"]["ok"]
        else "not checkable"
        if row["tflite"]["status"] in ("refused", "no LiteRT")
        else "differs"
        if row["tflite"]["status"] != "equal"
        else "fine"
    )
    return row


def cell(d: dict) -> str:
    return d["status"] if "reason" not in d else f"{d['status']}: {brief(d['reason'], 90)}"


def markdown(rows: list[dict]) -> str:
    lines = [
        "| file | op | dtype | runs as | convert | tflite = LiteRT | float mode | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        how = ", ".join(r["runs_as"]["op"])
        conv = "ok" if r["convert"]["ok"] else brief(r["convert"]["reason"])
        t = cell(r["tflite"])
        if not str(r.get("litert_kernels", "reference")).startswith("reference"):
            t += " (LiteRT builtin kernels)"
        stem = r["file"].removesuffix(".tflite")
        lines.append(
            f"| {stem} | {r['op']} | {r['dtype']} | {how} | {conv} | {t} | {cell(r['float'])} | {r['verdict']} |"
        )
    return "\n".join(lines) + "\n"


def summary(rows: list[dict]) -> dict:
    files = Counter(r["verdict"] for r in rows)
    order = ["refused", "not checkable", "differs", "fine"]
    per_op: dict[tuple[str, str], str] = {}  # an op at a dtype takes its worst file's verdict
    for r in rows:
        key = (r["op"], r["dtype"])
        old = per_op.get(key, "fine")
        per_op[key] = min(old, r["verdict"], key=order.index)
    ops = Counter(per_op.values())
    return {
        "files": len(rows),
        "files_by_verdict": {k: files.get(k, 0) for k in order},
        "op_dtypes": len(per_op),
        "op_dtypes_by_verdict": {k: ops.get(k, 0) for k in order},
        "ops": len({op for op, _ in per_op}),
        "ops_all_fine": len(
            {op for op, _ in per_op} - {op for (op, _), v in per_op.items() if v != "fine"}
        ),
    }


def summary_text(s: dict) -> str:
    f, o = s["files_by_verdict"], s["op_dtypes_by_verdict"]
    return (
        f"{s['files']} files: {f['refused']} refused, {f['not checkable']} not checkable, "
        f"{f['differs']} differ from LiteRT, {f['fine']} fine. {s['op_dtypes']} op x dtype pairs "
        f"(the worst file of each): {o['refused']} refused, {o['not checkable']} not checkable, "
        f"{o['differs']} differ, {o['fine']} fine. {s['ops_all_fine']} of {s['ops']} ops fine at every dtype measured.\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus_ops")
    ap.add_argument("--only", nargs="*", default=[], help="files whose name contains one of these")
    ap.add_argument("--json", type=Path, help="write every figure and full reason here")
    ap.add_argument("--md", type=Path, help="also write the table and summary here")
    args = ap.parse_args(argv)
    files = json.loads((args.corpus / "corpus.json").read_text())["files"]
    rows = []
    for name, entry in files.items():
        if args.only and not any(s in name for s in args.only):
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        try:
            rows.append(measure(args.corpus, name, entry))
        except Exception as exc:  # never lose the table to one file
            why = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
            rows.append(
                {
                    "file": name,
                    "op": entry["op"],
                    "dtype": entry["dtype"],
                    "variant": entry["variant"],
                    "runs_as": {"op": ["?"], "unsupported": []},
                    "convert": {"ok": False, **why},
                    "tflite": why,
                    "float": why,
                    "verdict": "refused",
                }
            )
    s = summary(rows)
    text = markdown(rows) + "\n" + summary_text(s)
    print(text, end="")
    if args.md:
        args.md.write_text(text)
    if args.json:
        args.json.write_text(
            json.dumps({"summary": s, "rows": rows}, indent=1, sort_keys=True) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
