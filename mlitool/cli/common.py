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


def shows_progress(output) -> bool:
    """A command shows its progress on a terminal, unless --json or --quiet (`options.OUTPUT`)."""
    from mlitool.plumbing.progress import wanted

    return wanted(as_json=output.as_json, quiet=output.quiet)


def progress_of(output):
    """The progress display of a command (a context manager), shown as `shows_progress` says."""
    from mlitool.plumbing.progress import progress_for

    return progress_for(shows_progress(output))


def model_options(quantization, build, **more):
    """The pipeline's options from a command's option groups (`options.QUANTIZATION`,
    `options.BUILD`: --target names the build) and the ones only some commands take (`mli`,
    `layout`, `weights_only`, `fast_memory`)."""
    from mlitool.pipeline import ModelOptions

    return ModelOptions(
        format=value_of(getattr(quantization, "fmt", None)),
        mli=value_of(more.get("mli")),
        layout=value_of(more.get("layout")),
        config=quantization.config,
        weights_only=more.get("weights_only", False),
        calibration=quantization.calibration,
        calibration_method=value_of(quantization.calibration_method),
        build=value_of(build.target),
        round_mode=value_of(build.round_mode),
        accu=value_of(build.accu),
        fast_memory=more.get("fast_memory"),
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
    output,
    *,
    render,
    files: tuple[Path, ...] = (),
    allow_nan: bool = True,
) -> None:
    """The one way every command ends: JSON files written (atomically; `output`: the
    `options.OUTPUT` group), then stdout (JSON or the tables), then the warnings and the files
    written on stderr."""
    from mlitool.plumbing.fsio import write_file_atomically

    text = dumps(doc, allow_nan=allow_nan)
    json_out = [output.json_out] if output.json_out else []
    written = [write_file_atomically(p, text) for p in (*files, *json_out)]
    made = doc.get("files") or ([doc["output"]] if "output" in doc else [])
    show(
        lambda: text,
        render,
        doc.get("warnings", []),
        (*made, *map(str, written)),
        output,
    )


def show(json_text, render, warnings, written, output) -> None:
    """On stdout the JSON document (`json_text()`) or the tables (`render()`), nothing else with
    --quiet; on stderr the warnings, then the files written."""
    if output.as_json:
        sys.stdout.write(json_text())
    elif not output.quiet:
        render()
    print_warnings(warnings)
    if not output.quiet:
        for path in written:
            print(f"wrote {path}", file=sys.stderr)


def print_warnings(warnings) -> None:
    """On stderr, one line per kind (`mlitool.plumbing.notices`): the same on every command."""
    from mlitool.plumbing.notices import warning_lines

    for line in warning_lines(warnings):
        print(f"warning: {_one_line(line)}", file=sys.stderr)
