"""Shared test fixtures. Tests that need ../shared skip with a clear reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.mli_build import MliBuild, MliUnavailable, build_mli, header_dirs

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


@pytest.fixture(scope="session")
def mli_builds() -> dict[tuple[str, str], MliBuild]:
    """The real MLI 2.x library built natively, {(ROUND_MODE, FULL_ACCU): MliBuild} for the four
    configurations; built once and cached across sessions (tests/support/mli_build.py)."""
    try:
        return build_mli()
    except MliUnavailable as reason:
        pytest.skip(str(reason))


def mli_cflags(target: str) -> list[str]:
    """-I flags of the real MLI headers for "2.0" / "1.1" / "1.0" (../shared/mli, or $MLITOOL_MLI_ROOT
    for 2.x), or skip the calling test when they are absent."""
    try:
        return [f"-I{d}" for d in header_dirs(target)]
    except MliUnavailable as reason:
        pytest.skip(str(reason))
