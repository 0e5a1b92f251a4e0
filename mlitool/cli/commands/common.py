"""What every command shares: the pipeline options from the command-line ones, the -o DIR check,
and the one way a command ends (JSON files, stdout, warnings and the files written on stderr)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from mlitool.cli.options import _value
from mlitool.errors import OptionError
from mlitool.plumbing.notices import one_line as _one_line


def path_option(*names: str, metavar: str, help: str):
    """An optional file or directory option of one command, no default shown."""
    return typer.Option(None, *names, metavar=metavar, show_default=False, help=help)


def model_options(
    fmt,
    config,
    calibration,
    calibration_method,
    target,
    round_mode,
    accu,
    *,
    mli=None,
    layout=None,
    weights_only=False,
):
    """The pipeline's options from the shared command-line options (--target names the build)."""
    from mlitool.pipeline import ModelOptions

    return ModelOptions(
        format=_value(fmt),
        mli=_value(mli),
        layout=_value(layout),
        config=config,
        weights_only=weights_only,
        calibration=calibration,
        calibration_method=_value(calibration_method),
        build=_value(target),
        round_mode=_value(round_mode),
        accu=_value(accu),
    )


def dumps(doc: dict, *, allow_nan: bool = True) -> str:
    import json

    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=allow_nan) + "\n"


def out_dir(out: Path | None) -> Path | None:
    """`-o DIR`, checked and created (None when not given)."""
    if out is None:
        return None
    from mlitool.plumbing.fsio import make_dirs

    if out.exists() and not out.is_dir():
        raise OptionError("--out is a directory (it exists and is not one)", str(out))
    return make_dirs(out)


def finish(
    doc: dict,
    *,
    as_json: bool,
    json_out: Path | None,
    quiet: bool,
    render,
    files: tuple[Path, ...] = (),
    allow_nan: bool = True,
) -> None:
    """The one way every command ends: JSON files written (atomically), then stdout (JSON or
    the tables), then the warnings and the files written on stderr."""
    from mlitool.plumbing.fsio import write_file_atomically

    text = dumps(doc, allow_nan=allow_nan)
    written = [write_file_atomically(p, text) for p in (*files, *([json_out] if json_out else []))]
    if as_json:
        sys.stdout.write(text)
    elif not quiet:
        render()
    print_warnings(doc.get("warnings", []))
    if not quiet:
        made = doc.get("files") or ([doc["output"]] if "output" in doc else [])
        for path in (*made, *map(str, written)):
            print(f"wrote {path}", file=sys.stderr)


def print_warnings(warnings) -> None:
    """On stderr, one line per kind (`mlitool.plumbing.notices`): the same on every command."""
    from mlitool.plumbing.notices import warning_lines

    for line in warning_lines(warnings):
        print(f"warning: {_one_line(line)}", file=sys.stderr)
