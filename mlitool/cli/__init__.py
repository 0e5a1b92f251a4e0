"""The command line: the Typer app (app.py), the shared options (options.py), the commands
(commands/, one module each) and the entry point (entry.py). Nothing but `python -m mlitool`
imports it; what it shares with the pipeline (terminal output, atomic writes, the process pool) is
in mlitool/plumbing/."""


def main(argv: list[str] | None = None) -> None:
    """The console script `mlitool` (imports the app only when called)."""
    from mlitool.cli.entry import main as run

    run(argv)
