"""The options the commands share: one definition each, one meaning everywhere, and the
choices typer shows in --help and checks case-insensitively."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from mlitool.cli.groups import Group
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


def value_of(choice):
    """The string of a choice typer parsed (None when the option was not given)."""
    return None if choice is None else choice.value


def _unless_given(kind, *names: str, help: str, **kw):
    """An option that is None unless given: --help shows no default (its text says what
    applies); choices are matched case-insensitively."""
    if isinstance(kind, type) and issubclass(kind, Enum):
        kw["case_sensitive"] = False
    return Annotated[Optional[kind], typer.Option(*names, show_default=False, help=help, **kw)]


# Options shared by the commands: one definition each, one meaning everywhere.
ModelArg = Annotated[
    Path, typer.Argument(metavar="MODEL", help="The .tflite model file.", show_default=False)
]
FormatOpt = _unless_given(
    Format, "--format", "-f", help="Element format [default: the config's, else sa8]."
)
MliOpt = _unless_given(MliVersion, "--mli", help="MLI version [default: the config's, else 2.0].")
LayoutOpt = _unless_given(Layout, "--layout", help="MLI 1.x activation layout [default: chw].")
ConfigOpt = _unless_given(
    Path,
    "--config",
    help="TOML settings and per-layer overrides [default: the "
    "nearest mlitool.toml, or pyproject.toml with [tool.mlitool], from here upward].",
)
TargetOpt = _unless_given(
    Target,
    "--target",
    help="MLI build: em = ROUND_MODE=CONVERGENT, FULL_ACCU=ON (ARC EM/HS); vpx = ROUND_MODE=UP, "
    "FULL_ACCU=OFF [default: vpx].",
)
RoundOpt = _unless_given(Round, "--round", help="ROUND_MODE (over --target).")
AccuOpt = _unless_given(Accu, "--accu", help="FULL_ACCU on/off (over --target).")
CalibrationOpt = _unless_given(
    Path,
    "--calibration",
    help="Float models: .npy/.npz of real inputs to derive activation ranges from.",
)
CalibrationMethodOpt = Annotated[
    Method,
    typer.Option(
        "--calibration-method", case_sensitive=False, help="How ranges are taken from them."
    ),
]
# The samples verify and report run.
SamplesFileOpt = _unless_given(
    Path, "--input", "-i", help=".npy / .npz inputs (as for run) [default: random inputs]."
)
SamplesOpt = Annotated[int, typer.Option("--samples", "-n", help="Random inputs: how many.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random inputs: the seed.")]
# Output: the same four options on every command.
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document on stdout (and nothing else there).")
]
JsonOutOpt = _unless_given(
    Path, "--json-out", metavar="FILE", help="Also write the JSON document to FILE."
)
OutOpt = _unless_given(
    Path,
    "--out",
    "-o",
    metavar="DIR",
    help="Directory the command's files are written into (created if missing).",
)
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Nothing on stdout but --json; warnings and errors still on stderr."
    ),
]
# verify's thresholds (report takes them too): exit 3 when an output misses one.
MinSnrOpt = _unless_given(
    float,
    "--min-snr",
    metavar="DB",
    help="Exit 3 when an output's SNR against float is below DB.",
)
MaxLsbOpt = _unless_given(
    int,
    "--max-lsb",
    metavar="N",
    help="Exit 3 when an output differs from tflite mode by more than N LSB.",
)
LabelsOpt = _unless_given(
    Path,
    "--labels",
    metavar="FILE",
    help=".npy of class indices (or .npz with a 'labels' array), one per --input sample: "
    "top-1 / top-5 accuracy of float, tflite and mli modes and the drop mli vs float.",
)
MinAccuracyOpt = _unless_given(
    float,
    "--min-accuracy",
    metavar="PCT",
    help="Exit 3 when mli mode's top-1 accuracy against --labels is below PCT percent.",
)
RamBudgetOpt = _unless_given(
    str,
    "--ram-budget",
    metavar="SIZE",
    help="Exit 3 when the RAM the model needs (arena; fast + slow with --fast-memory) exceeds "
    "SIZE bytes (K and M suffixes).",
)
RomBudgetOpt = _unless_given(
    str,
    "--rom-budget",
    metavar="SIZE",
    help="Exit 3 when the ROM the model needs (constant data + tensor structs) exceeds SIZE "
    "bytes (K and M suffixes).",
)
FastMemoryOpt = _unless_given(
    str,
    "--fast-memory",
    metavar="SIZE",
    help="Bytes of the core's local memory (VCCM, DCCM; K and M suffixes): every kernel operand "
    "is placed or copied there before the call [default: the config's fast_memory, else one "
    "arena, constants where they are].",
)
JobsOpt = _unless_given(
    int,
    "--jobs",
    "-j",
    metavar="N",
    help="Processes over the samples [default: every core]; results equal --jobs 1.",
)


# Groups of options several commands take together (mlitool.cli.groups: a parameter that
# defaults to one of these stands for its options, and receives them as one namespace).
QUANTIZATION = Group(
    (
        ("fmt", FormatOpt, None),
        ("config", ConfigOpt, None),
        ("calibration", CalibrationOpt, None),
        ("calibration_method", CalibrationMethodOpt, "minmax"),
    )
)
BUILD = Group(
    (("target", TargetOpt, None), ("round_mode", RoundOpt, None), ("accu", AccuOpt, None))
)
SAMPLES = Group(
    (("input_file", SamplesFileOpt, None), ("samples", SamplesOpt, 32), ("seed", SeedOpt, 0))
)
THRESHOLDS = Group(
    (
        ("min_snr", MinSnrOpt, None),
        ("max_lsb", MaxLsbOpt, None),
        ("labels", LabelsOpt, None),
        ("min_accuracy", MinAccuracyOpt, None),
        ("ram_budget", RamBudgetOpt, None),
        ("rom_budget", RomBudgetOpt, None),
    )
)
OUTPUT = Group(
    (
        ("as_json", JsonOpt, False),
        ("json_out", JsonOutOpt, None),
        ("out", OutOpt, None),
        ("quiet", QuietOpt, False),
    )
)
