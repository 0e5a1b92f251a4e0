"""The ARC HS code table (mlitool/data/mli_code_arc_hs.json, tools/measure_mli_code.py) holds
every registered fallback kernel, so the footprint counts no fallback C as 0 bytes; and its
entries are what the tool measures from today's C (cross-compiled: skips without
gcc-12-arc-linux-gnu, fails when CI is set)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support import arc_image
from tests.support.paths import ROOT, in_ci


def _kernels():
    from mlitool import op_families
    from mlitool.mli.kinds import fallback_kernels

    op_families.load()
    return fallback_kernels()


def test_every_fallback_kernel_has_measured_code():
    from mlitool.footprint.image import code_table

    measured = code_table()["fallback"]
    kernels = _kernels()
    assert sorted(set(kernels) - set(measured)) == []
    assert all(measured[k] > 0 for k in kernels)
    # the fixed-point helpers' share, which a model using two such kernels counts once
    assert (
        0
        < measured["fixedpoint_helpers"]
        < min(measured[k] for k, fb in kernels.items() if fb.fixedpoint)
    )


@pytest.mark.parametrize(
    "names", [("mlitool_svdf8",), ("mlitool_gather4",), ("mlitool_update_slice",)]
)
def test_entries_match_the_tool(names, tmp_path):
    """A kernel with a state field (svdf8), one whose C changed after the first table
    (gather4: 4-byte elements) and one added with the others: measured again, same bytes."""
    try:
        library = arc_image.build_mli()
    except arc_image.ArcUnavailable as e:
        if in_ci():
            pytest.fail(f"{e}; CI is set and .ci/run installs the ARC cross compiler")
        pytest.skip(str(e))
    from mlitool.footprint.image import code_table

    spec = importlib.util.spec_from_file_location("measure", ROOT / "tools" / "measure_mli_code.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    kernels = _kernels()
    for name in names:
        got = tool._fallback_bytes([kernels[name]], tmp_path / name, library)
        assert got == code_table()["fallback"][name], name
