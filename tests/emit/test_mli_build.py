"""The MLI build harness gives each ROUND_MODE x FULL_ACCU configuration it names, and it links.

The probe (tests/support/c/mli_build_probe.c) calls two kernels whose outputs tell the builds apart.
Expected values, worked out by hand from ../shared/docs/mli-arithmetic.md:
- eltwise_mul_fx16 of a (frac 1) by 1 (frac 0) into frac 0 is asr_rnd(a, 1): the halves 0.5, 1.5,
  2.5, -0.5 round toward +inf with ROUND_MODE=UP (1, 2, 3, 0) and to even with CONVERGENT (0, 2, 2, 0).
- fully_connected_sa8 with the input at its zero point outputs the bias b scaled by 1/1024
  (out_mul 16384, shift 24). FULL_ACCU=ON: round(b / 1024). OFF: the multiplier is renormalised
  (m 16384, shift 24, pre-shift 3) and b loses its low 2 bits first (17 significant bits):
  b = 74239 -> 74236 -> asr_rnd(., 3) = 9280 -> 9280 / 128 = 72.5; 74241 -> 74240 -> 72.5;
  74240 -> 72.5. ON: 72.499, 72.501, 72.5.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.mli_build import CONFIGS, build_mli
from tests.support.paths import mli_cflags

PROBE = Path(__file__).parents[1] / "support" / "c" / "mli_build_probe.c"
CC = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]

EXPECTED = {  # (ROUND_MODE, FULL_ACCU): (eltwise_mul outputs, fully_connected outputs)
    ("UP", "OFF"): ([1, 2, 3, 0], [73, 73, 73]),
    ("UP", "ON"): ([1, 2, 3, 0], [72, 73, 73]),
    ("CONVERGENT", "OFF"): ([0, 2, 2, 0], [72, 72, 72]),
    ("CONVERGENT", "ON"): ([0, 2, 2, 0], [72, 73, 72]),
}
MLI_STATUS_OK = 0


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}_ACCU_{c[1]}")
def test_build_links_and_computes_its_configuration(config, mli_builds, tmp_path):
    build = mli_builds[config]
    exe = tmp_path / "probe"
    subprocess.run(CC + build.cflags + [str(PROBE), "-o", str(exe)] + build.ldflags, check=True)
    lines = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines()
    results = [[int(v) for v in line.split()] for line in lines]
    assert [r[0] for r in results] == [MLI_STATUS_OK, MLI_STATUS_OK]
    assert (results[0][1:], results[1][1:]) == EXPECTED[config]


def test_second_build_reuses_the_cache(mli_builds):
    stamps = {cfg: b.library.stat().st_mtime_ns for cfg, b in mli_builds.items()}
    again = build_mli()
    assert {cfg: b.library.stat().st_mtime_ns for cfg, b in again.items()} == stamps
    assert len({b.library for b in again.values()}) == len(CONFIGS)


@pytest.mark.parametrize("mli_version", ["2.0", "1.1", "1.0"])
def test_real_headers_compile_as_c99(mli_version, tmp_path):
    src = tmp_path / "t.c"
    src.write_text('#include "mli_api.h"\nint main(void) { return (int)MLI_STATUS_OK; }\n')
    subprocess.run(
        CC + mli_cflags(mli_version) + ["-c", str(src), "-o", str(tmp_path / "t.o")], check=True
    )
