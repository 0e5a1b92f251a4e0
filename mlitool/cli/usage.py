"""Usage errors in our own words: a bad choice names what was expected and, where a user's
word means one of ours, which (`--format int8` → sa8); an unknown option gets the closest of the
command's own options. Nothing of the validator's wording ("Value error, ...") reaches the user."""

from __future__ import annotations

import difflib
import re

from mlitool.cli import options as opt

# Options with choices: what the value is called, and the choices (our Enums).
_CHOICES = {
    "--format": ("a format", opt.Format),
    "--mli": ("an MLI version", opt.MliVersion),
    "--layout": ("a layout", opt.Layout),
    "--target": ("a target", opt.Target),
    "--round": ("a ROUND_MODE", opt.Round),
    "--accu": ("a FULL_ACCU setting", opt.Accu),
    "--calibration-method": ("a calibration method", opt.Method),
    "--mode": ("a mode", opt.Mode),
    "--oracle": ("an oracle", opt.Oracle),
}
# Words people use for a model's type, and the format that converts such a model.
_HINTS = {
    "--format": {
        "int8": "an int8 model converts with sa8",
        "uint8": "an int8 model converts with sa8",
        "int16": "a 16x8 model converts with fx16 or fx8w16d",
        "int16x8": "a 16x8 model converts with fx16 or fx8w16d",
        "16x8": "a 16x8 model converts with fx16 or fx8w16d",
        "float": "a float model converts to any of them, with --calibration",
        "float32": "a float model converts to any of them, with --calibration",
    },
}
# What a value that does not parse should have been (pydantic's error types, click's words).
_KINDS = {"int_parsing": "an integer", "float_parsing": "a number", "integer": "an integer"}


def message(exc) -> str:
    """One line for a click usage error: ours for a bad value or an unknown option, click's
    otherwise."""
    if type(exc).__name__ == "NoSuchOption":
        return _no_such_option(exc)
    param = getattr(exc, "param", None)
    if type(exc).__name__ == "BadParameter" and param is not None and param.opts:
        return _bad_value(exc, max(param.opts, key=len))
    return exc.format_message()


def _bad_value(exc, option: str) -> str:
    value, kind = _input_of(exc)
    if value is None:  # no value to name: click's text without the validator's prefix
        return f"{option}: {exc.message.removeprefix('Value error, ')}"
    if option in _CHOICES:
        noun, choices = _CHOICES[option]
        names = [c.value for c in choices]
        text = f"{option}: {value!r} is not {noun} ({', '.join(names)})"
        hint = _HINTS.get(option, {}).get(value.lower())
        close = difflib.get_close_matches(value.lower(), names, n=1, cutoff=0.7)
        if hint:
            return f"{text}; {hint}"
        return f"{text}; did you mean {close[0]}?" if close else text
    return f"{option}: {value!r} is not {_KINDS.get(kind, 'a valid value')}"


def _input_of(exc) -> tuple[str | None, str | None]:
    """The value given and the kind of failure: from the validation error typer raised it
    from, else from the message (click's own types)."""
    cause = exc.__cause__
    if cause is not None and hasattr(cause, "errors"):
        first = cause.errors()[0]
        return str(first.get("input")), first.get("type")
    m = re.search(r"'(.*?)' is not (?:one of|a valid (\w+))", exc.message)
    return (m.group(1), m.group(2)) if m else (None, None)


def _no_such_option(exc) -> str:
    name = exc.option_name
    params = exc.ctx.command.params if exc.ctx is not None else []
    ours = [o for p in params for o in p.opts if o.startswith("--")]
    close = difflib.get_close_matches(name, ours, n=1) if name.startswith("--") else []
    return f"no such option {name}" + (f"; did you mean {close[0]}?" if close else "")
