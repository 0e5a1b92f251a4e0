"""Where the tests find the project, its samples, the real MLI headers they compile against, and the
shared reference material (../shared), which may be absent in a fresh clone.

Missing shared material skips the tests that need it on a user's clone; when `CI` is set it fails
them instead, so a CI run that lost ../shared cannot pass by skipping every golden and real-model test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared"))
SAMPLES = ROOT / "samples"


def in_ci() -> bool:
    """CI services (and .ci/run) set CI; "", "0" and "false" mean a user's machine."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def missing_shared(reason: str) -> NoReturn:
    """Skip the calling test, or fail it when `in_ci()`."""
    if in_ci():
        pytest.fail(
            f"{reason}; CI is set, so missing shared reference material is a failure", pytrace=False
        )
    pytest.skip(reason)


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test when it is not there (a fresh clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        missing_shared(
            f"{path} is absent: the shared reference material sits beside the project "
            "(set MLITOOL_SHARED to point elsewhere)"
        )
    return path


def shared_models(pattern: str = "**/*.tflite") -> list[Path]:
    """The models under ../shared/models matching `pattern`, for parametrizing at import: none on a
    fresh clone (pytest skips the empty parameter set); in CI a missing folder stops collection."""
    models = SHARED / "models"
    if not models.is_dir():
        if in_ci():
            raise FileNotFoundError(
                f"{models} is absent and CI is set: the shared reference material "
                "must sit beside the project (or set MLITOOL_SHARED)"
            )
        return []
    return sorted(models.glob(pattern))


def mli_unavailable(reason: Exception) -> NoReturn:
    """Skip the calling test for a MliUnavailable: a missing MLI tree as missing shared material
    (a failure in CI), a missing build tool always as a skip."""
    from tests.support.mli_build import MliTreeMissing

    if isinstance(reason, MliTreeMissing):
        missing_shared(str(reason))
    pytest.skip(str(reason))


def mli_cflags(mli_version: str) -> list[str]:
    """-I flags of the real MLI headers for "2.0" / "1.1" / "1.0" (../shared/mli, or $MLITOOL_MLI_ROOT
    for 2.x), or skip the calling test when they are absent."""
    from tests.support.mli_build import MliUnavailable, header_dirs

    try:
        return [f"-I{d}" for d in header_dirs(mli_version)]
    except MliUnavailable as reason:
        mli_unavailable(reason)
