"""The evaluation of one mix: lowered, its RAM and ROM from the real memory plan (`footprint`),
run bit-exactly in mli mode over the samples, and measured as verify measures: each output's
SNR against float, max LSB against tflite mode, top-1 accuracy against the labels, summed batch
by batch as verify sums them.

Only what changed is run again: the layers before the first layer that differs from the
current mix (by a fingerprint of the call and every tensor it touches) keep the current mix's
values, kept per batch in this process (`_base`). `evaluate` runs in worker processes with
--jobs > 1 and reads the search's `job` through `context()`; each mix is evaluated whole in one
process, so the figures do not depend on --jobs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

import numpy as np

from mlitool.errors import OptionError, UnsupportedError
from mlitool.plumbing.parallel import context
from mlitool.verify.metrics import finite
from mlitool.verify.stats import LabelStats, LsbStats, RealStats


def job(model_path, graph, base, s, ranges, model_opts, opts) -> dict[str, Any]:
    """What every evaluation reads (`context()`): the graph, how to lower it, the samples in
    batches and the float / tflite references at the outputs (computed once)."""
    from mlitool.execute import mli_bridge as B
    from mlitool.execute.graph import cannot_run, run_graph
    from mlitool.execute.inputs import sample_inputs
    from mlitool.plumbing.parallel import batch_ranges, batch_size
    from mlitool.verify.command import _is_int, classifier_outputs

    data = sample_inputs(graph, opts.input, opts.samples, opts.seed)
    n = next(iter(data.values())).shape[0]
    t = opts.targets
    int_model = any(_is_int(x) for x in graph.tensors if not x.is_constant)
    refusal = (
        cannot_run(graph, "tflite", {k: v[:1] for k, v in data.items()}) if int_model else None
    )
    use_tflite = int_model and refusal is None
    if t.max_lsb is not None and not use_tflite:
        raise OptionError(
            "--max-lsb needs an integer reference: an int8 model that tflite mode "
            f"runs ({refusal or 'this model has no integer activations'})"
        )
    labels, labelled = None, None
    if opts.labels is not None:
        from mlitool.datafile import load_labels

        if opts.input is None:
            raise OptionError("--labels: give the samples they label with --input")
        classifier = classifier_outputs(graph)
        if not classifier:
            raise OptionError("--labels: the model has no classifier output (SOFTMAX or scores)")
        labels = load_labels(opts.labels, n)
        labelled = min(i for i in graph.outputs if i in classifier)
    primary = B.primary_tensors(graph, base)
    outs = [i for i in graph.outputs if i in primary]
    # Float outputs behind a final DEQUANTIZE: LSB figures of its int8 input (as verify).
    units = {
        i: op.inputs[0]
        for op in graph.ops
        if op.type == "DEQUANTIZE"
        for i in op.outputs
        if i in outs and _is_int(graph.tensors[op.inputs[0]]) and op.inputs[0] in primary
    }
    batches = batch_ranges(n, batch_size(graph, opts.batch))
    refs = []
    for a, b in batches:
        chunk = {k: v[a:b] for k, v in data.items()}
        fl = run_graph(graph, chunk, "float", keep=True)
        tf = run_graph(graph, chunk, "tflite", keep=True) if use_tflite else {}
        lsb_of = {i: (i if _is_int(graph.tensors[i]) else units.get(i)) for i in outs}
        refs.append(
            {
                "float": {i: fl[i] for i in outs},
                "tflite": {j: tf[j] for j in lsb_of.values() if j is not None and j in tf},
                "labels": None if labels is None else labels[a:b],
            }
        )
    return {
        "graph": graph,
        "source": str(model_path),
        "lower": {"mli_version": s.target.version, "layout": s.layout, "ranges": ranges},
        "fast_memory": s.fast_memory,
        "arith": model_opts.arith(),
        "data": data,
        "batches": batches,
        "refs": refs,
        "outs": outs,
        "units": units,
        "labelled": labelled,
        "samples": n,
        "tflite_refusal": refusal,
    }


_base: dict[str, Any] = {}  # this process's current mix: its key, model, fingerprints, values


def reset() -> None:
    """Forget the current mix kept in this process (another model's, when tune runs twice)."""
    _base.clear()


def evaluate(task: tuple[tuple, tuple]) -> dict | None:
    """Figures of the mix `task[1]`, re-running only what differs from the mix `task[0]`;
    None when lowering refuses the mix or it lowers to the current model."""
    from mlitool.execute import mli_bridge as B
    from mlitool.execute.mli_exec import run_layers

    c = context()
    base_key, key = task
    if _base.get("key") != base_key:
        mli = _lower(c, base_key)
        values = []
        for a, b in c["batches"]:
            chunk = {k: v[a:b] for k, v in c["data"].items()}
            _, raw = B.run_mli(c["graph"], mli, chunk, c["arith"], keep=True)
            for v in raw.values():
                v.flags.writeable = False  # shared with every candidate's run
            values.append(raw)
        _base.clear()
        _base.update(key=base_key, mli=mli, prints=_fingerprints(mli), values=values)
        _base["figures"] = figures(c, mli, values, len(mli.layers) * len(values))
    if key == base_key:
        return _base["figures"]
    try:
        mli = _lower(c, key)
    except (UnsupportedError, OptionError):  # this op cannot take this format here
        return None
    prints = _fingerprints(mli)
    same = 0
    for a, b in zip(_base["prints"], prints):
        if a != b:
            break
        same += 1
    if same == len(prints) == len(_base["prints"]):
        return None
    kept = {name for la in _base["mli"].layers[:same] for name in la.outputs}
    inputs_same = {
        name
        for name in mli.inputs
        if name in _base["mli"].tensors
        and _tensor_print(_base["mli"], name) == _tensor_print(mli, name)
    }
    primary = B.primary_tensors(c["graph"], mli)
    wanted = {primary[i] for i in c["outs"]} | {primary[j] for j in c["units"].values()}
    values = []
    for (a, b), cached in zip(c["batches"], _base["values"]):
        seed = {k: v for k, v in cached.items() if k in kept or k in inputs_same}
        if len(inputs_same) < len(mli.inputs):
            chunk = {k: v[a:b] for k, v in c["data"].items()}
            fresh = B.model_inputs(c["graph"], mli, chunk)
            seed.update({k: v for k, v in fresh.items() if k not in inputs_same})
        run_layers(mli, mli.layers[same:], seed, c["arith"], b - a, keep=False, wanted=wanted)
        values.append(seed)
    return figures(c, mli, values, (len(mli.layers) - same) * len(values))


def size(key: tuple) -> dict | None:
    """RAM and ROM of the mix `key` from its memory plan, without running it (None: lowering
    refuses it): what a move costs, cheaply."""
    from mlitool.footprint import footprint

    c = context()
    try:
        fp = footprint(c["graph"], _lower(c, key), c["fast_memory"])
    except (UnsupportedError, OptionError):
        return None
    return {"ram_bytes": fp["ram_bytes"], "rom_bytes": fp["rom_bytes"]}


def _lower(c: dict, key: tuple):
    from mlitool.mli.lower import lower

    return lower(
        c["graph"],
        format="sa8",
        overrides=dict(key),
        source=c["source"],
        ranges_remedy="give tune real inputs to calibrate on (--calibration DATA)",
        **c["lower"],
    )


def figures(c: dict, mli, values: list[dict], run: int) -> dict[str, Any]:
    """The output figures of one mix from its MLI values per batch, summed batch by batch as
    verify sums them (so verify on the written config gives the same numbers)."""
    from mlitool.execute import mli_bridge as B
    from mlitool.footprint import footprint

    graph = c["graph"]
    primary = B.primary_tensors(graph, mli)
    snr = {i: RealStats() for i in c["outs"]}
    lsb = {i: LsbStats() for i in c["outs"]}
    acc = LabelStats()
    for ref, raw in zip(c["refs"], values):
        for i in c["outs"]:
            fl = ref["float"][i]
            m = mli.tensor(primary[i])
            real = B.decode(m, raw[m.name]).reshape(fl.shape)
            one = RealStats()
            one.add(fl, real)
            snr[i].merge(one)
            j = i if i in ref["tflite"] else c["units"].get(i)
            if j is not None and j in ref["tflite"]:
                mj = mli.tensor(primary[j])
                one_lsb = LsbStats()
                one_lsb.add(ref["tflite"][j], B.to_model(graph.tensors[j], mj, raw[mj.name]))
                lsb[i].merge(one_lsb)
            if ref["labels"] is not None and i == c["labelled"]:
                acc.add(real, ref["labels"])
    fp = footprint(graph, mli, c["fast_memory"])
    lsbs = [s.max_lsb for s in lsb.values() if s.count]
    # each output as verify's document gives it: what `verdict.judge` reads
    outputs = [
        [
            graph.tensors[i].name,
            finite(snr[i].result()["snr_db"]),
            lsb[i].max_lsb if lsb[i].count else None,
        ]
        for i in c["outs"]
    ]
    return {
        "snr_db": finite(min(s.result()["snr_db"] for s in snr.values())),
        "max_lsb": max(lsbs) if lsbs else None,
        "outputs": outputs,
        "accuracy": 100.0 * float(acc.top1.mean()) if len(acc.top1) else None,
        "ram_bytes": fp["ram_bytes"],
        "rom_bytes": fp["rom_bytes"],
        "layers_run": run,  # layer calls run, of the `layers_total` a whole run makes
        "layers_total": len(mli.layers) * len(values),
    }


def _canon(v: Any) -> Any:
    """A comparable, hashable form of lowering's objects (arrays by their bytes)."""
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, hashlib.sha1(np.ascontiguousarray(v)).hexdigest())
    if isinstance(v, dict):
        return tuple((repr(k), _canon(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__,) + tuple(
            _canon(getattr(v, f.name)) for f in dataclasses.fields(v) if f.name != "notes"
        )
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return repr(v)


def _tensor_print(mli, name: str) -> Any:
    t = mli.tensor(name)
    own = _canon(t)
    return own if t.buffer is None or t.buffer == name else (own, _canon(mli.tensor(t.buffer)))


def _fingerprints(mli) -> list[str]:
    """One digest per layer: the call and every tensor it touches. Two models compute the same
    values up to their first differing digest."""
    out = []
    for la in mli.layers:
        names = [*la.inputs, *la.outputs, *(n for n in (la.weights, la.bias) if n)]
        names += list(la.params.values()) + (list(la.calls.views) if la.calls else [])
        whole = (_canon(la), tuple(_tensor_print(mli, n) for n in names))
        out.append(hashlib.sha1(repr(whole).encode()).hexdigest())
    return out
