"""Session fixtures shared by the test folders."""

from __future__ import annotations

from mlitool.plumbing.parallel import one_blas_thread

one_blas_thread()  # as the CLI does, before numpy loads: in-process runs equal --jobs N

import pytest  # noqa: E402

from mlitool import op_families  # noqa: E402

op_families.load()  # as the entry points do: tests call the stages directly

from tests.support.mli_build import MliBuild, MliUnavailable, build_mli  # noqa: E402
from tests.support.paths import mli_unavailable  # noqa: E402


@pytest.fixture(scope="session")
def mli_builds() -> dict[tuple[str, str], MliBuild]:
    """The real MLI 2.x library built natively, {(ROUND_MODE, FULL_ACCU): MliBuild} for the four
    configurations; built once and cached across sessions (tests/support/mli_build.py)."""
    try:
        return build_mli()
    except MliUnavailable as reason:
        mli_unavailable(reason)
