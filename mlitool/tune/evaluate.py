"""The evaluation of one mix: lowered, its RAM and ROM from the real memory plan (`footprint`),
run bit-exactly in mli mode over the samples, and measured as verify measures: each output's
SNR against float, max LSB against tflite mode, top-1 accuracy against the labels, summed batch
by batch as verify sums them.

Only what changed is run again: the layers before the first layer that differs from the
current mix (by a fingerprint of the call and every tensor it touches, `prints`) keep the
current mix's values, kept per batch in this process (`_base`); the current mix's own values
are run the same way from the previous one's. Each mix is lowered once: `size` keeps what it
lowers for `evaluate` until the current mix changes. `evaluate` runs in worker processes with
--jobs > 1 and reads the search's `job` through `context()`; each mix is evaluated whole in one
process, so the figures do not depend on --jobs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mlitool import op_families
from mlitool.errors import OptionError, UnsupportedError
from mlitool.plumbing.parallel import context
from mlitool.tune.prints import Prints
from mlitool.verify.metrics import finite
from mlitool.verify.stats import LabelStats, LsbStats, RealStats


def job(model_path, graph, base, s, ranges, opts) -> dict[str, Any]:
    """What every evaluation reads (`context()`): the graph, how to lower it, the samples in
    batches and the float / tflite references at the outputs (computed once)."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.reference.graph import cannot_run, run_graph
    from mlitool.execute.reference.inputs import sample_inputs
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
        "setup": op_families.load,
        "graph": graph,
        "source": str(model_path),
        "settings": s,  # the mixes change its overrides only
        "ranges": ranges,
        "fast_memory": s.fast_memory,
        "arith": s.arith,
        "data": data,
        "batches": batches,
        "refs": refs,
        "outs": outs,
        "units": units,
        "labelled": labelled,
        "samples": n,
        "tflite_refusal": refusal,
    }


# This process's current mix: its key, `low` (lowered), and once run, its `values` per batch
# (every tensor) and the layer calls that took (`run`); until then `prev`, the last mix run.
_base: dict[str, Any] = {}
# The mixes `size` lowered from the current mix (key -> `_Lowered`, or None: refused), run by
# `evaluate` without lowering them again; dropped when the current mix changes (a new step).
_lowered: dict[tuple, Any] = {}


@dataclasses.dataclass
class _Lowered:
    mli: Any
    footprint: dict
    prints: Prints


def reset() -> None:
    """Forget the current mix kept in this process (another model's, when tune runs twice)."""
    _base.clear()
    _lowered.clear()


def evaluate(task: tuple[tuple, tuple]) -> dict | None:
    """Figures of the mix `task[1]`, re-running only what differs from the mix `task[0]`;
    None when lowering refuses the mix or it lowers to the current model."""
    from mlitool.execute.mli import bridge as B

    c = context()
    base_key, key = task
    _switch(c, base_key)
    base, values = _base["low"], _values(c)
    if key == base_key:
        return figures(c, base.mli, values, _base["run"], base.footprint)
    low = _lowered[key] if key in _lowered else _lower_mix(c, key)
    if low is None:
        return None
    if low.prints.common(base.prints) == len(low.prints) == len(base.prints):
        return None
    primary = B.primary_tensors(c["graph"], low.mli)
    wanted = {primary[i] for i in c["outs"]} | {primary[j] for j in c["units"].values()}
    values, run = _run_from(c, base, values, low, keep=False, wanted=wanted)
    return figures(c, low.mli, values, run, low.footprint)


def size(task: tuple[tuple, tuple]) -> dict | None:
    """RAM and ROM of the mix `task[1]` from its memory plan, without running it (None:
    lowering refuses it): what a move from the mix `task[0]` costs, cheaply. The lowered
    model is kept for `evaluate` while `task[0]` is the current mix."""
    c = context()
    base_key, key = task
    _switch(c, base_key)
    if key not in _lowered:
        _lowered[key] = _lower_mix(c, key)
    low = _lowered[key]
    return None if low is None else {k: low.footprint[k] for k in ("ram_bytes", "rom_bytes")}


def _switch(c: dict, base_key: tuple) -> None:
    """Make `base_key` this process's current mix (lowered by `size` if it was a move)."""
    if _base.get("key") == base_key:
        return
    prev = dict(_base) if "values" in _base else _base.get("prev")
    low = _lowered.get(base_key) or _lower_mix(c, base_key, refused=False)
    _lowered.clear()
    _base.clear()
    _base.update(key=base_key, low=low, prev=prev)


def _values(c: dict) -> list[dict]:
    """The current mix's values per batch, run once: from the last mix run, only the layers
    after those they share (a whole run for the first)."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.mli.walker import run_model

    if "values" not in _base:
        prev, mli = _base.pop("prev"), _base["low"].mli
        if prev is None:
            values = []
            for a, b in c["batches"]:
                inputs = B.model_inputs(c["graph"], mli, {k: v[a:b] for k, v in c["data"].items()})
                values.append(run_model(mli, inputs, c["arith"], keep=True))
            run = len(mli.layers) * len(values)
        else:
            values, run = _run_from(c, prev["low"], prev["values"], _base["low"], True, None)
        for raw in values:
            for v in raw.values():
                v.flags.writeable = False  # shared with every candidate's run
        _base.update(values=values, run=run)
    return _base["values"]


def _run_from(c: dict, old: _Lowered, were: list[dict], low: _Lowered, keep: bool, wanted):
    """The values per batch of the model `low`, those of the layers it shares with `old` taken
    from `old`'s values per batch (`were`); and the layer calls run."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.mli.walker import run_layers

    mli = low.mli
    same = low.prints.common(old.prints)
    kept = {name for la in old.mli.layers[:same] for name in la.outputs}
    inputs_same = {
        name
        for name in mli.inputs
        if name in old.mli.tensors and old.prints.tensor(name) == low.prints.tensor(name)
    }
    values = []
    for (a, b), cached in zip(c["batches"], were):
        seed = {k: v for k, v in cached.items() if k in kept or k in inputs_same}
        if len(inputs_same) < len(mli.inputs):
            chunk = {k: v[a:b] for k, v in c["data"].items()}
            fresh = B.model_inputs(c["graph"], mli, chunk)
            seed.update({k: v for k, v in fresh.items() if k not in inputs_same})
        run_layers(mli, mli.layers[same:], seed, c["arith"], b - a, keep=keep, wanted=wanted)
        values.append(seed)
    return values, (len(mli.layers) - same) * len(values)


def _lower_mix(c: dict, key: tuple, refused: bool = True) -> _Lowered | None:
    """The mix `key` lowered, with its memory plan; None when lowering refuses it (raised
    instead without `refused`)."""
    from mlitool.footprint.summary import footprint
    from mlitool.mli.lower.driver import lower

    try:
        mli = lower(
            c["graph"],
            dataclasses.replace(c["settings"], overrides=dict(key)),
            ranges=c["ranges"],
            source=c["source"],
            ranges_remedy="give tune real inputs to calibrate on (--calibration DATA)",
        )
    except (UnsupportedError, OptionError):  # this op cannot take this format here
        if not refused:
            raise
        return None
    return _Lowered(mli, footprint(c["graph"], mli, c["fast_memory"]), Prints(mli))


def figures(c: dict, mli, values: list[dict], run: int, fp: dict) -> dict[str, Any]:
    """The output figures of one mix from its MLI values per batch, summed batch by batch as
    verify sums them (so verify on the written config gives the same numbers)."""
    from mlitool.execute.mli import bridge as B

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
