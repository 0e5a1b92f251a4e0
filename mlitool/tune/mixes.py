"""Mixes and the moves between them: a mix maps op index -> format for the ops not in sa8.

Candidates are the ops that run a kernel (not only views): those with weights may take
fx8w16d or fx16, the others fx16. A move promotes one op one format or more up (a single), or
an op and a candidate reading its output both to fx16 (a pair: no conversion between them).
"""

from __future__ import annotations

from typing import Any

from mlitool import ir

FORMATS = ("sa8", "fx8w16d", "fx16")  # cheapest first
RANK = {f: k for k, f in enumerate(FORMATS)}


def candidates(graph: ir.Graph, base) -> dict[int, tuple[str, ...]]:
    """op index -> the formats above sa8 it may take, for each op of `base` (the all-sa8
    MliModel) that runs a kernel."""
    from mlitool.execute.mli import bridge as B

    groups = B.layers_by_op(base)
    out = {}
    for op in graph.ops:
        layers = groups.get(op.index, [])
        if any(la.kind != "view" for la in layers):
            weighted = any(la.weights for la in layers)
            out[op.index] = ("fx8w16d", "fx16") if weighted else ("fx16",)
    return out


def with_format(mix: dict[int, str], i: int, fmt: str) -> dict[int, str]:
    out = {k: v for k, v in mix.items() if k != i}
    if fmt != "sa8":
        out[i] = fmt
    return out


def singles(choices: dict, current: dict) -> list[dict[int, str]]:
    """Every one-op promotion from `current`, by op index, then format."""
    return [{i: f} for i in choices for f in choices[i] if RANK[f] > RANK[current.get(i, "sa8")]]


def readers(graph: ir.Graph, choices: dict) -> dict[int, list[int]]:
    """op index -> the candidate ops reading its output (through views), for each candidate."""
    consumers = graph.consumers()

    def of(op: ir.Op) -> list[int]:
        out = []
        for t in op.outputs:
            for r in consumers.get(t, []):
                out += [r.index] if r.index in choices else of(r)
        return out

    return {op.index: sorted(set(of(op))) for op in graph.ops if op.index in choices}


def pairs(graph: ir.Graph, choices: dict, current: dict) -> list[dict[int, str]]:
    """{op: fx16, reader: fx16} for each candidate op and each candidate reading its output,
    where one of them is not fx16 yet: FX16 from one to the other, no conversion between."""
    out = []
    for i, js in readers(graph, choices).items():
        for j in js:
            move = {i: "fx16", j: "fx16"}
            if any(current.get(k) != f for k, f in move.items()) and move not in out:
                out.append(move)
    return out


def mix_at(steps: list[dict], k: int) -> dict[int, str]:
    """The mix after step `k` of the search's record."""
    mix: dict[int, str] = {}
    for st in steps[1 : k + 1]:
        for c in st["change"]:
            mix = with_format(mix, c["op"], c["to"])
    return mix


def change(graph: ir.Graph, op: ir.Op, current: dict, fmt: str) -> dict[str, Any]:
    """One op's change of format, as the record names it."""
    return {
        "op": op.index,
        "type": op.type,
        "tensor": graph.tensors[op.outputs[0]].name if op.outputs else "",
        "from": current.get(op.index, "sa8"),
        "to": fmt,
    }
