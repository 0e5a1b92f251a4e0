"""Running the CLI in-process, as `python -m mlitool` does: exit code, stdout and stderr."""

from __future__ import annotations

import pytest


def run_main(args, capsys):
    """(exit code, stdout, stderr) of `mlitool ARGS` (paths may be Path objects)."""
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err
