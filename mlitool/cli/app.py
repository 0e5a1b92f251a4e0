"""The Typer app: its name, help, exit-code epilog and global options (--version, --debug).

The commands register on it in commands/ (one module per command); entry.py runs it.
"""

from __future__ import annotations

import typer

from mlitool import __version__

EXIT_CODES = (
    "\b\nExit codes: 0 ok, 1 internal error (a bug in mlitool), 2 bad input file or\n"
    "option, 3 a threshold or target was not met, 4 unsupported by the MLI target,\n"
    "5 cannot write an output, 130 interrupted (Ctrl-C)."
)


def _pass_through(params, flags_only: bool = True) -> None:
    """Recent typer coerces each option through a pydantic TypeAdapter, built when its value is
    first processed: the root's flags (--help, --install-completion, ...) are processed on every
    run, so each `mlitool X --help` and TAB completion imported pydantic (~0.15 s). A flag holds
    a bool or None, and completion uses no value: those are passed through as they are. (Older
    typer uses click's types and has no such step.)"""
    try:
        from typer._coercion import PassThroughRuntimeParam
    except ImportError:
        return
    for p in params:
        desc = getattr(p, "type_descriptor", None)
        if desc is not None and (
            not flags_only or (getattr(p, "is_flag", False) and desc.annotation is bool)
        ):
            p._runtime_param = PassThroughRuntimeParam(desc.parameter_info, desc.annotation)


class _Group(typer.core.TyperGroup):
    """The root command, without pydantic where it is not needed (`_pass_through`)."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        _pass_through(params)
        return params

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and ctx.resilient_parsing:  # completing: values are not used
            _pass_through([*cmd.params, cmd.get_help_option(ctx)], flags_only=False)
        return cmd


app = typer.Typer(
    name="mlitool",
    cls=_Group,
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
