"""Rich tables for `mlitool inspect` (the human view of `mlitool.inspect.summarize`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def render(summary: dict[str, Any], console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)        # pipes and files: wide enough for the op table
    s = summary
    console.print(Text.assemble(("Model ", "bold"), s["file"]))
    console.print(f"  style: [bold]{s['style']['label']}[/]   subgraphs: {s['subgraphs']}   "
                  f"signatures: {', '.join(s['signatures']) or '-'}   "
                  f"schema: {s['schema_version']}", highlight=False)
    if s["description"]:
        console.print(f"  description: {s['description']}", highlight=False, markup=False)
    console.print(_io_table(s))
    console.print(_op_table(s))
    t = s["totals"]
    console.print(f"[bold]Totals[/]: {t['ops']} ops, {t['params']:,} parameters, "
                  f"{t['weight_bytes']:,} weight bytes, {t['macs']:,} MACs", highlight=False)
    if s["unsupported_op_types"]:
        n = t["unsupported_ops"]
        console.print(f"[red]Unsupported by the MLI converter[/]: {n} op{'s' if n != 1 else ''} "
                      f"({', '.join(s['unsupported_op_types'])})", highlight=False)
    else:
        console.print("[green]All ops are supported by the MLI converter.[/]")
    for w in s["warnings"]:
        console.print(Text(f"warning: {w}", style="yellow"))
    for p in s["problems"]:
        console.print(Text(f"malformed graph: {p}", style="red"))


def _io_table(s: dict[str, Any]) -> Table:
    table = Table(title="Inputs and outputs", title_justify="left", show_edge=False)
    for col in ("", "#", "name", "shape", "dtype", "scale", "zero point"):
        table.add_column(col, overflow="fold")
    for kind, rows in (("input", s["inputs"]), ("output", s["outputs"])):
        for r in rows:
            q = r["quant"]
            scale = zp = "-"
            if q is not None and q["kind"] == "per-tensor":
                scale = f"{q['scale']:.6g}" if q["scale"] is not None else "invalid"
                zp = str(q["zero_point"])
            elif q is not None:
                scale, zp = f"per-axis (axis {q['axis']})", "…"
            table.add_row(kind, str(r["index"]), r["name"], _shape(r["shape"]), r["dtype"], scale, zp)
    return table


def _op_table(s: dict[str, Any]) -> Table:
    table = Table(title="Operators (main graph)", title_justify="left", show_edge=False)
    for col, just in (("#", "right"), ("op", "left"), ("output", "left"), ("weights", "left"),
                      ("quant", "left"), ("act", "left"), ("params", "right"), ("MACs", "right"),
                      ("MLI", "left")):
        table.add_column(col, justify=just)
    for r in s["ops"]:
        name = r["type"] if r["type"] != "CUSTOM" else f"CUSTOM:{r['custom_code']}"
        w = r["weights"]
        weights = quant = "-"
        if w is not None:
            weights = f"{_shape(w['shape'])} {w['dtype']}" + (" (dequant)" if w["via_dequantize"]
                                                                  else "")
            if w["quant"] is not None:
                quant = w["quant"]["kind"] + (f" ({w['quant']['axis']})" if w["quant"]["axis"]
                                              is not None else "")
        out = _shape(r["output_shapes"][0]) if r["output_shapes"] else "-"
        if len(r["output_shapes"]) > 1:
            out += f" +{len(r['output_shapes']) - 1}"
        act = r["fused_activation"] if r["fused_activation"] not in (None, "NONE") else "-"
        ok = r["supported"]
        table.add_row(str(r["index"]), Text(name, style="" if ok else "bold red"), out, weights,
                      quant, act, f"{r['params']:,}", f"{r['macs']:,}",
                      Text("yes" if ok else "NO", style="green" if ok else "bold red"))
    return table


def _shape(shape: list[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"
