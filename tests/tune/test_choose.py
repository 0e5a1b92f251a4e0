"""The choice of a move (`mlitool.tune.choose.pruned`) is the move running every candidate
gives (`best`), running only those whose bound (the whole distance left over the bytes they
add) could beat the best run; ties go to the first move in order."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_main
from tests.support.paths import SAMPLES


def _pruned(monkeypatch, costs: list, gains: list, here: float = 1.0):
    """pruned, one move run at a time, over moves 0..n-1 adding `costs` bytes (None: refused)
    and closing `gains` of the distance `here`; returns (the move it takes, the one best takes,
    the moves run)."""
    from mlitool.tune import choose
    from mlitool.tune.choose import Ranker, best, pruned
    from mlitool.tune.goal import Targets

    monkeypatch.setattr(choose, "BATCH", 1)
    moves = [{i: "fx16"} for i in range(len(costs))]
    cur = {"ram_bytes": 100, "rom_bytes": 0, "outputs": [["y", 10.0, None]], "accuracy": None}
    rank = Ranker(cur, Targets(min_snr=10 + here), {"--min-snr": 1.0})
    assert rank.here == here

    def figures(i):  # the mix after move i: its bytes, and an SNR that closes gains[i]
        snr = 10.0 + gains[i]
        return {**cur, "ram_bytes": 100 + costs[i], "outputs": [["y", snr, None]], "snr_db": snr}

    ran = []

    def run(ms):
        ran.extend(next(iter(m)) for m in ms)
        return [figures(next(iter(m))) for m in ms]

    def sizes(ms):
        return [None if costs[i] is None else figures(i) for m in ms for i in m]

    pick, _ = pruned(moves, run, sizes, rank)
    every = best(moves, [None if c is None else figures(i) for i, c in enumerate(costs)], rank)
    took = None if pick is None else next(iter(pick[0]))
    return took, None if every is None else next(iter(every[0])), ran


def test_the_cheapest_first_and_no_move_that_cannot_pay_for_itself(monkeypatch):
    # gain per byte: 0.25/10, 0.5/40, 0.9/100, 0.2/20, 1.0/200, 0.3/1000
    costs, gains = [10, 40, 100, 20, 200, 1000], [0.25, 0.5, 0.9, 0.2, 1.0, 0.3]
    took, every, ran = _pruned(monkeypatch, costs, gains)
    assert took == every == 0
    # bounds 1/10, 1/20, 1/40, ...: after 0 (0.25/10) and 3, move 1 could at best tie with
    # 0.25/10, and ties go to move 0
    assert ran == [0, 3]


def test_moves_that_add_no_bytes_first_and_ties_to_the_first(monkeypatch):
    took, every, ran = _pruned(monkeypatch, [5, 0, -3, 5, None], [0.5, 0.1, 0.1, 0.5, 0.9])
    assert took == every == 2  # adds no bytes, saves the most of the two free ones
    assert ran == [2, 1]  # a move that adds bytes ranks below a free one that gains
    took, every, ran = _pruned(monkeypatch, [5, 11, 5, 5, 5], [0.5, 0.9, 0.5, 0.5, 0.5])
    assert took == every == 0 and ran == [0, 2, 3, 4]  # 1 cannot beat 0.5 / 5 (1 / 11 at best)


@pytest.mark.parametrize("target", ["45", "60"])
def test_search_takes_the_steps_of_running_every_move(tmp_path, capsys, monkeypatch, target):
    """On cnn_int8 (several steps up; at 60 dB, all fx16 then one back down) the search takes
    every step the search running every candidate in every step takes, running fewer."""
    from mlitool.tune import choose

    def every(moves, run, sizes, rank):
        results = run(moves)
        return choose.best(moves, results, rank), dict(zip(map(choose.key, moves), results))

    docs = []
    for name, how in (("pruned", choose.pruned), ("every", every)):
        monkeypatch.setattr(choose, "pruned", how)
        out = tmp_path / f"{name}.json"
        code, _, err = run_main(
            ["tune", SAMPLES / "cnn_int8.tflite", "--min-snr", target, "-n", "8", "-j", "1"]
            + ["--json-out", out, "-q"],
            capsys,
        )
        assert code == 0, err
        docs.append(json.loads(out.read_text()))
    pruned, every = docs
    assert pruned["steps"] == every["steps"] and len(pruned["steps"]) > 2
    assert pruned["search"]["mixes_evaluated"] < every["search"]["mixes_evaluated"]
