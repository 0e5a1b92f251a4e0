"""The search behind `mlitool tune`: per-layer formats from the cheapest (all sa8) upward.

1. Start from all sa8; the candidates and moves are `mixes`' (one op promoted; an op and its
   reader both fx16). Lowering inserts the conversions between layers whose formats differ;
   a move lowering refuses is left out.
2. Each mix is evaluated bit-exactly, re-running only the layers after the first that changed
   (`evaluate`), and judged by `mlitool.verdict` as verify judges it (`goal`).
3. Each step takes the single move with the most gain per byte (`choose`), running only the
   moves that could be it (`choose.pruned`). When no single move closes any distance, the
   pairs are run; when none of them does either, and SNR or top-1 accuracy is among the
   targets missed, the best SNR gain per byte is taken (top-1 over few samples moves in
   steps). Otherwise (e.g. only --max-lsb missed: fx formats keep more bits than tflite's
   int8 arithmetic, promotions do not bring the outputs nearer it) the search stops, and says
   why.
4. Repeat until every target is met or no move helps. If then all fx16 is nearer the targets
   (conversions around lone fx16 layers can cost more than they give), the search continues
   from all fx16. Once met, every promoted op is tried one or two formats down; those that
   keep the targets met are taken back down, most bytes saved first (each re-run).
Every step is recorded (the Pareto table); the chosen mix is the last step when met, else the
closest step. Same inputs, same choice, with any --jobs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mlitool.pipeline import ModelOptions
from mlitool.plumbing.progress import Progress
from mlitool.tune import choose as C
from mlitool.tune import goal as G
from mlitool.tune import mixes as X
from mlitool.tune.document import document
from mlitool.tune.goal import Targets

__all__ = ["Targets", "TuneOptions", "tune"]


@dataclass(frozen=True)
class TuneOptions:
    targets: Targets  # over the config file's thresholds (`goal.settle_targets`)
    input: Path | None = None
    samples: int = 32
    seed: int = 0
    labels: Path | None = None
    jobs: int | None = 1
    batch: int | None = None  # samples per batch (None: as verify chooses)
    progress: Progress | None = None


def tune(model_path: str | Path, model_opts: ModelOptions, opts: TuneOptions) -> dict[str, Any]:
    """Search (see the module docstring); returns the JSON-ready document."""
    from mlitool.pipeline import calibrate, lower_model, read, settle
    from mlitool.plumbing.parallel import check_jobs, task_pool
    from mlitool.tune import evaluate as E

    model_path = Path(model_path)
    s = settle(replace(model_opts, format="sa8", overrides={}))
    t, warnings = G.settle_targets(opts.targets, opts.labels, s.file)
    opts = replace(opts, targets=t)
    jobs = check_jobs(opts.jobs)
    progress = opts.progress or Progress()
    model = read(model_path)
    graph = model.main
    pins: dict[int, str] = {}
    if s.file.overrides:  # tune chooses every layer's format itself
        pins = {op.index: "sa8" for op in graph.ops}
        warnings.append(f"the [[layer]] overrides of {s.config} are not used: tune chooses them")
    ranges = calibrate(model, s, progress)
    base = lower_model(
        model,
        model_path,
        replace(s, overrides={**s.overrides, **pins}),
        executed_by="tune",
        ranges=ranges,
    )
    warnings[:0] = base.warnings
    job = E.job(model_path, graph, base, s, ranges, opts)
    choices = X.candidates(graph, base)
    ops = {op.index: op for op in graph.ops}
    search = {
        "mixes_evaluated": 0,
        "layers_run": 0,
        "layers_total": 0,
        "moves_pruned": 0,  # single moves not run: they could not win (`choose.pruned`)
        "stopped": None,
    }

    def key(mix: dict[int, str]) -> tuple:
        return tuple(sorted({**pins, **mix}.items()))

    def evaluate(base_mix: dict, mixes: list[dict], advance) -> list[dict | None]:
        out = []
        for r in run(E.evaluate, [(key(base_mix), key(m)) for m in mixes]):
            if r is not None:
                r = dict(r)
                search["layers_run"] += r.pop("layers_run")
                search["layers_total"] += r.pop("layers_total")
            out.append(r)
            advance(1)
        search["mixes_evaluated"] += len(mixes)
        return out

    def stage(label: str, mixes: list[dict]) -> list[dict | None]:
        return evaluate(current, mixes, progress.stage(label, len(mixes)))

    def measure_from(mix: dict, advance):
        return lambda moves: evaluate(mix, [{**mix, **m} for m in moves], advance)

    def sizes_from(mix: dict):
        return lambda moves: list(run(E.size, [(key(mix), key({**mix, **m})) for m in moves]))

    def record(move: dict, new: dict, mix: dict, before: dict) -> None:
        changes = [X.change(graph, ops[i], mix, f) for i, f in move.items()]
        steps.append(_step(len(steps), changes, new, t, before))

    steps: list[dict[str, Any]] = []
    E.reset()
    every = {i: "fx16" for i in choices}
    with task_pool(jobs, job) as run:
        current = {}
        start, all_fx16 = stage("tune: all sa8, all fx16", [{}, every])
        scale = G.scales(start, t)
        figs = start
        steps.append(_step(0, [], figs, t))
        while not G.met(figs, t):
            label = f"tune: step {len(steps)}"
            moves = X.singles(choices, current)
            rank = C.Ranker(figs, t, scale)  # those that cannot win are not run
            advance = progress.stage(label, len(moves))
            measure = measure_from(current, advance)
            pick, fresh = C.pruned(moves, measure, sizes_from(current), rank)
            search["moves_pruned"] += len(moves) - len(fresh)
            advance(len(moves) - len(fresh))  # those not run are done too
            if pick is None:  # no single move helps: the pairs
                pairs = X.pairs(graph, choices, current)
                more = stage(label + " (pairs)", [{**current, **m} for m in pairs])
                pick = C.best(pairs, more, rank)
                if pick is None and {"--min-snr", "--min-accuracy"} & set(G.missing(figs, t)):
                    rest = [m for m in moves if C.key(m) not in fresh]  # those not run yet
                    more_singles = stage(label + " (rest)", [{**current, **m} for m in rest])
                    fresh.update(zip(map(C.key, rest), more_singles))
                    both = [fresh[C.key(m)] for m in moves] + more
                    pick = C.best(moves + pairs, both, C.Ranker(figs, t, scale, by_snr=True))
            if pick is None:
                search["stopped"] = (
                    f"stopped at step {len(steps) - 1}: no promotion of one layer, or of a "
                    f"layer and its reader, brings {', '.join(G.missing(figs, t))} nearer"
                )
                break
            move, new = pick
            record(move, new, current, figs)
            current, figs = {**current, **move}, new
        if (
            not G.met(figs, t)
            and all_fx16 is not None  # None: lowering refuses all fx16 (e.g. fallback C only)
            and current != every
            and G.nearer(figs, all_fx16, t, scale)
        ):
            # one layer (or pair) at a time found no way up, all fx16 is nearer: from there
            record(every, all_fx16, current, figs)
            current, figs = every, all_fx16
        if G.met(figs, t):
            current, figs = _back_down(current, figs, t, choices, stage, record)
    chosen = len(steps) - 1 if G.met(figs, t) else G.closest(steps, t, scale)
    mix = X.mix_at(steps, chosen)
    return document(
        model_path, graph, s, opts, steps, chosen, mix, choices, all_fx16, search, warnings, job
    )


def _back_down(current: dict, figs: dict, t: Targets, choices: dict, stage, record):
    """Each promoted op back down where the targets hold without it, most bytes saved first
    (each re-run from the mix before it); returns the new (mix, figures)."""
    trials = [(i, f) for i in sorted(current) for f in ("sa8", *choices[i])]
    trials = [(i, f) for i, f in trials if X.RANK[f] < X.RANK[current[i]]]
    first = stage("tune: back down", [X.with_format(current, i, f) for i, f in trials])
    order = sorted(
        (G.total_bytes(r), i, X.RANK[f], f)
        for (i, f), r in zip(trials, first)
        if r is not None and G.met(r, t) and G.total_bytes(r) <= G.total_bytes(figs)
    )
    for k, (_, i, _, f) in enumerate(order):
        if X.RANK[f] >= X.RANK[current.get(i, "sa8")]:
            continue  # already lower
        mix = X.with_format(current, i, f)
        r = dict(zip(trials, first))[i, f] if k == 0 else stage("", [mix])[0]
        if r is not None and G.met(r, t) and G.total_bytes(r) <= G.total_bytes(figs):
            record({i: f}, r, current, figs)
            current, figs = mix, r
    return current, figs


def _step(k: int, change, figs: dict, t: Targets, before: dict | None = None) -> dict[str, Any]:
    from mlitool.verify.metrics import finite

    st = {"step": k, "change": change, **figs, "met": G.met(figs, t)}
    if before is not None:
        st["gain"] = {
            "snr_db": finite(G.snr(figs) - G.snr(before)),
            "ram_bytes": figs["ram_bytes"] - before["ram_bytes"],
            "rom_bytes": figs["rom_bytes"] - before["rom_bytes"],
        }
    return st
