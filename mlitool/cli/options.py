"""The options the commands share: one definition each, one meaning everywhere, and the
choices typer shows in --help and checks case-insensitively."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from mlitool.mli.target import LAYOUTS, MLI_VERSIONS


def _choices(name: str, values) -> type[Enum]:
    """An Enum typer shows as [a|b|c] in --help and checks (case-insensitively)."""
    return Enum(name, {v: v for v in values}, type=str)


Format = _choices("Format", ("sa8", "fx16", "fx8w16d", "fx8"))
MliVersion = _choices("MliVersion", MLI_VERSIONS)
Layout = _choices("Layout", LAYOUTS)
Target = _choices("Target", ("vpx", "em"))
Round = _choices("Round", ("up", "convergent"))
Accu = _choices("Accu", ("full", "reduced"))
Method = _choices("Method", ("minmax", "percentile"))
Mode = _choices("Mode", ("mli", "tflite", "float"))
Oracle = _choices("Oracle", ("litert",))


def _value(choice):
    return None if choice is None else choice.value


# Options shared by the commands: one definition each, one meaning everywhere.
ModelArg = Annotated[
    Path, typer.Argument(metavar="MODEL", help="The .tflite model file.", show_default=False)
]
FormatOpt = Annotated[
    Optional[Format],
    typer.Option(
        "--format",
        "-f",
        case_sensitive=False,
        show_default=False,
        help="Element format [default: the config's, else sa8].",
    ),
]
MliOpt = Annotated[
    Optional[MliVersion],
    typer.Option(
        "--mli", show_default=False, help="MLI version [default: the config's, else 2.0]."
    ),
]
LayoutOpt = Annotated[
    Optional[Layout],
    typer.Option(
        "--layout",
        case_sensitive=False,
        show_default=False,
        help="MLI 1.x activation layout [default: chw].",
    ),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        show_default=False,
        help="TOML settings and per-layer overrides [default: the "
        "nearest mlitool.toml, or pyproject.toml with [tool.mlitool], from here upward].",
    ),
]
TargetOpt = Annotated[
    Optional[Target],
    typer.Option(
        "--target",
        case_sensitive=False,
        show_default=False,
        help="MLI build: em = ROUND_MODE=CONVERGENT, FULL_ACCU=ON (ARC EM/HS); vpx = ROUND_MODE=UP, "
        "FULL_ACCU=OFF [default: vpx].",
    ),
]
RoundOpt = Annotated[
    Optional[Round],
    typer.Option(
        "--round", case_sensitive=False, show_default=False, help="ROUND_MODE (over --target)."
    ),
]
AccuOpt = Annotated[
    Optional[Accu],
    typer.Option(
        "--accu", case_sensitive=False, show_default=False, help="FULL_ACCU on/off (over --target)."
    ),
]
CalibrationOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--calibration",
        show_default=False,
        help="Float models: .npy/.npz of real inputs to derive activation ranges from.",
    ),
]
CalibrationMethodOpt = Annotated[
    Method,
    typer.Option(
        "--calibration-method", case_sensitive=False, help="How ranges are taken from them."
    ),
]
# The samples verify and report run.
SamplesFileOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--input",
        "-i",
        show_default=False,
        help=".npy / .npz inputs (as for run) [default: random inputs].",
    ),
]
SamplesOpt = Annotated[int, typer.Option("--samples", "-n", help="Random inputs: how many.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random inputs: the seed.")]
# Output: the same four options on every command.
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document on stdout (and nothing else there).")
]
JsonOutOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--json-out",
        metavar="FILE",
        show_default=False,
        help="Also write the JSON document to FILE.",
    ),
]
OutOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        show_default=False,
        help="Directory the command's files are written into (created if missing).",
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Nothing on stdout but --json; warnings and errors still on stderr."
    ),
]
# verify's thresholds (report takes them too): exit 3 when an output misses one.
MinSnrOpt = Annotated[
    Optional[float],
    typer.Option(
        "--min-snr",
        metavar="DB",
        show_default=False,
        help="Exit 3 when an output's SNR against float is below DB.",
    ),
]
MaxLsbOpt = Annotated[
    Optional[int],
    typer.Option(
        "--max-lsb",
        metavar="N",
        show_default=False,
        help="Exit 3 when an output differs from tflite mode by more than N LSB.",
    ),
]
JobsOpt = Annotated[
    Optional[int],
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        show_default=False,
        help="Processes over the samples [default: every core]; results equal --jobs 1.",
    ),
]
