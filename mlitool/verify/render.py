"""Terminal tables for `mlitool verify` (rich). The JSON document is the same data."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _f(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _share(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def render(doc: dict[str, Any], console=None) -> None:
    from mlitool.plumbing.console import stdout_console, table

    console = console or stdout_console()
    # The build on a line of its own: a long model path must not push it across a line break.
    out = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
    out(f"{Path(doc['model']).stem}: {doc['summary']['text']}")
    out(f"model: {doc['model']}")
    out(
        f"MLI {doc['mli']} {doc['format']}, {doc['arith']['build']}; config: {doc['config'] or 'none'}"
    )
    inp = doc["inputs"]
    out(inp["note"] if inp.get("random") else f"inputs: {inp['source']} ({inp['samples']} samples)")
    refs = ["float"] + (["tflite"] if doc["references"]["tflite"] else [])
    oracle = doc["references"].get("oracle")
    if oracle:
        if oracle["available"]:
            refs.append(oracle["name"])
        else:
            out(f"oracle {oracle['name']} not used: {oracle['message']}")
    out(f"references: {', '.join(refs)}")
    if doc["references"].get("tflite_refusal"):
        out(f"no tflite reference: {doc['references']['tflite_refusal']}")

    rows = []
    for row in doc["layers"]:
        c, i = row["chained"], row["isolated"]
        rows.append(
            [
                str(row["op"]),
                row["type"],
                _f(c["snr_db"]),
                _f(i["snr_db"]),
                _f(c.get("max_lsb")),
                _f(i.get("max_lsb")),
                _share(c.get("differing_share")),
                _f(c["max_abs_err"], 4),
                _f(c["cosine"], 4),
            ]
        )
    console.print(
        table(
            "per layer (chained | isolated)",
            ("op", "type", "SNR dB", "iso SNR", "LSB", "iso LSB", "≠tflite", "max|err|", "cosine"),
            rows,
            width=console.width,
        )
    )

    rows = []
    for o in doc["outputs"]:
        f, t, top = o["vs_float"], o.get("vs_tflite", {}), o.get("top1", {})
        rows.append(
            [
                o["tensor"],
                _f(f["snr_db"]),
                _f(t.get("max_lsb")),
                _share(t.get("differing_share")),
                _share(top.get("vs_float")),
                _share(top.get("vs_tflite")),
                _f(f["max_abs_err"], 4),
                _f(f["rmse"], 4),
                _f(f["cosine"], 4),
            ]
        )
    console.print(
        table(
            "outputs",
            (
                "output",
                "SNR dB",
                "LSB",
                "≠tflite",
                "top-1 float",
                "top-1 tflite",
                "max|err|",
                "RMSE",
                "cosine",
            ),
            rows,
            width=console.width,
        )
    )
    for o in doc["outputs"]:
        if o.get("top1_blank"):
            out(f"no top-1 for {o['tensor']}: {o['top1_blank']}")
    if "labels" in doc:
        lab = doc["labels"]
        cols = ["top-1"] + (["top-5"] if lab["classes"] >= 5 else [])
        rows = [
            [mode] + [_share(acc[c.replace("-", "")]) for c in cols]
            for mode, acc in lab["accuracy"].items()
        ]
        d = lab["top1_drop_mli_vs_float"]
        rows.append(
            [
                "drop mli vs float",
                f"{100 * d['drop']:.1f} pts [{100 * d['ci95'][0]:.1f}, {100 * d['ci95'][1]:.1f}]",
            ]
            + [""] * (len(cols) - 1)
        )
        console.print(
            table(
                f"accuracy vs {lab['samples']} labels ({lab['output']}); drop: 95% paired "
                "bootstrap interval",
                ("mode", *cols),
                rows,
                width=console.width,
            )
        )
    for o in doc["outputs"]:
        if "vs_litert" in o:
            lit = o["vs_litert"]
            agree = o.get("top1", {}).get("vs_litert")
            out(
                f"vs litert interpreter: {o['tensor']}: {_share(lit['differing_share'])} differ, "
                f"max {lit['max_lsb']} LSB"
                + (f", top-1 {_share(agree)}" if agree is not None else "")
            )

    ra = doc["reduced_accumulator"]
    if ra["layers_checked"]:
        if ra["layers"]:
            rows = [
                [
                    str(r["op"]),
                    r["type"],
                    str(r["max_lsb"]),
                    _share(r["differing_share"]),
                    r["remedy"],
                ]
                for r in ra["layers"]
            ]
            console.print(
                table(
                    f"reduced accumulator (FULL_ACCU OFF) costs > {ra['limit_lsb']} "
                    "LSB against full accumulation, isolated",
                    ("op", "type", "max LSB", "differing", "remedy"),
                    rows,
                    width=console.width,
                )
            )
        else:
            out(
                f"reduced accumulator (FULL_ACCU OFF): at most {ra['worst']} LSB from full "
                f"accumulation on {ra['layers_checked']} SA8 MAC layer(s)"
            )
    for f in doc["thresholds"]["failed"]:
        out(f"FAILED: {f}")
