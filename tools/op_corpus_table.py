"""Measure the op corpus (tests/corpus_ops, issue 35): per file, does mlitool convert it, how does
each op run, does tflite mode equal LiteRT, does float mode run.

    python tools/op_corpus_table.py [--corpus DIR] [--only SUBSTR ...] [--json FILE] [--md FILE]
    python tools/op_corpus_table.py --from-json FILE [--md FILE]   # re-render a measured run

For every file of DIR/corpus.json, in process with the mlitool of this tree (PYTHONPATH=$PWD):
- `convert`: int8 files in sa8, 16x8 files in fx16, float32 files in sa8 with --weights-only;
- `inspect --json`: the "runs as" of the op under test (and of every op the support check refuses);
- `run --mode tflite` on one seeded input against the LiteRT interpreter's reference kernels, as
  tools/corpus_table.py compares (the same integers; float32 outputs: the same bits);
- `run --mode float` on the same input: runs or refused; on float32 files also compared with LiteRT.
A file is *refused* when convert fails for the op under test (*blocked by another op* when the
refusal names only other ops of the file), *not checkable* when it converts but tflite mode refuses
it (verify then has no TFLite reference), *differs* when tflite mode runs but disagrees with LiteRT
(*float32 rounding* when float outputs differ within tests/corpus_check's bound, rtol 1e-5 and
atol 1e-6), *fine* when equal (a model on LiteRT's builtin kernels: equal once its output
QUANTIZEs are LiteRT's reference one, `reference_quantize_outputs`), *invalid file* when LiteRT cannot prepare the file either (a
converter artifact; a LiteRT kernel that fails when invoked lacks the dtype). Where tflite mode and LiteRT's reference kernels differ, LiteRT's builtin
kernels are compared too. Runs with mlitool's own environment (no TensorFlow).
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
        ops = list(dict.fromkeys(re.findall(r"op \d+ \((\w+)\)|(\w+) \(ops? \d+", part)))
        names = ", ".join(dict.fromkeys(a or b for a, b in ops))
        why = re.sub(r"\d+ ops?: .*$", "", part)  # the list of ops, given as names
        why = re.sub(r"op \d+ \(\w+\):? ?", "", why)
        why = re.sub(r"tensor '[^']*'|tensor \d+ '[^']*'", "tensor", why).strip(" :;,")
        parts.append(f"{names}: {why}" if names and why else names or why)
    text = re.sub(r"'[^']{25,}'", "'…'", "; ".join(p for p in parts if p))
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("|", "\\|")


def inspect(path: Path) -> dict:
    from mlitool.cli.entry import main

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
        kind = row.get("custom_code") or row["type"]  # a custom op by its name
        rewritten = row.get("rewritten") or {}
        how = (
            row.get("runs_as")
            or (f"float island rewritten as int8 {rewritten['as']}" if "as" in rewritten else None)
            or (f"folded ({row['folded']})" if row.get("folded") else None)
            or "supported"
        )
        if not row.get("supported"):
            bad.append(f"{kind}: {row.get('unsupported_reason') or 'unsupported'}")
            how = "refused"
        if kind == op and how not in mine:
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
    why = f"{ndiff} of {total} elements differ, max {worst:g}"
    floats = all(w.dtype.kind == "f" for w in want.values())
    # tests/corpus_check's bound for float models: float32 rounding (summation order, libm).
    close = floats and all(
        np.allclose(np.asarray(got[k]).reshape(w.shape), w, rtol=1e-5, atol=1e-6)
        for k, w in want.items()
    )
    return {"status": "float32 rounding" if close else "differs", "reason": why}


def litert(path: Path, x: np.ndarray, builtin: bool = False) -> tuple[dict, str]:
    """LiteRT's outputs: the reference kernels as mlitool's oracle loads them, or (builtin) the
    builtin kernels without delegates."""
    from ai_edge_litert import interpreter as litert_api

    from mlitool.oracle import interpreter

    if builtin:
        it, kernels = (
            litert_api.Interpreter(
                model_path=str(path),
                experimental_op_resolver_type=litert_api.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                num_threads=1,
            ),
            "builtin",
        )
    else:
        it, kernels = interpreter(path)
    it.allocate_tensors()
    (d,) = it.get_input_details()
    it.set_tensor(d["index"], x.reshape(d["shape"]))
    it.invoke()
    return {o["name"]: it.get_tensor(o["index"]).copy() for o in it.get_output_details()}, kernels


def reference_quantize_outputs(path: Path, x: np.ndarray) -> dict | None:
    """LiteRT's builtin outputs, each one a QUANTIZE of float32 writes recomputed by LiteRT's
    reference QUANTIZE from the builtin kernels' float32 input (None when no output is such):
    for a model the reference resolver lacks an op of (ROUND, CEIL), whose builtin x86 QUANTIZE
    rounds exact halves otherwise than the reference one and TFLite Micro's (8 at a time: times
    the reciprocal scale, ties to even; the rest divided in double)."""
    from ai_edge_litert import interpreter as litert_api

    from mlitool.tflite.reader import read_model
    from tests.support.tflite_build import T, single_op_model

    g = read_model(path).main
    quantized = {
        op.outputs[0]: op.inputs[0]
        for op in g.ops
        if op.type == "QUANTIZE"
        and op.outputs[0] in g.outputs
        and g.tensors[op.inputs[0]].dtype == "float32"
    }
    if not quantized:
        return None

    def run(model, resolver, value):
        it = litert_api.Interpreter(
            model_content=model,
            experimental_op_resolver_type=resolver,
            experimental_preserve_all_tensors=True,
            num_threads=1,
        )
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], value)
        it.invoke()
        return it

    types = litert_api.OpResolverType
    it = run(
        path.read_bytes(),
        types.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        x.reshape(g.tensors[g.inputs[0]].shape),
    )
    out = {}
    for d in it.get_output_details():
        value = it.get_tensor(d["index"]).copy()
        if d["index"] in quantized:
            src, t = it.get_tensor(quantized[d["index"]]), g.tensors[d["index"]]
            q = dict(scale=[float(t.quant.scale[0])], zero_point=[int(t.quant.zero_point[0])])
            one = single_op_model(
                "QUANTIZE", [T(list(src.shape), "float32")], [T(list(src.shape), t.dtype, **q)]
            )
            ref = run(one, types.BUILTIN_REF, src)
            value = ref.get_tensor(ref.get_output_details()[0]["index"]).copy()
        out[d["name"]] = value
    return out


def measure(corpus: Path, name: str, entry: dict) -> dict:
    path = corpus / name
    seed = zlib.crc32(name.encode())
    row = {"file": name, "op": entry["op"], "dtype": entry["dtype"], "variant": entry["variant"]}
    row["ops"] = entry["ops"]
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
            if row["tflite"]["status"] != "equal" and row["litert_kernels"].startswith("reference"):
                # Which kernel is off: LiteRT's builtin kernels are what TFLite users run.
                other = compare(got, litert(path, x, builtin=True)[0])
                row["tflite"]["vs_litert_builtin"] = other["status"]
            elif row["tflite"]["status"] != "equal":
                # builtin kernels (the reference resolver lacks an op): their QUANTIZE's ties
                ref_quant = reference_quantize_outputs(path, x)
                if ref_quant is not None and compare(got, ref_quant)["status"] == "equal":
                    row["tflite"] = {"status": "equal", "quantize": "reference"}
        got, why = run_mode(path, x, tmp, "float")
        if why is not None:
            row["float"] = {"status": "refused", "reason": why}
        elif want is not None and entry["variant"] == "float32":
            row["float"] = compare(got, want)
        else:
            row["float"] = {"status": "runs"}
    # The file is refused for its own op when inspect refuses it, when the reason names it, or
    # when the reason names no op at all; else another op of the file blocks it.
    named = row["convert"].get("reason", "")
    names = re.findall(r"op \d+ \((\w+)\)|(\w+) \(ops? \d+|^(\w+):", named)
    mine = (
        "refused" in row["runs_as"]["op"]
        or re.search(rf"\b{entry['op']}\b", named)
        or not any(a or b or c for a, b, c in names)
    )
    row["verdict"] = (
        "invalid file"  # LiteRT cannot prepare it either: a converter artifact
        if row["litert_kernels"].startswith("LiteRT error")
        and "failed to prepare" in row["litert_kernels"]
        else ("refused" if mine else "blocked by another op")
        if not row["convert"]["ok"]
        else "not checkable"
        if row["tflite"]["status"] in ("refused", "no LiteRT")
        else "float32 rounding"
        if row["tflite"]["status"] == "float32 rounding"
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
        if r["tflite"].get("vs_litert_builtin") == "equal":
            t += "; equals LiteRT's builtin kernels"
        if not str(r.get("litert_kernels", "reference")).startswith("reference"):
            t += " (LiteRT builtin kernels"
            t += ", its reference QUANTIZE)" if r["tflite"].get("quantize") else ")"
        stem = r["file"].removesuffix(".tflite")
        lines.append(
            f"| {stem} | {r['op']} | {r['dtype']} | {how} | {conv} | {t} | {cell(r['float'])} | {r['verdict']} |"
        )
    return "\n".join(lines) + "\n"


CONTRACT = ROOT / "tools" / "tflm_ops.json"
COLUMNS = ["float32", "int8", "int16", "int32", "bool"]
SHORT = {
    "refused": "refused",
    "blocked by another op": "blocked",
    "not checkable": "not checkable",
    "differs": "differs",
    "float32 rounding": "rounding",
    "fine": "fine",
}


def contract_table(rows: list[dict]) -> str:
    """One row per op of tools/tflm_ops.json: per dtype TFLite Micro runs it at, how the op runs
    and the verdict of its files at that dtype ('no file': not in the corpus yet)."""
    contract = json.loads(CONTRACT.read_text())
    ops = dict(contract["ops"])
    ops.update(contract.get("custom_ops", {}))
    lines = [
        "| op | TFLite Micro dtypes | " + " | ".join(COLUMNS) + " | in other files |",
        "|---|---|" + "---|" * (len(COLUMNS) + 1),
    ]
    for op, facts in sorted(ops.items()):
        tflm = [{"16x8": "int16"}.get(d, d) for d in facts["dtypes"]]
        cells = []
        for dtype in COLUMNS:
            mine = [r for r in rows if r["op"] == op and r["dtype"] == dtype]
            mine = [r for r in mine if r["verdict"] != "invalid file"]
            if not mine:
                cells.append("no file" if dtype in tflm else "")
                continue
            how = [h for r in mine for h in r["runs_as"]["op"] if h != "refused"]
            worst = min(mine, key=lambda r: ORDER.index(r["verdict"]))
            tally = Counter(r["verdict"] for r in mine)
            head = ", ".join(f"{SHORT[v]} {tally[v]}" for v in ORDER if tally[v])
            if len(mine) == 1:
                head = SHORT[worst["verdict"]]
            why = ", ".join(dict.fromkeys(how))
            if worst["verdict"] in ("refused", "blocked by another op"):
                why = brief(worst["convert"].get("reason", ""), 60)
            elif worst["verdict"] == "not checkable":
                why = brief(worst["tflite"].get("reason", ""), 60)
            cells.append(f"{head}: {why}")
        others = [r for r in rows if r["op"] != op and op in r.get("ops", [])]
        also = f"{len(others)} ({others[0]['file'].removesuffix('.tflite')}, …)" if others else ""
        lines.append(
            f"| {op} | {', '.join(facts['dtypes'])} | " + " | ".join(cells) + f" | {also} |"
        )
    return "\n".join(lines) + "\n"


ORDER = [
    "refused",
    "blocked by another op",
    "not checkable",
    "differs",
    "float32 rounding",
    "fine",
    "invalid file",
]


def summary(rows: list[dict]) -> dict:
    files = Counter(r["verdict"] for r in rows)
    order = ORDER
    per_op: dict[tuple[str, str], str] = {}  # an op at a dtype takes its worst file's verdict
    for r in rows:
        if r["verdict"] == "invalid file":
            continue
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
    def counts(d: dict) -> str:
        return ", ".join(f"{n} {k}" for k, n in d.items() if n)

    return (
        f"{s['files']} files: {counts(s['files_by_verdict'])}.\n\n"
        f"{s['op_dtypes']} op x dtype pairs (each its worst valid file): "
        f"{counts(s['op_dtypes_by_verdict'])}.\n\n"
        f"{s['ops_all_fine']} of {s['ops']} ops fine at every dtype measured.\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus_ops")
    ap.add_argument("--only", nargs="*", default=[], help="files whose name contains one of these")
    ap.add_argument("--json", type=Path, help="write every figure and full reason here")
    ap.add_argument("--md", type=Path, help="also write the table and summary here")
    ap.add_argument("--from-json", type=Path, help="render the rows of an earlier --json run")
    args = ap.parse_args(argv)
    if args.from_json:
        rows = json.loads(args.from_json.read_text())["rows"]
        return render(rows, args)
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
    return render(rows, args)


def render(rows: list[dict], args: argparse.Namespace) -> int:
    s = summary(rows)
    text = (
        "Measured by `tools/op_corpus_table.py` (see its docstring and tests/corpus_ops/README.md):"
        " convert (int8: sa8; 16x8: fx16; float32: sa8 --weights-only), how the op under test"
        " runs (`inspect`), tflite mode against LiteRT, float mode.\n\n"
        + summary_text(s)
        + "\n## Per op of TFLite Micro's resolver\n\n"
        + contract_table(rows)
        + "\n## Per file\n\n"
        + markdown(rows)
    )
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
