"""Shared test fixtures. Tests that need ../shared skip with a clear reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
SAMPLES = ROOT / "samples"


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test when it is not there (a fresh clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared reference material sits beside the project in CI "
                    "(set MLITOOL_SHARED to point elsewhere)")
    return path


@pytest.fixture
def shared():
    return shared_path()
