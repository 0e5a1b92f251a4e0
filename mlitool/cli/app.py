"""The Typer app: its name, help, exit-code epilog and global options (--version, --debug).

The commands register on it in commands/ (one module per command); entry.py runs it.
"""

from __future__ import annotations

import typer

from mlitool import __version__

EXIT_CODES = (
    "\b\nExit codes: 0 ok, 1 internal error (a bug in mlitool), 2 bad input file or\n"
    "option, 3 a verify threshold failed, 4 unsupported by the MLI target,\n"
    "5 cannot write an output, 130 interrupted (Ctrl-C)."
)

app = typer.Typer(
    name="mlitool",
    help="Make TensorFlow Lite models ready for the embARC MLI library.",
    epilog=EXIT_CODES,
    add_completion=True,
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
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on internal errors."),
) -> None:
    _state["debug"] = debug
