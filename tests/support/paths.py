"""Where the tests find the project, its samples, the MLI headers they compile against, and the
shared reference material (../shared), which may be absent in a fresh clone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
SAMPLES = ROOT / "samples"
MLI_HEADERS = ROOT / "tests" / "mli_headers"


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test when it is not there (a fresh clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared reference material sits beside the project in CI "
                    "(set MLITOOL_SHARED to point elsewhere)")
    return path
