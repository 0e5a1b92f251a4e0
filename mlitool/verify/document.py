"""The `verify` document: the accumulated figures of `mlitool.verify.command` as JSON-ready
per-layer and per-output entries, the reduced-accumulator findings (ops above `ACCU_LIMIT_LSB`,
with a remedy), the threshold checks (--min-snr, --max-lsb) and the warnings."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from mlitool import ir
from mlitool.execute.reference.inputs import index_note
from mlitool.verdict import Thresholds, judge, measured
from mlitool.verify.stats import RealStats

ACCU_LIMIT_LSB = 1


def _input_note(opts, graph: ir.Graph) -> dict[str, Any]:
    """Where the samples came from (`opts`: the `VerifyOptions`)."""
    if opts.input is not None:
        return {"source": str(opts.input), "random": False}
    kinds = {np.dtype(graph.tensors[i].dtype).kind for i in graph.inputs}
    span = (
        "every level of each input's quantized range"
        if kinds <= set("iu")
        else "uniform over each input's range (float inputs: [-1, 1), or the range of the "
        "QUANTIZE op reading them)"
    )
    note = {
        "source": "random",
        "random": True,
        "seed": opts.seed,
        "note": f"no --input given: {opts.samples} random samples (seed {opts.seed}), {span}",
    }
    indices = index_note(graph)
    if indices:  # inputs that only index: drawn where the ops they feed accept them
        note["note"] += "; indices " + ", ".join(
            f"{name!r} in [{lo}, {hi}]" for name, (lo, hi) in indices.items()
        )
        note["index_inputs"] = indices
    return note


def build_document(
    job: dict[str, Any],
    opts,
    n: int,
    rows: dict,
    outs: dict[int, dict],
    references: dict[str, Any],
) -> dict[str, Any]:
    """The document from the comparison's `job` (what every batch was run with: the model, its
    ops and groups, the arith), `rows` and `outs` (the figures summed over the `n` samples)."""
    from mlitool.execute.mli.presets import describe
    from mlitool.footprint.summary import footprint
    from mlitool.verify.classes import top1_blank
    from mlitool.verify.metrics import finite

    model_path, graph, mli, arith = job["model_path"], job["graph"], job["mli"], job["arith"]
    ops, groups, accu_ops, units = job["ops"], job["groups"], job["accu_ops"], job["units"]
    classifier, other_accu = job["classifier"], job["other_accu"]
    fmt, build = mli.format, describe(arith)

    def real(stats: RealStats) -> dict:
        return {k: finite(v) for k, v in stats.result().items()}

    oracle = references["oracle"]
    litert_on = bool(oracle and oracle["available"])
    layers = []
    for op in ops:
        i = op.outputs[0]
        row = rows[op.index]
        entry = {
            "op": op.index,
            "type": op.type,
            "tensor": graph.tensors[i].name,
            "kernels": [layer.kernel or "(view)" for layer in groups[op.index]],
            "chained": real(row.chained),
            "isolated": real(row.isolated),
        }
        if row.chained_lsb.count:
            entry["chained"].update(row.chained_lsb.result())
            entry["isolated"].update(row.isolated_lsb.result())
        if litert_on and row.litert_lsb.count:
            entry["chained"]["litert"] = row.litert_lsb.result()
        if op.index in accu_ops:
            entry["reduced_accumulator"] = row.accu.result()
        layers.append(entry)

    outputs = []
    for i, st in outs.items():
        entry: dict[str, Any] = {
            "tensor": graph.tensors[i].name,
            "index": i,
            "vs_float": real(st["float"]),
        }
        if st["tflite"].count:
            entry["vs_tflite"] = st["tflite"].result()
            if i in units:  # a float output: LSB of the int8 tensor before it
                entry["vs_tflite"]["units"] = graph.tensors[units[i]].name
        if litert_on and st["litert"].count:
            entry["vs_litert"] = st["litert"].result()
        if i not in classifier:
            entry["top1_blank"] = top1_blank(graph, i)
        else:
            entry["top1"] = {"vs_float": st["top1_float"].result()}
            if st["top1_tflite"].count:
                entry["top1"]["vs_tflite"] = st["top1_tflite"].result()
            if litert_on and st["top1_litert"].count:
                entry["top1"]["vs_litert"] = st["top1_litert"].result()
        outputs.append(entry)

    accu_rows = []
    for op in ops:
        if op.index not in accu_ops:
            continue
        res = rows[op.index].accu.result()
        if res["max_lsb"] > ACCU_LIMIT_LSB:
            name = graph.tensors[op.outputs[0]].name
            accu_rows.append(
                {
                    "op": op.index,
                    "type": op.type,
                    "tensor": name,
                    **res,
                    "remedy": (
                        f"run this layer in fx16 (a config override: [[tool.mlitool.layer]] "
                        f'index = {op.index}, format = "fx16"), or use the full-accumulator '
                        "build (FULL_ACCU=ON, --target em)"
                    ),
                }
            )
    doc = {
        "model": str(model_path),
        "config": mli.config,
        "format": fmt,
        "mli": mli.mli_version,
        "arith": {"round_mode": arith.round_mode, "full_accu": arith.full_accu, "build": build},
        "inputs": {**_input_note(opts, graph), "samples": n},
        "references": references,
        "outputs": outputs,
        "layers": layers,
        "reduced_accumulator": {
            "compared": "FULL_ACCU OFF vs ON, isolated, ROUND_MODE="
            f"{other_accu.round_mode.upper()}",
            "limit_lsb": ACCU_LIMIT_LSB,
            "layers_checked": len(accu_ops),
            "layers": accu_rows,
            "worst": max((rows[o].accu.result()["max_lsb"] for o in accu_ops), default=0),
        },
        "footprint": footprint(graph, mli),
        "warnings": [
            *mli.warnings,
            *(
                [f"--oracle {oracle['name']} not used: {oracle['message']}"]
                if oracle and not oracle["available"]
                else []
            ),
        ],
    }
    if "labels" in job["data"]:
        doc["labels"] = _label_accuracy(opts, graph, outs[job["labelled"]], job["labelled"])
    th = thresholds_of(opts)
    word, reasons = judge(measured(doc, doc["footprint"]), th)
    doc["thresholds"] = {
        **{f.name: getattr(th, f.name) for f in fields(th)},
        "failed": reasons if word == "FAIL" else [],
    }
    doc["summary"] = summary(doc, th, word, reasons)
    return doc


def thresholds_of(opts) -> Thresholds:
    """The thresholds of `opts` (a `VerifyOptions` whose thresholds are settled)."""
    return Thresholds(*(getattr(opts, f.name) for f in fields(Thresholds)))


def _label_accuracy(opts, graph: ir.Graph, st: dict, index: int) -> dict[str, Any]:
    """Top-1 (and top-5 with 5 classes or more) accuracy of each mode against the labels, and
    the top-1 drop mli vs float with its 95 % paired bootstrap interval; per mode the confusion
    cells [label, top-1 class, samples]."""
    from mlitool.verify.stats import drop_interval

    classes = int(np.prod(graph.tensors[index].shape))
    modes = {
        m: st[f"labels_{m}"] for m in ("float", "tflite", "mli") if len(st[f"labels_{m}"].top1)
    }
    acc = {
        m: {
            "top1": float(s.top1.mean()),
            **({"top5": float(s.top5.mean())} if classes >= 5 else {}),
        }
        for m, s in modes.items()
    }
    drop, lo, hi = drop_interval(modes["float"].top1, modes["mli"].top1)
    return {
        "file": str(opts.labels),
        "output": graph.tensors[index].name,
        "samples": len(modes["float"].top1),
        "classes": classes,
        "accuracy": acc,
        "top1_drop_mli_vs_float": {
            "drop": drop,
            "ci95": [lo, hi],
            "method": "paired bootstrap, 10,000 resamples (seed 0), percentile interval",
        },
        "confusion": {m: s.confusion() for m, s in modes.items()},
    }


def summary(doc: dict[str, Any], th: Thresholds, word: str, reasons: list[str]) -> dict[str, Any]:
    """The answer first, as one line: the verdict (`mlitool.verdict.judge`: FAIL with the
    thresholds missed, PASS, UNCHECKED when none was given), RAM, ROM, MACs and the output
    figures."""
    from mlitool.footprint.summary import accuracy_text, footprint_text

    given = th.given()
    if word == "FAIL":
        head = f"FAIL: {'; '.join(reasons)}. "
    else:
        head = f"{word} ({', '.join(given) if given else 'no threshold given'}): "
    text = f"{head}{footprint_text(doc['footprint'])}; {accuracy_text(doc)}"
    return {"verdict": word, "reasons": reasons, "text": text}
