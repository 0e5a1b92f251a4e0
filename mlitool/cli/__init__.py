"""The command line: the Typer app (app.py), the shared options (options.py, groups.py,
usage.py, common.py), one module per command (inspect_cmd.py, convert_cmd.py, run_cmd.py,
verify_cmd.py, report_cmd.py, tune_cmd.py: each parses its options, calls one function and
renders, importing its heavy modules inside so that --help stays fast) and the entry point
(entry.py, the console script `mlitool`). Nothing but `python -m mlitool` imports it; what it
shares with the pipeline (terminal output, atomic writes, the process pool) is in
mlitool/plumbing/."""
