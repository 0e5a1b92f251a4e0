"""The `verify` document: the accumulated figures of `mlitool.verify.command` as JSON-ready
per-layer and per-output entries, the reduced-accumulator findings (ops above `ACCU_LIMIT_LSB`,
with a remedy), the threshold checks (--min-snr, --max-lsb) and the warnings."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlitool import ir
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
    return {
        "source": "random",
        "random": True,
        "seed": opts.seed,
        "note": f"no --input given: {opts.samples} random samples (seed {opts.seed}), {span}",
    }


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
    from mlitool.execute.presets import describe
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
        if i in classifier:
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
    failed = []
    if opts.min_snr is not None:
        for o in outputs:
            snr = o["vs_float"]["snr_db"]
            value = float(snr) if isinstance(snr, str) else snr
            if value < opts.min_snr:
                failed.append(
                    f"output {o['tensor']!r}: SNR {value:.2f} dB < --min-snr {opts.min_snr:g}"
                )
    if opts.max_lsb is not None:
        for o in outputs:
            if "vs_tflite" in o and o["vs_tflite"]["max_lsb"] > opts.max_lsb:
                failed.append(
                    f"output {o['tensor']!r}: {o['vs_tflite']['max_lsb']} LSB from "
                    f"tflite > --max-lsb {opts.max_lsb}"
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
        "thresholds": {"min_snr": opts.min_snr, "max_lsb": opts.max_lsb, "failed": failed},
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
    doc["summary"] = summary(doc)
    return doc


def _label_accuracy(opts, graph: ir.Graph, st: dict, index: int) -> dict[str, Any]:
    """Top-1 (and top-5 with 5 classes or more) accuracy of each mode against the labels, and
    the top-1 drop mli vs float with its 95 % paired bootstrap interval."""
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
    }


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """The answer first: the verdict against the thresholds given (FAIL / PASS; UNCHECKED when
    none was given) and the output figures behind it, as one line."""
    from mlitool.footprint import accuracy_text

    th = doc["thresholds"]
    limits = (("--min-snr", th["min_snr"]), ("--max-lsb", th["max_lsb"]))
    given = [f"{k} {v:g}" for k, v in limits if v is not None]
    verdict = "FAIL" if th["failed"] else "PASS" if given else "UNCHECKED"
    why = ", ".join(given) if given else "no --min-snr / --max-lsb given"
    text = f"{verdict} ({why}): {accuracy_text(doc)}"
    if "labels" in doc:
        lab = doc["labels"]
        acc, d = lab["accuracy"], lab["top1_drop_mli_vs_float"]
        text += (
            f", labels: top-1 {100 * acc['mli']['top1']:.1f}% (float "
            f"{100 * acc['float']['top1']:.1f}%, drop {100 * d['drop']:.1f} points, 95% CI "
            f"{100 * d['ci95'][0]:.1f} to {100 * d['ci95'][1]:.1f})"
        )
    return {"verdict": verdict, "text": text}
