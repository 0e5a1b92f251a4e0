"""The fixed-point element-wise kernels at the limits MLI puts on their output shift (bits - 1 for
min / max, 2 * bits - 1 for add / sub / mul, mli_krn_eltwise_ref.h), against the real MLI 2.0.2
library: shifts one below, at, one above and far above each limit, on every fx8 operand pair and
on fx16 extremes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.mli.kernels import eltwise
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor, Role

PROBE = Path(__file__).parents[1] / "support" / "c" / "eltwise_fx_probe.c"
CC = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"]


def _operands(bits: int) -> tuple[np.ndarray, np.ndarray]:
    if bits == 8:  # every pair
        a, b = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
        return a.ravel(), b.ravel()
    edges = np.array([-32768, -32767, -16385, -16384, -1, 0, 1, 16383, 16384, 32766, 32767])
    a, b = np.meshgrid(edges, edges, indexing="ij")
    rng = np.random.default_rng(3)
    return (
        np.concatenate([a.ravel(), rng.integers(-32768, 32768, 3000)]),
        np.concatenate([b.ravel(), rng.integers(-32768, 32768, 3000)]),
    )


def _cases() -> list[tuple[str, int, int, int, int, bool]]:
    """(op, bits, frac1, frac2, frac_out, whether the output shift is past its limit), the shift
    one below, at, one above and far above the limit."""
    cases = []
    for bits in (8, 16):
        for post in (bits - 2, bits - 1, bits, bits + 3):  # min / max: f1 - fo (MLI: f1 == f2)
            cases += [(op, bits, post - 2, post - 2, -2, post > bits - 1) for op in ("max", "min")]
        for post in (2 * bits - 2, 2 * bits - 1, 2 * bits, 2 * bits + 4):
            past = post > 2 * bits - 1
            cases.append(("mul", bits, post // 2, post - post // 2 - 1, -1, past))
            # add / sub: in1 aligned up by bits + 2 (its sums reach 2^(2 bits)), post = f2 - fo
            cases += [(op, bits, 0, bits + 2, bits + 2 - post, past) for op in ("add", "sub")]
    return cases


def _tensor(frac_bits: int, bits: int, n: int) -> MliTensor:
    el_type = ElType.FX8 if bits == 8 else ElType.FX16
    return MliTensor(
        name="t",
        role=Role.ACTIVATION,
        shape=(n,),
        el_type=el_type,
        frac_bits=frac_bits,
        mem_stride=(1,),
    )


@pytest.fixture(scope="module")
def probes(mli_builds, tmp_path_factory) -> dict[str, Path]:
    """The probe linked against the UP and the CONVERGENT build (FX kernels ignore FULL_ACCU)."""
    out = {}
    for round_mode in ("UP", "CONVERGENT"):
        build = mli_builds[(round_mode, "OFF")]
        exe = tmp_path_factory.mktemp("probe") / f"eltwise_{round_mode}"
        subprocess.run(CC + build.cflags + [str(PROBE), "-o", str(exe)] + build.ldflags, check=True)
        out[round_mode] = exe
    return out


@pytest.mark.parametrize("round_mode", ["UP", "CONVERGENT"])
def test_fx_eltwise_shift_limits_equal_mli(round_mode, probes):
    cases = _cases()
    lines = []
    for op, bits, f1, f2, fo, _ in cases:
        a, b = _operands(bits)
        lines += [
            f"{op} {bits} {f1} {f2} {fo} {a.size}",
            " ".join(map(str, a)),
            " ".join(map(str, b)),
        ]
    done = subprocess.run(
        [str(probes[round_mode])],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    results = done.stdout.splitlines()
    assert len(results) == len(cases)
    arith = Arith(round_mode.lower(), False)
    past_nonzero = 0
    for (op, bits, f1, f2, fo, past), line in zip(cases, results):
        status, *values = (int(v) for v in line.split())
        assert status == 0, (op, bits, f1, f2, fo)
        want = np.array(values)
        past_nonzero += past * int(np.count_nonzero(want))
        a, b = _operands(bits)
        dtype = np.int8 if bits == 8 else np.int16
        got = eltwise.eltwise(
            op,
            a.astype(dtype)[None],
            b.astype(dtype)[None],
            _tensor(f1, bits, a.size),
            _tensor(f2, bits, a.size),
            _tensor(fo, bits, a.size),
            arith,
        )
        bad = np.flatnonzero(got[0] != want)
        assert bad.size == 0, (
            f"{op} fx{bits} frac {f1}, {f2} -> {fo}: {bad.size} differ, e.g. "
            f"{a[bad[0]]}, {b[bad[0]]} -> {got[0][bad[0]]}, MLI {want[bad[0]]}"
        )
    assert past_nonzero > 1000  # shifts past the limit leave values an unlimited shift zeroes
