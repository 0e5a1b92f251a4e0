"""Where the tests find the project, its samples, the real MLI headers they compile against, and the
shared reference material (../shared), which may be absent in a fresh clone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
SAMPLES = ROOT / "samples"


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test when it is not there (a fresh clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared reference material sits beside the project in CI "
                    "(set MLITOOL_SHARED to point elsewhere)")
    return path


def mli_cflags(mli_version: str) -> list[str]:
    """-I flags of the real MLI headers for "2.0" / "1.1" / "1.0" (../shared/mli, or $MLITOOL_MLI_ROOT
    for 2.x), or skip the calling test when they are absent."""
    from tests.support.mli_build import MliUnavailable, header_dirs

    try:
        return [f"-I{d}" for d in header_dirs(mli_version)]
    except MliUnavailable as reason:
        pytest.skip(str(reason))
