"""The `mlitool` entry point: run the app and turn every error into one line and an exit code.

Heavy modules (numpy, tflite, rich tables) are imported inside the commands so that
`mlitool --version` and `--help` stay fast.
"""

from __future__ import annotations

import sys

import typer

from mlitool.cli.app import _state, app

# The commands register on the app; the import order is the order of the commands in --help.
# isort: off
from mlitool.cli import inspect_cmd, convert_cmd, run_cmd, verify_cmd, report_cmd, tune_cmd  # noqa: F401

# isort: on
from mlitool.errors import EXIT_INTERNAL, MlitoolError, OptionError
from mlitool.plumbing.notices import one_line as _one_line


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every error into one line and an exit code."""
    click_errors = _click_exception_types()
    from mlitool.plumbing.parallel import one_blas_thread

    one_blas_thread()  # before numpy loads: --jobs N equals --jobs 1
    args = _debug_first(sys.argv[1:] if argv is None else list(argv))
    _state["debug"] = args[:1] == ["--debug"]
    command = typer.main.get_command(app)
    try:
        code = _completion_for_named_shell(args)
        if code is None:
            rv = command.main(args=args, prog_name="mlitool", standalone_mode=False)
            code = rv if isinstance(rv, int) else 0
            if code == 130:  # typer turns Ctrl-C into a silent Exit(130), returned here
                print("mlitool: aborted", file=sys.stderr)
    except typer.Exit as exc:
        code = exc.exit_code
    except click_errors as exc:  # usage errors: click's message, on one line
        ctx = getattr(exc, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `mlitool`: the help, as is
            print(exc.format_message(), file=sys.stderr)
        else:
            from mlitool.cli.usage import message

            print(f"mlitool: error: {_one_line(message(exc))}{where}", file=sys.stderr)
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):  # Ctrl-C: click's Abort, or raised outside it
        print("mlitool: aborted", file=sys.stderr)
        code = 130
    except MlitoolError as exc:
        lines = exc.lines() if hasattr(exc, "lines") else [str(exc)]  # grouped refusals
        print(f"mlitool: error: {_one_line(lines[0])}", file=sys.stderr)
        for line in lines[1:]:
            print(f"  {_one_line(line)}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        print(
            f"mlitool: internal error: {type(exc).__name__}: {exc}. This is a bug in mlitool; "
            "please report it with the command line (run again with --debug for a traceback).",
            file=sys.stderr,
        )
        code = EXIT_INTERNAL
    sys.exit(code)


def _debug_first(args: list[str]) -> list[str]:
    """`--debug` is accepted anywhere before `--` (after the subcommand too): it is moved to
    the front, where the root command takes it."""
    end = args.index("--") if "--" in args else len(args)
    rest = [a for a in args[:end] if a != "--debug"] + args[end:]
    return ["--debug", *rest] if len(rest) < len(args) else rest


_COMPLETION_OPTIONS = ("--show-completion", "--install-completion")


def _completion_for_named_shell(args: list[str]) -> int | None:
    """`--show-completion SHELL` / `--install-completion SHELL` (or `=SHELL`) for the shell
    named, not the one typer detects (typer's options are flags and ignore the name). None when
    no shell is named: typer handles the rest."""
    for i, arg in enumerate(args):
        option, _, shell = arg.partition("=")
        if not arg.startswith("-"):
            return None  # the subcommand: no root option follows
        if option not in _COMPLETION_OPTIONS:
            continue
        if not shell and i + 1 < len(args) and not args[i + 1].startswith("-"):
            shell = args[i + 1]
        if not shell or shell in _command_names():
            return None
        from typer._completion_shared import Shells, get_completion_script, install

        names = [s.value for s in Shells]
        if shell not in names:
            raise OptionError(f"{option} {shell!r}: choose one of {', '.join(names)}")
        if option == "--show-completion":
            print(
                get_completion_script(
                    prog_name="mlitool", complete_var="_MLITOOL_COMPLETE", shell=shell
                )
            )
        else:
            _, path = install(shell=shell, prog_name="mlitool", complete_var="_MLITOOL_COMPLETE")
            print(
                f"{shell} completion installed in {path}\n"
                "Completion will take effect once you restart the terminal"
            )
        return 0
    return None


def _command_names() -> set[str]:
    return {c.name or c.callback.__name__ for c in app.registered_commands}


def _click_exception_types() -> tuple[type[Exception], ...]:
    """The ClickException classes typer may raise: newer typer vendors click as `typer._click`
    (while a separate click may still be installed), older typer uses click itself."""
    types = []
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            types.append(__import__(module, fromlist=["ClickException"]).ClickException)
        except ImportError:
            pass
    return tuple(types)
