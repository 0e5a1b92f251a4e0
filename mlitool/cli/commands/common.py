"""What every command shares: the pipeline options from the command-line ones, the -o DIR check,
and the one way a command ends (JSON files, stdout, warnings and the files written on stderr)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from mlitool.cli.options import value_of
from mlitool.errors import OptionError
from mlitool.plumbing.notices import one_line as _one_line


def path_option(*names: str, metavar: str, help: str):
    """An optional file or directory option of one command, no default shown."""
    return typer.Option(None, *names, metavar=metavar, show_default=False, help=help)


def model_options(params: dict):
    """The pipeline's options from a command's parameters (its `locals()` on entry: the shared
    options it has, by name; --target names the build)."""
    from mlitool.pipeline import ModelOptions

    def value(name: str):
        return value_of(params.get(name))

    return ModelOptions(
        format=value("fmt"),
        mli=value("mli"),
        layout=value("layout"),
        config=params["config"],
        weights_only=params.get("weights_only", False),
        calibration=params["calibration"],
        calibration_method=value("calibration_method"),
        build=value("target"),
        round_mode=value("round_mode"),
        accu=value("accu"),
        fast_memory=params.get("fast_memory"),
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
    made = doc.get("files") or ([doc["output"]] if "output" in doc else [])
    show(
        lambda: text,
        render,
        doc.get("warnings", []),
        (*made, *map(str, written)),
        as_json=as_json,
        quiet=quiet,
    )


def show(json_text, render, warnings, written, *, as_json: bool, quiet: bool) -> None:
    """On stdout the JSON document (`json_text()`) or the tables (`render()`), nothing else with
    --quiet; on stderr the warnings, then the files written."""
    if as_json:
        sys.stdout.write(json_text())
    elif not quiet:
        render()
    print_warnings(warnings)
    if not quiet:
        for path in written:
            print(f"wrote {path}", file=sys.stderr)


def print_warnings(warnings) -> None:
    """On stderr, one line per kind (`mlitool.plumbing.notices`): the same on every command."""
    from mlitool.plumbing.notices import warning_lines

    for line in warning_lines(warnings):
        print(f"warning: {_one_line(line)}", file=sys.stderr)
