"""PASS / FAIL against the thresholds a user sets: one judgement for `verify`, `report` and any
command that measures the same figures (`judge`).

Thresholds come from the command line over the config file (`min_snr`, `max_lsb`,
`min_accuracy`, `ram_budget`, `rom_budget`). RAM and ROM are `mlitool.footprint.summary`'s figures; SNR
and LSB those of every model output in verify's document; accuracy is mli mode's top-1 against
`--labels`, in percent.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from mlitool.errors import OptionError


@dataclass(frozen=True)
class Thresholds:
    min_snr: float | None = None  # dB, every output against float
    max_lsb: int | None = None  # every output against tflite mode
    min_accuracy: float | None = None  # percent: mli mode's top-1 against the labels
    ram_budget: int | None = None  # bytes
    rom_budget: int | None = None  # bytes

    def given(self) -> list[str]:
        """The thresholds set, as the options that set them ("--ram-budget 48,000 B")."""
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                unit = (
                    " B" if f.name.endswith("budget") else "%" if f.name == "min_accuracy" else ""
                )
                text = f"{v:,}" if isinstance(v, int) else f"{v:g}"
                out.append(f"--{f.name.replace('_', '-')} {text}{unit}")
        return out


def settle(
    *,
    min_snr: float | None = None,
    max_lsb: int | None = None,
    min_accuracy: float | None = None,
    ram_budget: str | int | None = None,
    rom_budget: str | int | None = None,
    labels: object = None,
    config: Any = None,
) -> Thresholds:
    """The command line's thresholds over the config file's (`config`: a `mlitool.config.Config`
    or None). --min-accuracy needs --labels; the config's `min_accuracy` applies when they are
    given (the verdict names it as not measured otherwise)."""
    from mlitool.mli.memory.placement import parse_size

    if min_accuracy is not None and labels is None:
        raise OptionError(
            "--min-accuracy needs --labels FILE: the top-1 accuracy is measured against "
            "the class of each --input sample"
        )
    cfg = config.thresholds if config is not None else {}
    ram = ram_budget if ram_budget is not None else cfg.get("ram_budget")
    rom = rom_budget if rom_budget is not None else cfg.get("rom_budget")
    th = Thresholds(
        min_snr=min_snr if min_snr is not None else cfg.get("min_snr"),
        max_lsb=max_lsb if max_lsb is not None else cfg.get("max_lsb"),
        min_accuracy=min_accuracy if min_accuracy is not None else cfg.get("min_accuracy"),
        ram_budget=None if ram is None else parse_size(ram, "--ram-budget"),
        rom_budget=None if rom is None else parse_size(rom, "--rom-budget"),
    )
    if th.min_accuracy is not None and not 0 <= th.min_accuracy <= 100:
        raise OptionError(f"--min-accuracy {th.min_accuracy:g}: give a percentage, 0 to 100")
    return th


@dataclass(frozen=True)
class Measured:
    """What a command measured (None: not measured, e.g. `report --no-accuracy`)."""

    ram_bytes: int | None = None
    rom_bytes: int | None = None
    # per model output: (tensor name, SNR dB vs float, max LSB vs tflite or None)
    outputs: tuple[tuple[str, float | None, int | None], ...] | None = None
    accuracy: float | None = None  # percent, mli mode's top-1 against the labels


def measured(doc: dict[str, Any] | None, footprint: dict[str, Any] | None) -> Measured:
    """The figures of verify's document `doc` and a `mlitool.footprint.summary.footprint`."""
    fp = footprint or {}
    outs = None
    acc = None
    if doc is not None:
        outs = tuple(
            (
                o["tensor"],
                None if o["vs_float"]["snr_db"] is None else float(o["vs_float"]["snr_db"]),
                o["vs_tflite"]["max_lsb"] if "vs_tflite" in o else None,
            )
            for o in doc["outputs"]
        )
        if "labels" in doc:
            acc = 100 * doc["labels"]["accuracy"]["mli"]["top1"]
    return Measured(fp.get("ram_bytes"), fp.get("rom_bytes"), outs, acc)


def _checks(m: Measured, th: Thresholds) -> list[tuple]:
    """Each threshold set, against the figure it bounds: (figure, value, limit, option, word
    before the limit, value format, limit format); "budget" / "max" are upper bounds, "min" a
    lower one. SNR and LSB once per output."""
    checks = [
        ("RAM", m.ram_bytes, th.ram_budget, "--ram-budget", "budget", "{:,} B", "{:,} B"),
        ("ROM", m.rom_bytes, th.rom_budget, "--rom-budget", "budget", "{:,} B", "{:,} B"),
        (
            "top-1 accuracy",
            m.accuracy,
            th.min_accuracy,
            "--min-accuracy",
            "min",
            "{:.1f}%",
            "{:g}%",
        ),
    ]
    for name, snr, lsb in m.outputs or ((None, None, None),):
        where = f"output {name!r} " if name else ""
        checks += [
            (f"{where}SNR", snr, th.min_snr, "--min-snr", "min", "{:.2f} dB", "{:g} dB"),
            (
                f"{where}differs from tflite by",
                lsb,
                th.max_lsb,
                "--max-lsb",
                "max",
                "{} LSB",
                "{} LSB",
            ),
        ]
    return [c for c in checks if c[2] is not None]


def judge(m: Measured, th: Thresholds) -> tuple[str, list[str]]:
    """(verdict, reasons): FAIL with every threshold missed, each named with its value and limit
    ("RAM 64,512 B > budget 48,000 B"); else PASS with the thresholds met, or UNCHECKED when
    none was set or none could be measured. One that could not be measured is named so and
    does not fail."""
    failed, met, unmeasured = [], [], []
    for what, value, limit, option, word, fmt, limit_fmt in _checks(m, th):
        if value is None:
            unmeasured.append(f"{option}: not measured")
            continue
        upper = word != "min"
        ok = value <= limit if upper else value >= limit
        sign = ("<=" if upper else ">=") if ok else (">" if upper else "<")
        (met if ok else failed).append(
            f"{what} {fmt.format(value)} {sign} {word} {limit_fmt.format(limit)}"
        )
    if failed:
        return "FAIL", failed
    return ("PASS" if met else "UNCHECKED"), met + sorted(set(unmeasured))


def shortfalls(m: Measured, th: Thresholds) -> dict[str, float]:
    """How far `m` is from each threshold `judge` checks, by option ("--min-snr": dB,
    "--max-lsb": LSB, "--min-accuracy": points, budgets: bytes; the worst output), 0 where met.
    A threshold not measured is left out. Zero everywhere if and only if `judge` says no FAIL:
    a search can measure its distance to the verdict with the verdict's own checks."""
    out: dict[str, float] = {}
    for _, value, limit, option, word, *_ in _checks(m, th):
        if value is not None:
            gap = value - limit if word != "min" else limit - value
            out[option] = max(out.get(option, 0.0), float(gap), 0.0)
    return out
