"""Start-up: `--help` of every command and TAB completion import only the CLI, not what the
commands run with (numpy, the pipeline, rich, pydantic through typer, the process pool), so they
answer in well under 0.25 s (issue 25). Asserted on the modules imported, not on time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# Runs mlitool in a fresh interpreter and prints the heavy modules it imported.
RUNNER = """
import json, sys
from mlitool.cli.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("numpy", "pydantic", "rich", "tflite", "flatbuffers", "multiprocessing",
         "concurrent", "mlitool.pipeline", "mlitool.report", "mlitool.execute", "mlitool.mli.types")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
"""

COMMANDS = ("inspect", "convert", "run", "verify", "report")


def _heavy_imports(args: list[str], **env: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )
    return json.loads(r.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--help"], *([c, "--help"] for c in COMMANDS)])
def test_help_imports_nothing_heavy(args):
    assert _heavy_imports(args) == []


@pytest.mark.parametrize(
    "words", ["mlitool conv", "mlitool convert --f", "mlitool report x --format s"]
)
def test_completion_imports_nothing_heavy(words):
    env = {
        "_MLITOOL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    assert _heavy_imports([], **env) == []
