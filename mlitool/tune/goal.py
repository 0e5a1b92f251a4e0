"""Targets and how far a mix is from them, judged by `mlitool.verdict` as verify and report
judge: the same figures give the same verdict and the same reasons.

A mix's figures (`evaluate.figures`) hold each output's SNR and max LSB, RAM, ROM and top-1
accuracy. The distance to the targets is the sum over the accuracy targets (SNR, LSB,
accuracy) of each one's shortfall (`verdict.shortfalls`) over its shortfall at the start: the
share of the way still to go.
"""

from __future__ import annotations

from dataclasses import asdict, replace

from mlitool.errors import OptionError
from mlitool.verdict import Measured, Thresholds, judge, settle, shortfalls

Targets = Thresholds  # what the chosen mix must meet: verify's thresholds
SNR_CLAMP = 1000.0  # dB: ±inf SNR (identical / all-zero reference) as a number for the gain
EPS = 1e-9
ACCURACY = ("--min-snr", "--max-lsb", "--min-accuracy")
BUDGETS = ("--ram-budget", "--rom-budget")


def settle_targets(given: Targets, labels, config) -> tuple[Targets, list[str]]:
    """The command line's targets over the config file's (`verdict.settle`: min_snr, max_lsb,
    min_accuracy, ram_budget, rom_budget), and warnings. A config's min_accuracy without
    --labels cannot be measured: it is left out, with a warning."""
    t = settle(**asdict(given), labels=labels, config=config)
    warnings = []
    if t.min_accuracy is not None and labels is None:
        t = replace(t, min_accuracy=None)
        warnings.append(f"min_accuracy of {config.path} not used: give --labels to measure it")
    if (t.min_snr, t.max_lsb, t.min_accuracy) == (None, None, None):
        why = f" ({warnings[0]})" if warnings else ""
        raise OptionError(f"tune: give a target: --min-snr, --max-lsb or --min-accuracy{why}")
    return t, warnings


def snr(figs: dict) -> float:
    v = figs["snr_db"]
    v = float(v) if isinstance(v, str) else v
    return max(-SNR_CLAMP, min(SNR_CLAMP, v))


def measured(figs: dict, clamp: bool = False) -> Measured:
    """The figures as `verdict.judge` reads them (SNR clamped to ±SNR_CLAMP with `clamp`)."""

    def db(v):
        v = float(v)
        return max(-SNR_CLAMP, min(SNR_CLAMP, v)) if clamp else v

    return Measured(
        ram_bytes=figs["ram_bytes"],
        rom_bytes=figs["rom_bytes"],
        outputs=tuple((name, db(s), lsb) for name, s, lsb in figs["outputs"]),
        accuracy=figs["accuracy"],
    )


def failed(figs: dict, t: Targets) -> list[str]:
    """The targets and budgets `figs` misses, in `judge`'s words (empty: met)."""
    word, reasons = judge(measured(figs), t)
    return reasons if word == "FAIL" else []


def met(figs: dict, t: Targets) -> bool:
    return not failed(figs, t)


def gaps(figs: dict, t: Targets) -> dict[str, float]:
    """Each target's shortfall, by option (0: met)."""
    return shortfalls(measured(figs, clamp=True), t)


def missing(figs: dict, t: Targets) -> list[str]:
    """The accuracy targets not met, as their options."""
    return [k for k, v in gaps(figs, t).items() if k in ACCURACY and v > 0]


def scales(start: dict, t: Targets) -> dict[str, float]:
    """Each accuracy target's shortfall at the start (at least one unit: dB, LSB, point)."""
    return {k: max(v, 1.0) for k, v in gaps(start, t).items() if k in ACCURACY}


def distance(figs: dict, t: Targets, scale: dict) -> float:
    return sum(v / scale[k] for k, v in gaps(figs, t).items() if k in ACCURACY)


def over_budget(figs: dict, t: Targets) -> int:
    """How many budgets `figs` goes over."""
    return sum(1 for k, v in gaps(figs, t).items() if k in BUDGETS and v > 0)


def total_bytes(figs: dict) -> int:
    return figs["ram_bytes"] + figs["rom_bytes"]


def closest(steps: list[dict], t: Targets, scale: dict) -> int:
    """The step nearest to the targets: within the budgets first, then the smallest distance,
    then the fewest bytes."""
    return min(
        range(len(steps)),
        key=lambda k: (
            over_budget(steps[k], t),
            distance(steps[k], t, scale),
            total_bytes(steps[k]),
            k,
        ),
    )


def nearer(cur: dict, to: dict, t: Targets, scale: dict) -> bool:
    """Whether `to` is nearer the targets than `cur` (within the budgets `cur` meets)."""
    return over_budget(to, t) <= over_budget(cur, t) and distance(to, t, scale) < distance(
        cur, t, scale
    )
