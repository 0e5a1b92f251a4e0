"""The `mlitool` command line: parse options, call one function, render, map errors to exit codes.

Heavy modules (numpy, tflite, rich tables) are imported inside the commands so that
`mlitool --version` and `--help` stay fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from mlitool import __version__
from mlitool.errors import EXIT_INTERNAL, MlitoolError

app = typer.Typer(
    name="mlitool",
    help="Make TensorFlow Lite models ready for the embARC MLI library.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        print(f"mlitool {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on internal errors."),
) -> None:
    _state["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every error into one line and an exit code."""
    try:                                       # typer < 0.20 uses click; newer typer vendors it
        from click import ClickException
    except ImportError:
        from typer._click.exceptions import ClickException

    args = sys.argv[1:] if argv is None else list(argv)
    _state["debug"] = "--debug" in args
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=args, prog_name="mlitool", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except ClickException as exc:        # usage errors: click's own message
        exc.show()
        code = exc.exit_code
    except typer.Abort:
        print("mlitool: aborted", file=sys.stderr)
        code = 130
    except MlitoolError as exc:
        print(f"mlitool: error: {exc}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        print(f"mlitool: internal error: {type(exc).__name__}: {exc}. This is a bug in mlitool; "
              "please report it with the command line (run again with --debug for a traceback).",
              file=sys.stderr)
        code = EXIT_INTERNAL
    sys.exit(code)


@app.command("inspect")
def inspect_cmd(
    model: Path = typer.Argument(..., metavar="MODEL", help="The .tflite model file.",
                                show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals."""
    from mlitool.inspect import inspect_file

    summary = inspect_file(model)
    if as_json:
        import json

        sys.stdout.write(json.dumps(summary, sort_keys=True, indent=2, allow_nan=False) + "\n")
    else:
        from mlitool.inspect_render import render

        render(summary)
