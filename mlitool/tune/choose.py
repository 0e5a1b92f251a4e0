"""Which move the search takes: the most gain per byte added.

The gain of a move is how much of the distance to the targets it closes (`goal.distance`),
measured chained: the whole mix run bit-exactly to the outputs, not estimated from one layer's
isolated error. A move that adds no bytes ranks above every one that does (most gain first,
then the most bytes saved); the others by gain per byte. Ties go to the first move in order (op
index, then format). A move that goes over a budget the current mix meets is out.

`pruned` picks the move `best` would pick had every single move been run, running only those
that could win. What a move costs is known exactly without running it: its memory plan
(`evaluate.size`, a lowering). What it gains is not, but no move closes more than the whole
distance left: a move that adds c bytes ranks at most (distance left) / c. Moves are run from
the highest such bound down (those that add no bytes first, then the cheapest), a few at a
time, until the best run ranks at least as high as every bound not run: the same move, proven,
without running the expensive moves that cannot pay for themselves.
"""

from __future__ import annotations

from typing import Callable

from mlitool.tune.goal import EPS, Targets, distance, snr, total_bytes

MIN_SNR_GAIN = 0.01  # dB: less is not an improvement worth bytes
BATCH = 4  # moves run at a time (fixed, so the mixes run do not depend on --jobs)
NO = (-1,)  # the rank of a move that cannot be taken (refused, over budget, no gain)


class Ranker:
    """Ranks the moves from the mix whose figures are `cur`: by the distance to the targets
    closed, or (`by_snr`) by the SNR gained."""

    def __init__(self, cur: dict, t: Targets, scale: dict, by_snr: bool = False):
        self.cur, self.t, self.scale, self.by_snr = cur, t, scale, by_snr
        self.here = distance(cur, t, scale)

    def gain(self, r: dict) -> float:
        if self.by_snr:
            return snr(r) - snr(self.cur)
        return self.here - distance(r, self.t, self.scale)

    def of(self, gain: float, size: dict) -> tuple:
        """The rank of a move that gains `gain` and leads to `size` (RAM and ROM bytes)."""
        t, cur = self.t, self.cur
        for k, budget in (("ram_bytes", t.ram_budget), ("rom_bytes", t.rom_budget)):
            if budget is not None and size[k] > budget and size[k] > cur[k]:
                return NO
        if gain <= (MIN_SNR_GAIN if self.by_snr else EPS):
            return NO
        cost = total_bytes(size) - total_bytes(cur)
        return (1, gain, -cost) if cost <= 0 else (0, gain / cost, 0)

    def __call__(self, r: dict | None) -> tuple:
        return NO if r is None else self.of(self.gain(r), r)


def best(moves: list[dict], results: list[dict | None], rank: Callable):
    """(move, figures) of the highest-ranked move (the first of equals), or None."""
    top, top_rank = None, NO
    for move, r in zip(moves, results):
        k = rank(r)
        if k > top_rank:
            top, top_rank = (move, r), k
    return top


def key(move: dict) -> tuple:
    return tuple(sorted(move.items()))


def pruned(moves: list[dict], run: Callable, sizes: Callable, rank: Ranker):
    """The move `best` picks among `moves` had all been run now, running only those that could
    win (`rank` by the distance closed). `run(moves)` -> their figures; `sizes(moves)` -> their
    RAM and ROM (None: refused). Returns ((move, figures) or None, {move key: figures} run)."""
    assert not rank.by_snr  # an SNR gain has no bound
    order = {key(m): n for n, m in enumerate(moves)}
    size = dict(zip(map(key, moves), sizes(moves)))

    def bound(m: dict) -> tuple:  # its rank at best; the first of equals first
        s = size[key(m)]
        return (NO if s is None else rank.of(rank.here, s), -order[key(m)])

    fresh: dict[tuple, dict | None] = {}
    top, top_key = None, (NO, 0)
    while True:
        rest = [m for m in moves if key(m) not in fresh and bound(m) > top_key]
        if not rest:
            return top, fresh
        batch = sorted(rest, key=bound, reverse=True)[:BATCH]
        for m, r in zip(batch, run(batch)):
            fresh[key(m)] = r
            now = (rank(r), -order[key(m)])
            if now > top_key:
                top, top_key = (m, r), now
