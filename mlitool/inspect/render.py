"""Rich tables for `mlitool inspect` (the human view of `mlitool.inspect.summarize`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mlitool.plumbing.console import stdout_console, table


def render(summary: dict[str, Any], console: Console | None = None) -> None:
    console = console or stdout_console()
    s = summary
    console.print(Text.assemble(("Model ", "bold"), s["file"]))
    console.print(
        f"  style: [bold]{s['style']['label']}[/]   subgraphs: {s['subgraphs']}   "
        f"signatures: {', '.join(s['signatures']) or '-'}   "
        f"schema: {s['schema_version']}",
        highlight=False,
    )
    if s["description"]:
        console.print(f"  description: {s['description']}", highlight=False, markup=False)
    console.print(_io_table(s, console.width))
    console.print(_op_table(s, console.width))
    t = s["totals"]
    console.print(
        f"[bold]Totals[/]: {t['ops']} ops, {t['params']:,} parameters, "
        f"{t['weight_bytes']:,} weight bytes, {t['macs']:,} MACs",
        highlight=False,
    )
    if s["unsupported_op_types"]:
        n = t["unsupported_ops"]
        console.print(
            f"[red]Unsupported by the MLI converter[/]: {n} op{'s' if n != 1 else ''} "
            f"({', '.join(s['unsupported_op_types'])})",
            highlight=False,
        )
        for r in s["ops"]:
            if not r["supported"]:
                console.print(Text(f"  op {r['index']} ({_name(r)}): {r['unsupported_reason']}"))
    else:
        console.print("[green]All ops are supported by the MLI converter.[/]")
    if s["batch_fixed_to_1"]:
        console.print(
            f"Batch fixed to 1 (MLI runs one sample): {', '.join(s['batch_fixed_to_1'])}",
            highlight=False,
            markup=False,
        )
    if s["folded_ops"] or s["removed_ops"]:
        n, m = len(s["folded_ops"]), len(s["removed_ops"])
        console.print(
            f"Folded at import: {n} op{'s' if n != 1 else ''} into constants"
            + (f", {m} op{'s' if m != 1 else ''} left without a reader removed" if m else "")
            + " (MLI column: folded)",
            highlight=False,
        )
    for new, olds in s["rewritten_ops"].items():
        console.print(
            Text(f"Rewritten at import (MLI column: rewritten): {new} replaces {', '.join(olds)}")
        )
    for label, runs in s.get("float_islands", {}).items():
        console.print(Text(f"Float island {label} runs as: {runs}"))
    for p in s["problems"]:
        console.print(Text(f"malformed graph: {p}", style="red"))


def _name(r: dict[str, Any]) -> str:
    """The op a row shows: the file's, or the one its chain was rewritten as."""
    if r["rewritten"] and "as" in r["rewritten"]:
        return r["rewritten"]["as"]
    return r["type"] if r["type"] != "CUSTOM" else f"CUSTOM:{r['custom_code']}"


def _io_table(s: dict[str, Any], width: int) -> Table:
    rows = []
    for kind, tensors in (("input", s["inputs"]), ("output", s["outputs"])):
        for r in tensors:
            q = r["quant"]
            scale = zp = "-"
            if q is not None and q["kind"] == "per-tensor":
                scale = f"{q['scale']:.6g}" if q["scale"] is not None else "invalid"
                zp = str(q["zero_point"])
            elif q is not None:
                scale, zp = f"per-axis (axis {q['axis']})", "…"
            rows.append(
                [kind, str(r["index"]), r["name"], _shape(r["shape"]), r["dtype"], scale, zp]
            )
    return table(
        "Inputs and outputs",
        ("", "#", "name", "shape", "dtype", "scale", "zero point"),
        rows,
        width=width,
    )


def _op_table(s: dict[str, Any], width: int) -> Table:
    rows = []
    for r in s["ops"]:
        name = _name(r)
        w = r["weights"]
        weights = quant = "-"
        if w is not None:
            weights = f"{_shape(w['shape'])} {w['dtype']}" + (
                " (dequant)" if w["via_dequantize"] else ""
            )
            if w["quant"] is not None:
                quant = w["quant"]["kind"] + (
                    f" ({w['quant']['axis']})" if w["quant"]["axis"] is not None else ""
                )
        out = _shape(r["output_shapes"][0]) if r["output_shapes"] else "-"
        if len(r["output_shapes"]) > 1:
            out += f" +{len(r['output_shapes']) - 1}"
        act = r["fused_activation"] if r["fused_activation"] not in (None, "NONE") else "-"
        rows.append(
            [
                str(r["index"]),
                name,
                ("rewritten" if r["folded"] == "rewritten" else "folded")
                if r["folded"]
                else (r.get("runs_as") or "yes")
                if r["supported"]
                else "NO",
                out,
                f"{r['macs']:,}",
                f"{r['params']:,}",
                act,
                weights,
                quant,
            ]
        )
    return table(
        "Operators (main graph)",
        ("#", "op", "runs as", "output", "MACs", "params", "act", "weights", "quant"),
        rows,
        width=width,
    )


def _shape(shape: list[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"
