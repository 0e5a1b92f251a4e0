"""The command line and its plumbing: the Typer app (app.py), the shared options (options.py), the
commands (commands/, one module each) and the entry point (entry.py); terminal output (console.py,
progress.py, notices.py), atomic writes (fsio.py) and the process pool (parallel.py)."""


def main(argv: list[str] | None = None) -> None:
    """The console script `mlitool` (imports the app only when called)."""
    from mlitool.cli.entry import main as run

    run(argv)
