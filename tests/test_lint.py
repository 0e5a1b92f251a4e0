"""ruff's lint and format check over the project's Python (the rules in pyproject.toml): a style or
lint finding fails the suite as CI would. Skips without ruff on a user's machine (the `test` extra
installs it); fails instead when CI is set."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.support.paths import ROOT, in_ci

PATHS = ["mlitool", "tests", "tools", "benchmarks", "samples"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("ruff") is None:
        if in_ci():
            pytest.fail("ruff is not installed (pip install '.[test]'); CI is set", pytrace=False)
        pytest.skip("ruff is not installed (pip install '.[test]')")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_is_clean():
    r = _ruff("check", "--no-cache", "--output-format", "concise")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_is_clean():
    r = _ruff("format", "--check", "--no-cache")
    assert r.returncode == 0, r.stdout + r.stderr
