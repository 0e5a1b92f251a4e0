"""What the commands and the pipeline share to talk to the host: terminal output (console.py: one
width rule, tables that never cut a value; progress.py: the progress bar; notices.py: warnings
grouped by kind), atomic writes (fsio.py) and the process pool (parallel.py). It imports nothing
above it; the CLI (mlitool/cli/) uses it and nothing uses the CLI."""
