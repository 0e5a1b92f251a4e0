"""The lazy choice of a move (`mlitool.tune.choose.lazy`) takes the move that running every
candidate takes (`best`), running fewer, where gains shrink as the search goes; ties go to the
first move in order."""

from __future__ import annotations

import json

from tests.support.cli import run_main
from tests.support.paths import SAMPLES


class _Rank:
    """A stand-in for `choose.Ranker` where a move's figures are its gain; every move adds a
    byte to an empty mix (a move that adds none is always run)."""

    cur = {"ram_bytes": 0, "rom_bytes": 0}

    def gain(self, r):
        return r

    def of(self, gain, size):
        return (1, gain, 0)

    def __call__(self, r):
        return self.of(r, None)


def _lazy(old: list, new: list):
    """lazy over moves 0..n-1 whose gains were `old` when last run (None: never run) and are
    `new` now; returns (the move lazy takes, the one best takes, the moves run, in order)."""
    from mlitool.tune.choose import best, key, lazy

    moves = [{i: "fx16"} for i in range(len(new))]
    known = {key(m): g for m, g in zip(moves, old) if g is not None}
    ran = []

    def run(ms):
        ran.extend(next(iter(m)) for m in ms)
        return [new[next(iter(m))] for m in ms]

    pick, _ = lazy(
        moves, known, run, lambda ms: [{"ram_bytes": 1, "rom_bytes": 0} for _ in ms], _Rank()
    )
    every = best(moves, new, _Rank())
    return next(iter(pick[0])), next(iter(every[0])), ran


def test_lazy_measures_the_highest_old_ranks_first_and_stops():
    old = [1, 9, 2, 6, 8, 0.6, 7, 1.5]
    new = [1, 5, 2, 5, 4, 0.5, 3, 1]
    took, every, ran = _lazy(old, new)
    assert took == every == 1  # the first of two equal ranks
    assert ran == [1, 4, 6, 3]  # the rest cannot rank above 5 any more


def test_lazy_ties_go_to_the_first_move_in_order():
    # move 2 ranks 5 now, as move 0 does; only measuring move 0 (old rank 5) tells them apart
    old = [5, 1, 9, 8, 8, 8, 8]
    new = [5, 0, 5, 1, 1, 1, 1]
    took, every, ran = _lazy(old, new)
    assert took == every == 0
    assert ran == [2, 3, 4, 5, 6, 0]


def test_lazy_measures_moves_never_measured_first():
    took, every, ran = _lazy([9, None, 3, 2, 1, 0.5], [2, 4, 1, 1, 1, 0.4])
    assert took == every == 1 and ran == [1, 0, 2, 3]


def test_lazy_search_takes_the_steps_of_the_exhaustive_one(tmp_path, capsys, monkeypatch):
    """On cnn_int8 (six steps up, all fx16, one back down) the lazy search takes every step
    the search measuring every candidate in every step takes, measuring fewer mixes."""
    from mlitool.tune import choose

    def every(moves, known, run, sizes, rank):
        results = run(moves)
        return choose.best(moves, results, rank), dict(zip(map(choose.key, moves), results))

    docs = []
    for name, how in (("lazy", choose.lazy), ("every", every)):
        monkeypatch.setattr(choose, "lazy", how)
        out = tmp_path / f"{name}.json"
        code, _, err = run_main(
            ["tune", SAMPLES / "cnn_int8.tflite", "--min-snr", "60", "-n", "8", "-j", "1"]
            + ["--json-out", out, "-q"],
            capsys,
        )
        assert code == 0, err
        docs.append(json.loads(out.read_text()))
    lazy, every = docs
    assert lazy["steps"] == every["steps"] and len(lazy["steps"]) == 9
    assert lazy["search"]["mixes_evaluated"] < every["search"]["mixes_evaluated"]
