"""Typed errors. The CLI turns each into one line on stderr and its exit code."""

from __future__ import annotations

# Exit codes (documented in README.md).
EXIT_OK = 0
EXIT_INTERNAL = 1  # a bug in mlitool
EXIT_BAD_INPUT = 2  # unreadable, corrupt or hostile model / data file, bad option
EXIT_THRESHOLD = 3  # verify: a --min-snr / --max-lsb threshold failed
EXIT_UNSUPPORTED = 4  # valid model, but an op / type / format the target cannot run
EXIT_CANNOT_WRITE = 5  # an output file or directory cannot be written (full disk, read-only, ...)


class MlitoolError(Exception):
    """Base class: an error the user can act on. `path` names the file concerned, if any."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ModelFormatError(MlitoolError):
    """The file is missing, not a TFLite flatbuffer, truncated or internally inconsistent."""


class InputDataError(MlitoolError):
    """An input / calibration data file is unreadable or does not match the model."""


class OptionError(MlitoolError):
    """An impossible combination of command-line options or configuration values."""


class SubtensorError(MlitoolError):
    """A sub-tensor (view) request violates a condition of MLI's sub-tensor helpers."""


class UnsupportedError(MlitoolError):
    """The model is valid but uses something the chosen target/format cannot express."""

    exit_code = EXIT_UNSUPPORTED


class OutputError(MlitoolError):
    """An output file or directory cannot be created or written; `path` names it, the message
    is the operating system's. Nothing partial is left behind."""

    exit_code = EXIT_CANNOT_WRITE


class ThresholdError(MlitoolError):
    """verify: a requested accuracy threshold was not met."""

    exit_code = EXIT_THRESHOLD


class RefusedOps(UnsupportedError):
    """Ops the target cannot run, grouped: one line per reason with the ops it applies to
    (`groups`: [(reason, [(op index, op type)])], in the order the reasons first occur)."""

    def __init__(self, what: str, refusals: list[tuple[int, str, str]], path: str | None = None):
        groups: dict[str, list[tuple[int, str]]] = {}
        for index, op_type, reason in refusals:
            groups.setdefault(reason, []).append((index, op_type))
        self.head = f"{len(refusals)} op(s) {what}"
        self.groups = list(groups.items())
        super().__init__("; ".join(self.lines()), path)

    def lines(self) -> list[str]:
        """One line with one reason; else the head, then one line per reason."""
        out = []
        for reason, ops in self.groups:
            if len(ops) == 1:
                out.append(f"op {ops[0][0]} ({ops[0][1]}): {reason}")
                continue
            by_type: dict[str, list[int]] = {}
            for index, op_type in ops:
                by_type.setdefault(op_type, []).append(index)
            which = ", ".join(
                f"{t} (op{'s' if len(ix) > 1 else ''} {', '.join(map(str, ix))})"
                for t, ix in by_type.items()
            )
            out.append(f"{reason}: {len(ops)} ops: {which}")
        if len(out) == 1:
            return [f"{self.head}: {out[0]}"]
        return [f"{self.head}, for {len(out)} reasons:", *out]
