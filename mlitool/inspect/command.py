"""`mlitool inspect`: a plain-dict summary of a model (the CLI renders it as tables or JSON)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from mlitool import ir
from mlitool.inspect.model_style import detect_style, stored_constant, weight_input
from mlitool.inspect.opstats import graph_totals, op_stats
from mlitool.inspect.runs_as import runs_as
from mlitool.ir import ISLAND_RUNS
from mlitool.ops import spec as opspec
from mlitool.passes.runner import fold_model
from mlitool.passes.upsampling import REWRITTEN_FROM
from mlitool.tflite.validate import problems
from mlitool.tflite.validate_structure import check_structure


def inspect_file(path: str | Path) -> dict[str, Any]:
    """Read a .tflite file and summarise it (ModelFormatError on a bad file)."""
    from mlitool.tflite.reader import read_model

    return summarize(read_model(path))


def summarize(model: ir.Model) -> dict[str, Any]:
    """Everything `inspect` shows, as JSON-ready plain data (lists, ints, floats, strings, None)."""
    g = model.main
    # the statistics and the passes below read op arity and options: checked first
    check_structure(g, model.path)
    producers = g.producers()
    stats = [op_stats(g, op, producers) for op in g.ops]
    # convert validates and lowers the graph the model-stage passes made (passes.runner.fold_model)
    folded = ir.Model(model.path, [g])
    fold_model(folded)
    found = problems(folded.main)
    malformed = [p for p in found if not p.unsupported]
    # The support check assumes shapes that passed validation: with any problem, the op table's
    # answer, and the ops whose shapes are known at run time only refused with that reason.
    support = _support(folded.main) if not found else {p.op.index: p.text for p in found if p.op}
    # A chain rewritten as one op (nearest upsampling) is that op in its first op's row; its
    # other ops are "rewritten" into it.
    into = {old: new for new, olds in folded.rewritten_ops.items() for old in olds[1:]}
    gone = (
        dict.fromkeys(folded.folded_ops, "constant")
        | dict.fromkeys(folded.removed_ops, "removed")
        | dict.fromkeys(into, "rewritten")
    )
    now = {op.index: op for op in folded.main.ops}
    rows = [
        _op_row(g, folded.main, op, now.get(op.index), s, producers, support, gone.get(op.label))
        | _rewrite(op, now.get(op.index), into)
        for op, s in zip(g.ops, stats)
    ]
    lowers = not found and not any(r["unsupported_reason"] for r in rows)
    how = runs_as(folded.main) if lowers else {}
    for r in rows:
        r["runs_as"] = how.get(r["index"]) if r["supported"] and not r["folded"] else None
    unsupported = sorted({_runs_type(r) for r in rows if not r["supported"]})
    return {
        "file": model.path,
        "schema_version": model.version,
        "description": model.description,
        "style": detect_style(g).as_dict(),
        "subgraphs": len(model.subgraphs),
        "signatures": list(model.signature_names),
        "inputs": [_io_row(g, i) for i in g.inputs],
        "outputs": [_io_row(g, i) for i in g.outputs],
        "ops": rows,
        "op_counts": dict(sorted(Counter(r["type"] for r in rows).items())),
        "totals": {
            **graph_totals(g, stats),
            "ops": len(rows),
            "tensors": len(g.tensors),
            "unsupported_ops": sum(not r["supported"] for r in rows),
        },
        "unsupported_op_types": unsupported,
        "warnings": list(model.warnings),
        "problems": [str(p) for p in malformed],  # what convert / run / ... call malformed
        # what constant folding at import does to the graph convert lowers
        "batch_fixed_to_1": folded.batch_fixed,
        "folded_ops": folded.folded_ops,
        "removed_ops": folded.removed_ops,
        "rewritten_ops": folded.rewritten_ops,
        # an int8 model's float islands as one op each: {label: how it runs}
        "float_islands": {
            op.label: op.options[ISLAND_RUNS] for op in folded.main.ops if ISLAND_RUNS in op.options
        },
    }


def _rewrite(op: ir.Op, now: ir.Op | None, into: dict[str, str]) -> dict[str, Any]:
    """The row's "rewritten" entry: {"as": type, "replaces": labels} for the op a chain became,
    {"into": label} for the chain's other ops, else None."""
    if now is not None and REWRITTEN_FROM in now.options:
        entry = {"as": now.type, "replaces": list(now.options[REWRITTEN_FROM])}
        if ISLAND_RUNS in now.options:  # an int8 model's float island: how it runs
            entry["runs"] = now.options[ISLAND_RUNS]
        return {"rewritten": entry}
    return {"rewritten": {"into": into[op.label]} if op.label in into else None}


def _runs_type(row: dict[str, Any]) -> str:
    """The op type convert lowers for a row: the file's, or the op its chain became."""
    return (row["rewritten"] or {}).get("as", row["type"])


def quant_dict(q: ir.Quant | None) -> dict[str, Any] | None:
    """Quantization as plain data: per-tensor scale/zero point, or per-axis lists with the axis."""
    if q is None:
        return None
    if not q.per_axis:
        return {
            "kind": "per-tensor",
            "axis": None,
            "scale": _finite(q.scale[0]),
            "zero_point": int(q.zero_point[0]),
        }
    return {
        "kind": "per-axis",
        "axis": q.axis,
        "scale": [_finite(v) for v in q.scale],
        "zero_point": [int(v) for v in q.zero_point],
    }


def _finite(x) -> float | None:
    """JSON has no NaN/Infinity: a non-finite scale (warned about by the reader) becomes null."""
    x = float(x)
    return x if math.isfinite(x) else None


def _io_row(g: ir.Graph, index: int) -> dict[str, Any]:
    t = g.tensors[index]
    return {
        "index": index,
        "name": t.name,
        "shape": list(t.shape),
        "dtype": t.dtype,
        "shape_signature": None if t.shape_signature is None else list(t.shape_signature),
        "quant": quant_dict(t.quant),
    }


def _support(folded: ir.Graph) -> dict[int, str | None]:
    """Op index -> why `convert` refuses it (None: it converts), from the lowering's own check
    on the graph `convert` lowers (folded at import: float16 weights, constant ops), for the
    default target (MLI 2.0); the ops folded away are not in it."""
    from mlitool.mli.lower.support import refusal
    from mlitool.mli.target import DEFAULT

    return {op.index: refusal(folded, op, DEFAULT, DEFAULT.default_layout) for op in folded.ops}


def _op_row(
    g: ir.Graph,
    fg: ir.Graph,
    op: ir.Op,
    now: ir.Op | None,
    stats,
    producers,
    support: dict,
    folded: str | None,
) -> dict[str, Any]:
    """One op of the file's graph `g`; output shapes as folding computes them (`fg`), support
    as convert sees the op (`now`: the op of `fg` with its index, the one a chain became)."""
    w, via_dequantize = stored_constant(g, weight_input(op), producers)
    weights = None
    if w is not None:
        q = w.quant
        weights = {
            "index": w.index,
            "shape": list(w.shape),
            "dtype": w.dtype,
            "via_dequantize": via_dequantize,
            "quant": None
            if q is None
            else {"kind": "per-axis" if q.per_axis else "per-tensor", "axis": q.axis},
        }
    outs = [fg.tensors[i] for i in (now or op).outputs if i >= 0]
    lowered = (now or op).type in opspec.lowered_ops()
    return {
        "index": op.index,
        "type": op.type,
        "custom_code": op.custom_code,
        "version": op.version,
        "inputs": list(op.inputs),
        "outputs": list(op.outputs),
        "output_shapes": [list(t.shape) for t in outs],
        "output_dtype": outs[0].dtype if outs else None,
        "weights": weights,
        "fused_activation": op.options.get("fused_activation"),
        "params": stats.params,
        "weight_bytes": stats.weight_bytes,
        "macs": stats.macs,
        # Folded at import: "constant" (evaluated once), "removed" (left without a reader).
        "folded": folded,
        # Malformed graphs (see "problems") get the op table's answer only.
        "supported": folded is not None or (lowered and support.get(op.index) is None),
        "unsupported_reason": None
        if folded is not None
        else support.get(op.index) or (None if lowered else "no MLI kernel for this op"),
    }
