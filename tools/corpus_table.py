"""Measure the corpus: which files `mlitool convert` takes, and whether tflite mode equals LiteRT.

    python tools/corpus_table.py [--corpus DIR] [--only SUBSTR ...] [--json FILE] [--md FILE]

For every file of DIR/corpus.json (default tests/corpus; a folder without one: every .tflite in
it, the variant read from the file) and each format it is measured in
(int8: sa8 and fx16; 16x8: fx16; float32: sa8 with --calibration), runs `mlitool convert` in
process into a temporary directory and records ok, or the exit code and the reason (the first
error line of stderr). Then `mlitool run --mode tflite` on one seeded random input, compared
with the LiteRT interpreter (ai-edge-litert, reference kernels) at every output: equal means
the same integers (float models: the same float32 bits). Prints a Markdown table and a summary
line; `--json FILE` writes every figure and full reason. One failing file never stops the table.
Runs with mlitool's own environment (no TensorFlow).
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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.corpus: the entries, shared with tests/corpus_check
from tests.support.corpus import entries  # noqa: E402

FORMATS = {"int8": ["sa8", "fx16"], "16x8": ["fx16"], "float32": ["sa8"]}
COLUMNS = ["sa8", "fx16"]


def mlitool(args: list[str]) -> tuple[int, str]:
    """Exit code and stderr of one in-process CLI call."""
    from mlitool.cli.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # a crash is a finding, not the end of the table
            return 70, f"crash: {type(exc).__name__}: {exc}"
    return code, err.getvalue()


def reason(code: int, stderr: str) -> str:
    """The error line of stderr (warnings come before it), without the program and the path."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() or ln.startswith("crash:")]
    line = (errors or lines or [f"exit {code}, nothing on stderr"])[0]
    return re.sub(r"^\S+\.tflite: ", "", re.sub(r"^mlitool: error: ", "", line))


LISTS = {  # refusals that list ops: the cell names their types, each once
    r"^(\d+) op\(s\) cannot be lowered[^:]*: ": r"\1 ops cannot be lowered: ",
    r"^graph '[^']*': tflite mode cannot run ": "cannot run: ",
}


def short(text: str, width: int = 90) -> str:
    """A table cell: the op types of a list of refused ops, else the reason cut to `width`."""
    for pattern, head in LISTS.items():
        m = re.match(pattern, text)
        if m:
            ops = dict.fromkeys(re.findall(r"op \d+ \((\w+)\)", text))
            text = m.expand(head).replace("1 ops", "1 op") + ", ".join(ops)
    text = re.sub(r"'[^']{25,}'", "'…'", text)  # long tensor names say little in a table
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("|", "\\|")


def input_array(entry: dict, seed: int) -> np.ndarray:
    """One seeded sample shaped (1, *shape): every level of an integer input, or uniform over
    the float input's range."""
    (inp,) = entry["inputs"]
    shape = [1] + [abs(d) for d in inp["shape"][1:]]
    rng = np.random.default_rng(seed)
    if inp["dtype"] in ("int8", "int16"):
        info = np.iinfo(inp["dtype"])
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=inp["dtype"])
    low, high = entry["input_range"]
    return rng.uniform(low, high, size=shape).astype(np.float32)


def calibration(corpus: Path, entry: dict, tmp: Path, seed: int) -> Path:
    """The stored calibration set, else 8 seeded samples uniform over the input range."""
    if entry.get("calibration"):
        return corpus / entry["calibration"]
    (inp,) = entry["inputs"]
    low, high = entry["input_range"]
    rng = np.random.default_rng(seed)
    data = rng.uniform(low, high, size=(8, *inp["shape"][1:])).astype(np.float32)
    path = tmp / "calib.npy"
    np.save(path, data)
    return path


def litert_outputs(path: Path, x: np.ndarray) -> tuple[dict[str, np.ndarray], str]:
    """The interpreter's reference kernels, one thread, as mlitool's oracle runs them (with the
    op versions its reference resolver lacks lowered; builtin kernels without delegates for an
    op it lacks in every version), and which kernels ran."""
    from mlitool.oracle import interpreter

    it, kernels = interpreter(path)
    it.allocate_tensors()
    (d,) = it.get_input_details()
    it.set_tensor(d["index"], x.reshape(d["shape"]))
    it.invoke()
    outs = {o["name"]: it.get_tensor(o["index"]).copy() for o in it.get_output_details()}
    return outs, kernels


def compare(path: Path, entry: dict, tmp: Path, seed: int) -> dict:
    """tflite mode against LiteRT at the outputs, on one seeded input."""
    x = input_array(entry, seed)
    np.save(tmp / "input.npy", x)
    npz = tmp / "tflite.npz"
    code, err = mlitool(
        ["run", path, "--mode", "tflite", "--input", tmp / "input.npy", "--npz", npz, "-q"]
    )
    if code != 0:
        return {"status": "refused", "exit": code, "reason": reason(code, err)}
    try:
        want, kernels = litert_outputs(path, x)
    except Exception as exc:
        return {"status": "litert-error", "reason": f"{type(exc).__name__}: {exc}"}
    with np.load(npz) as got_file:
        got = {k: got_file[k] for k in got_file.files}
    if set(got) != set(want):
        why = f"outputs {sorted(got)} vs LiteRT {sorted(want)}"
        return {"status": "differs", "reason": why, "litert_kernels": kernels}
    worst, ndiff, total = 0.0, 0, 0
    for name, w in want.items():
        g = got[name].reshape(w.shape)
        if g.dtype != w.dtype:
            why = f"{name}: dtype {g.dtype} vs {w.dtype}"
            return {"status": "differs", "reason": why, "litert_kernels": kernels}
        # Floats compare by their bits (equal NaNs count as equal, -0.0 and 0.0 do not).
        bits = f"u{w.dtype.itemsize}"
        same = g.view(bits) == w.view(bits) if w.dtype.kind == "f" else g == w
        ndiff += int(np.count_nonzero(~same))
        total += w.size
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        worst = max(worst, float(np.nanmax(diff, initial=0.0)))
    if ndiff == 0:
        return {"status": "equal", "litert_kernels": kernels}
    unit = " LSB" if next(iter(want.values())).dtype.kind in "iu" else ""
    return {
        "status": "differs",
        "reason": f"{ndiff} of {total} elements differ, max {worst:g}{unit}",
        "max_diff": worst,
        "elements_differ": ndiff,
        "litert_kernels": kernels,
    }


def measure(corpus: Path, name: str, entry: dict) -> dict:
    path = corpus / name
    seed = zlib.crc32(name.encode())
    row: dict = {"file": name, "variant": entry["variant"], "batch": entry["batch"], "convert": {}}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for fmt in FORMATS[entry["variant"]]:
            args = ["convert", path, "--format", fmt, "--out", tmp / fmt, "-q"]
            if entry["variant"] == "float32":
                args += ["--calibration", calibration(corpus, entry, tmp, seed)]
            code, err = mlitool(args)
            row["convert"][fmt] = (
                {"ok": True}
                if code == 0
                else {"ok": False, "exit": code, "reason": reason(code, err)}
            )
        try:
            row["tflite_vs_litert"] = compare(path, entry, tmp, seed)
        except Exception as exc:
            row["tflite_vs_litert"] = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
    row["converts_all"] = all(c["ok"] for c in row["convert"].values())
    return row


def markdown(rows: list[dict]) -> str:
    lines = [
        "| model | variant | batch | sa8 | fx16 | tflite mode = LiteRT |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = []
        for fmt in COLUMNS:
            c = r["convert"].get(fmt)
            cells.append("—" if c is None else "ok" if c["ok"] else short(c["reason"]))
        t = r["tflite_vs_litert"]
        cell = "equal" if t["status"] == "equal" else f"{t['status']}: {short(t['reason'])}"
        if not t.get("litert_kernels", "reference").startswith("reference"):
            cell += " (LiteRT builtin kernels: no reference kernel)"
        cells.append(cell)
        stem = r["file"].removesuffix(".tflite")
        lines.append(f"| {stem} | {r['variant']} | {r['batch']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary(rows: list[dict]) -> dict:
    return {
        "files": len(rows),
        "convert_all_formats": sum(r["converts_all"] for r in rows),
        "tflite_equals_litert": sum(r["tflite_vs_litert"]["status"] == "equal" for r in rows),
    }


def summary_line(s: dict) -> str:
    return (
        f"{s['convert_all_formats']} of {s['files']} files convert in every format measured "
        f"(int8: sa8 and fx16; 16x8: fx16; float32: sa8 calibrated); tflite mode equals LiteRT "
        f"on {s['tflite_equals_litert']} of {s['files']}."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests" / "corpus")
    ap.add_argument("--only", nargs="*", default=[], help="files whose name contains one of these")
    ap.add_argument("--json", type=Path, help="write every figure and full reason here")
    ap.add_argument("--md", type=Path, help="also write the table and summary here")
    args = ap.parse_args(argv)

    from mlitool import op_families

    op_families.load()  # entries() reads the files before any CLI call has loaded the families
    files = entries(args.corpus)
    rows = []
    for name, entry in files.items():
        if args.only and not any(s in name for s in args.only):
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        try:
            rows.append(measure(args.corpus, name, entry))
        except Exception as exc:  # never lose the table to one file
            t = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
            rows.append(
                {
                    "file": name,
                    "variant": entry.get("variant", "?"),
                    "batch": "?",
                    "convert": {},
                    "tflite_vs_litert": t,
                    "converts_all": False,
                }
            )
    s = summary(rows)
    text = markdown(rows) + "\n" + summary_line(s) + "\n"
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
