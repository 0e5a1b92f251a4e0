"""The search behind `mlitool tune`: per-layer formats from the cheapest (all sa8) upward.

1. Start from all sa8. Candidates: each op that runs a kernel (not only views), promoted one
   format up to fx8w16d (ops with weights) or fx16; lowering inserts the conversions between
   layers whose formats differ, and a promotion lowering refuses is left out.
2. Each candidate is lowered, its RAM (the arena, or fast + slow with --fast-memory) and ROM
   (`footprint`) taken from the real memory plan, and run bit-exactly in mli mode over the
   samples: worst output SNR against float, largest LSB difference against tflite mode, top-1
   accuracy against labels — the figures verify gives, summed batch by batch as verify sums them.
   The layers before the first layer that differs from the current mix are not run again: their
   outputs are those of the current mix, kept per batch (`_base`).
3. The gain is how much of the remaining distance to the targets a candidate closes (each
   target's shortfall over its shortfall at the start); the candidate with the most gain per
   byte added is promoted (one that adds no bytes first); ties go to the lower op index. When
   no single promotion closes any distance, pairs are tried (an op and the op reading its
   output, both fx16: no conversion between them); when none does either, the best SNR gain
   per byte is taken (e.g. the max LSB is set by another layer). A candidate that goes over a
   budget the current mix meets is out.
4. Repeat until every target is met or no candidate improves. If then all fx16 is nearer the
   targets (conversions around lone fx16 layers can cost more than they give), the search
   continues from all fx16. Once met, every promoted op is tried one or two formats down;
   those that keep the targets met are taken back down, most bytes saved first (each re-run).
Every step is recorded (the Pareto table). Each candidate runs whole in one process, so the
result is the same with any --jobs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from mlitool import ir
from mlitool.errors import OptionError, UnsupportedError
from mlitool.pipeline import ModelOptions
from mlitool.plumbing.parallel import context
from mlitool.plumbing.progress import Progress
from mlitool.verify.stats import LabelStats, LsbStats, RealStats

FORMATS = ("sa8", "fx8w16d", "fx16")  # cheapest first
RANK = {f: k for k, f in enumerate(FORMATS)}
SNR_CLAMP = 1000.0  # dB: ±inf SNR (identical / all-zero reference) as a number for the gain
EPS = 1e-9
MIN_SNR_GAIN = 0.01  # dB: less is not an improvement worth bytes


@dataclass(frozen=True)
class Targets:
    """What the chosen mix must meet (None: not asked)."""

    min_snr: float | None = None  # dB, every output against float
    max_lsb: int | None = None  # every int8 output against tflite mode
    min_accuracy: float | None = None  # percent top-1 against the labels
    ram_budget: int | None = None  # bytes
    rom_budget: int | None = None

    def accuracy_given(self) -> bool:
        return (self.min_snr, self.max_lsb, self.min_accuracy) != (None, None, None)


@dataclass(frozen=True)
class TuneOptions:
    targets: Targets
    input: Path | None = None
    samples: int = 32
    seed: int = 0
    labels: Path | None = None
    jobs: int | None = 1
    batch: int | None = None  # samples per batch (None: as verify chooses)
    progress: Progress | None = None


def tune(model_path: str | Path, model_opts: ModelOptions, opts: TuneOptions) -> dict[str, Any]:
    """Search (see the module docstring); returns the JSON-ready document."""
    from mlitool.config import load_config
    from mlitool.execute import mli_bridge as B
    from mlitool.pipeline import calibrate, lower_model, read, resolve
    from mlitool.plumbing.parallel import check_jobs, task_pool

    model_path = Path(model_path)
    t = opts.targets
    if not t.accuracy_given():
        raise OptionError("tune: give a target: --min-snr, --max-lsb or --min-accuracy")
    if t.min_accuracy is not None and opts.labels is None:
        raise OptionError("--min-accuracy: give the labels of the --input samples (--labels)")
    jobs = check_jobs(opts.jobs)
    progress = opts.progress or Progress()
    model = read(model_path)
    graph = model.main
    model_opts = replace(model_opts, format="sa8", overrides={})
    s = resolve(model_opts)
    warnings = []
    pins: dict[int, str] = {}
    if load_config(model_opts.config).overrides:  # tune chooses every layer's format itself
        pins = {op.index: "sa8" for op in graph.ops}
        warnings.append(f"the [[layer]] overrides of {s.config} are not used: tune chooses them")
    ranges = calibrate(model, model_opts, s, progress)
    base = lower_model(
        model, model_path, replace(model_opts, overrides=pins), executed_by="tune", ranges=ranges
    )
    warnings[:0] = base.warnings
    job = _job(model_path, graph, base, s, ranges, model_opts, opts)
    groups = B.layers_by_op(base)
    ops = {op.index: op for op in graph.ops}
    choices = {}  # op index -> formats above sa8 it may take
    for op in graph.ops:
        layers = groups.get(op.index, [])
        if any(la.kind != "view" for la in layers):
            weighted = any(la.weights for la in layers)
            choices[op.index] = ("fx8w16d", "fx16") if weighted else ("fx16",)

    def key(mix: dict[int, str]) -> tuple:
        return tuple(sorted({**pins, **mix}.items()))

    search = {"mixes_evaluated": 0, "layers_run": 0, "layers_total": 0}

    def evaluate(base_mix: dict, mixes: list[dict], label: str) -> list[dict | None]:
        advance = progress.stage(label, len(mixes))
        out = []
        for r in run(_evaluate, [(key(base_mix), key(m)) for m in mixes]):
            if r is not None:
                r = dict(r)
                search["layers_run"] += r.pop("layers_run")
                search["layers_total"] += r.pop("layers_total")
            out.append(r)
            advance(1)
        search["mixes_evaluated"] += len(mixes)
        return out

    steps: list[dict[str, Any]] = []
    _base.clear()  # another model's, when tune runs twice in one process
    with task_pool(jobs, job) as run:
        start, all_fx16 = evaluate(
            {}, [{}, {i: "fx16" for i in choices}], "tune: all sa8, all fx16"
        )
        scale = _scales(start, t)
        current, figs = {}, start
        steps.append(_step(0, [], figs, t))
        while not _met(figs, t):
            singles = [
                {i: f} for i in choices for f in choices[i] if RANK[f] > RANK[current.get(i, "sa8")]
            ]
            label = f"tune: step {len(steps)}"
            results = evaluate(current, [{**current, **m} for m in singles], label)
            pick = _choose([(singles, results)], figs, t, scale, primary_only=True)
            if pick is None:  # no one layer helps alone: a layer and its reader in fx16
                pairs = _pairs(graph, choices, current)
                more = evaluate(current, [{**current, **m} for m in pairs], label + " (pairs)")
                pick = _choose([(singles, results), (pairs, more)], figs, t, scale)
            if pick is None:
                break
            move, new = pick
            changes = [_change(graph, ops[i], current, f) for i, f in move.items()]
            steps.append(_step(len(steps), changes, new, t, figs))
            current, figs = {**current, **move}, new
        every = {i: "fx16" for i in choices}
        if not _met(figs, t) and current != every and _jump(figs, all_fx16, t, scale):
            # one layer (or pair) at a time found no way up, all fx16 is nearer: from there
            changes = [_change(graph, ops[i], current, f) for i, f in every.items()]
            steps.append(_step(len(steps), changes, all_fx16, t, figs))
            current, figs = every, all_fx16
        if _met(figs, t):  # back down where the targets hold without it, most bytes first
            trials = [(i, f) for i in sorted(current) for f in ("sa8", *choices[i])]
            trials = [(i, f) for i, f in trials if RANK[f] < RANK[current[i]]]
            first = evaluate(current, [_with(current, i, f) for i, f in trials], "tune: back down")
            order = sorted(
                (_bytes(r), i, RANK[f], f)
                for (i, f), r in zip(trials, first)
                if r is not None and _met(r, t) and _bytes(r) <= _bytes(figs)
            )
            for k, (_, i, _, f) in enumerate(order):
                if RANK[f] >= RANK[current.get(i, "sa8")]:
                    continue  # already lower
                mix = _with(current, i, f)
                r = dict(zip(trials, first))[i, f] if k == 0 else evaluate(current, [mix], "")[0]
                if r is not None and _met(r, t) and _bytes(r) <= _bytes(figs):
                    steps.append(
                        _step(len(steps), [_change(graph, ops[i], current, f)], r, t, figs)
                    )
                    current, figs = mix, r
    chosen = len(steps) - 1 if _met(figs, t) else _closest(steps, t, scale)
    mix = _mix_at(steps, chosen)
    return _document(
        model_path,
        graph,
        base,
        s,
        opts,
        steps,
        chosen,
        mix,
        choices,
        all_fx16,
        search,
        warnings,
        job,
    )


def _with(mix: dict[int, str], i: int, fmt: str) -> dict[int, str]:
    out = {k: v for k, v in mix.items() if k != i}
    if fmt != "sa8":
        out[i] = fmt
    return out


def _mix_at(steps: list[dict], k: int) -> dict[int, str]:
    mix: dict[int, str] = {}
    for st in steps[1 : k + 1]:
        for c in st["change"]:
            mix = _with(mix, c["op"], c["to"])
    return mix


def _change(graph: ir.Graph, op: ir.Op, current: dict, fmt: str) -> dict[str, Any]:
    return {
        "op": op.index,
        "type": op.type,
        "tensor": graph.tensors[op.outputs[0]].name if op.outputs else "",
        "from": current.get(op.index, "sa8"),
        "to": fmt,
    }


def _bytes(figs: dict) -> int:
    return figs["ram_bytes"] + figs["rom_bytes"]


def _snr(figs: dict) -> float:
    v = figs["snr_db"]
    v = float(v) if isinstance(v, str) else v
    return max(-SNR_CLAMP, min(SNR_CLAMP, v))


def _shortfalls(figs: dict, t: Targets) -> dict[str, float]:
    """How far each accuracy target is from met (0: met)."""
    out = {}
    if t.min_snr is not None:
        out["snr"] = max(0.0, t.min_snr - _snr(figs))
    if t.max_lsb is not None:
        out["lsb"] = float(max(0, (figs["max_lsb"] or 0) - t.max_lsb))
    if t.min_accuracy is not None:
        out["accuracy"] = max(0.0, t.min_accuracy - figs["accuracy"])
    return out


def _scales(start: dict, t: Targets) -> dict[str, float]:
    """Each target's shortfall at the start (at least one unit: dB, LSB, point)."""
    return {k: max(v, 1.0) for k, v in _shortfalls(start, t).items()}


def _distance(figs: dict, t: Targets, scale: dict) -> float:
    return sum(v / scale[k] for k, v in _shortfalls(figs, t).items())


def _over_budget(figs: dict, t: Targets) -> list[str]:
    out = []
    if t.ram_budget is not None and figs["ram_bytes"] > t.ram_budget:
        out.append(f"RAM {figs['ram_bytes']:,} B > --ram-budget {t.ram_budget:,}")
    if t.rom_budget is not None and figs["rom_bytes"] > t.rom_budget:
        out.append(f"ROM {figs['rom_bytes']:,} B > --rom-budget {t.rom_budget:,}")
    return out


def failed(figs: dict, t: Targets) -> list[str]:
    """The targets and budgets `figs` misses, one reason each (empty: met)."""
    out = []
    if t.min_snr is not None and _snr(figs) < t.min_snr:
        out.append(f"SNR {_snr(figs):.2f} dB < --min-snr {t.min_snr:g}")
    if t.max_lsb is not None and (figs["max_lsb"] or 0) > t.max_lsb:
        out.append(f"{figs['max_lsb']} LSB from tflite > --max-lsb {t.max_lsb}")
    if t.min_accuracy is not None and figs["accuracy"] < t.min_accuracy:
        out.append(f"top-1 {figs['accuracy']:.2f}% < --min-accuracy {t.min_accuracy:g}")
    return out + _over_budget(figs, t)


def _met(figs: dict, t: Targets) -> bool:
    return not failed(figs, t)


def _pairs(graph: ir.Graph, choices: dict, current: dict) -> list[dict[int, str]]:
    """{op: fx16, reader: fx16} for each candidate op and each candidate op reading its output
    (through views), where one of them is not fx16 yet: FX16 from one to the other, no
    conversion between them."""
    consumers = graph.consumers()

    def readers(op: ir.Op) -> list[int]:
        out = []
        for t in op.outputs:
            for r in consumers.get(t, []):
                out += [r.index] if r.index in choices else readers(r)
        return out

    pairs = []
    for op in graph.ops:
        if op.index not in choices:
            continue
        for j in sorted(set(readers(op))):
            move = {op.index: "fx16", j: "fx16"}
            if any(current.get(k) != f for k, f in move.items()) and move not in pairs:
                pairs.append(move)
    return pairs


def _choose(tiers, cur: dict, t: Targets, scale: dict, primary_only: bool = False):
    """(move, figures) of the best move (see the module docstring), or None. `tiers`: lists
    of (moves, their figures), in order: of equals the first wins."""
    here = _distance(cur, t, scale)

    def admissible(r: dict) -> bool:
        return all(
            budget is None or r[k] <= budget or r[k] <= cur[k]
            for k, budget in (("ram_bytes", t.ram_budget), ("rom_bytes", t.rom_budget))
        )

    gains = [(lambda r: here - _distance(r, t, scale), EPS)]
    if not primary_only:
        gains.append((lambda r: _snr(r) - _snr(cur), MIN_SNR_GAIN))
    for gain_of, least in gains:
        best, best_rank = None, None
        for moves, results in tiers:
            for move, r in zip(moves, results):
                if r is None or not admissible(r):
                    continue
                gain, cost = gain_of(r), _bytes(r) - _bytes(cur)
                if gain <= least:
                    continue
                rank = (1, gain, -cost) if cost <= 0 else (0, gain / cost, 0)
                if best_rank is None or rank > best_rank:
                    best, best_rank = (move, r), rank
        if best is not None:
            return best
    return None


def _jump(cur: dict, to: dict, t: Targets, scale: dict) -> bool:
    """Whether `to` is nearer the targets than `cur` (within the budgets `cur` meets)."""
    return len(_over_budget(to, t)) <= len(_over_budget(cur, t)) and _distance(
        to, t, scale
    ) < _distance(cur, t, scale)


def _closest(steps: list[dict], t: Targets, scale: dict) -> int:
    """The step nearest to the targets: within the budgets first, then the smallest distance,
    then the fewest bytes."""
    return min(
        range(len(steps)),
        key=lambda k: (
            len(_over_budget(steps[k], t)),
            _distance(steps[k], t, scale),
            _bytes(steps[k]),
            k,
        ),
    )


def _step(k: int, change, figs: dict, t: Targets, before: dict | None = None) -> dict[str, Any]:
    st = {"step": k, "change": change, **figs, "met": _met(figs, t)}
    if before is not None:
        st["gain"] = {
            "snr_db": _finite(_snr(figs) - _snr(before)),
            "ram_bytes": figs["ram_bytes"] - before["ram_bytes"],
            "rom_bytes": figs["rom_bytes"] - before["rom_bytes"],
        }
    return st


def _finite(v: float):
    from mlitool.verify.metrics import finite

    return finite(v)


# -- the evaluation of one mix (in a worker process with --jobs > 1) ---------------------------


def _job(model_path, graph, base, s, ranges, model_opts, opts) -> dict[str, Any]:
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


def _evaluate(task: tuple[tuple, tuple]) -> dict | None:
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
        _base["figures"] = _figures(c, mli, values, len(mli.layers) * len(values))
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
    return _figures(c, mli, values, (len(mli.layers) - same) * len(values))


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


def _figures(c: dict, mli, values: list[dict], run: int) -> dict[str, Any]:
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
    return {
        "snr_db": _finite(min(s.result()["snr_db"] for s in snr.values())),
        "max_lsb": max(lsbs) if lsbs else None,
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


def _document(
    model_path, graph, base, s, opts, steps, chosen, mix, choices, all_fx16, search, warnings, job
) -> dict[str, Any]:
    from mlitool.execute.presets import describe
    from mlitool.verify.document import _input_note

    t = opts.targets
    arith = job["arith"]
    figs = steps[chosen]
    reasons = failed(figs, t)
    counts = {f: 0 for f in FORMATS}
    for i in choices:
        counts[mix.get(i, "sa8")] += 1
    layers = []
    for i in sorted(mix):  # each with the step that gave it its format
        st, c = [(x, c) for x in steps[1 : chosen + 1] for c in x["change"] if c["op"] == i][-1]
        layers.append({**c, "format": mix[i], "step": st["step"], "gain": st["gain"]})
    return {
        "model": str(model_path),
        "config": s.config,
        "mli": s.target.version,
        "arith": {
            "round_mode": arith.round_mode,
            "full_accu": arith.full_accu,
            "build": describe(arith),
        },
        "inputs": {**_input_note(opts, graph), "samples": job["samples"]},
        "labels": None if opts.labels is None else str(opts.labels),
        "targets": dataclasses.asdict(t),
        "fast_memory": s.fast_memory,
        "candidates": {str(i): list(f) for i, f in choices.items()},
        "steps": steps,
        "all_fx16": all_fx16,
        "chosen": {
            "step": chosen,
            "formats": counts,
            "layers": layers,
            **{k: figs[k] for k in ("snr_db", "max_lsb", "accuracy", "ram_bytes", "rom_bytes")},
        },
        "met": not reasons,
        "failed": reasons,
        "search": search,
        "warnings": warnings,
    }
