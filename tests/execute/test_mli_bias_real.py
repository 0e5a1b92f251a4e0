"""FULL_ACCU OFF keeps about 16 significant bits of an sa8 bias (mli-arithmetic.md section 5). The
golden vectors meet biases wider than 16 bits in two files only, so this test makes golden-style
cases where every bias needs 17 to 24 bits and decides the output: fully connected layers whose
accumulators the bias almost cancels, output scale 1/32 of an accumulator unit. The real MLI 2.0.2
library (all four builds) computes them at test time; the executor must agree bit for bit."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from mlitool.execute.mli.kernels import mac
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor, Role
from tests.support.mli_build import CONFIGS, RUN_OPTIONS

CASES = 6
OUT_CHANNELS = 64
# (scale, scale_frac_bits): in and weights 2^-7, so the bias (accumulator) unit is 2^-14; out 2^-9.
IN_Q, W_Q, BIAS_Q, OUT_Q = (16384, 21), (16384, 21), (16384, 28), (16384, 23)


def _sa(name: str, data: np.ndarray, el_type: ElType, q: tuple[int, int], zp: int = 0) -> MliTensor:
    strides = tuple(int(np.prod(data.shape[i + 1 :])) for i in range(data.ndim))
    return MliTensor(
        name=name,
        role=Role.ACTIVATION,
        shape=data.shape,
        el_type=el_type,
        data=data,
        mem_stride=strides,
        zero_point=np.array([zp], np.int16),
        scale=np.array([q[0]], np.int16),
        scale_frac_bits=np.array([q[1]], np.int8),
        dim=-1,
    )


def make_case(rng: np.random.Generator) -> dict:
    """One fully connected case whose biases all need more than 16 bits and land the outputs
    inside int8: bias = -accumulator + a small offset."""
    k = int(rng.integers(64, 320))
    in_zp = -100
    x = rng.integers(0, 128, k).astype(np.int8)  # x - zp in [100, 227]
    w_max = rng.integers(20, 128, OUT_CHANNELS)
    sign = np.where(rng.random(OUT_CHANNELS) < 0.5, -1, 1)
    w = (rng.integers(0, 1 << 16, (k, OUT_CHANNELS)) % (w_max + 1) * sign).astype(np.int8)
    acc = (x.astype(np.int64) - in_zp) @ w.astype(np.int64)
    bias = (-acc + rng.integers(-3500, 3500, OUT_CHANNELS)).astype(np.int32)
    assert (np.abs(bias) >= 1 << 16).all() and (np.abs(bias) < 1 << 24).all()
    return {
        "x": x,
        "in": _sa("in", x, ElType.SA8, IN_Q, in_zp),
        "weights": _sa("weights", w, ElType.SA8, W_Q),
        "bias": _sa("bias", bias, ElType.SA32, BIAS_Q),
        "out": _sa(
            "out", np.zeros(OUT_CHANNELS, np.int8), ElType.SA8, OUT_Q, int(rng.integers(-20, 20))
        ),
    }


def _c_array(ctype: str, name: str, values: np.ndarray) -> str:
    return f"static {ctype} {name}[] = {{{', '.join(str(int(v)) for v in values.reshape(-1))}}};\n"


def _c_tensor(name: str, t: MliTensor, ctype: str, el: str) -> str:
    dims = "".join(
        f"    {name}.shape[{i}] = {s}; {name}.mem_stride[{i}] = {st};\n"
        for i, (s, st) in enumerate(zip(t.shape, t.mem_stride))
    )
    return (
        f"    mli_tensor {name};\n    memset(&{name}, 0, sizeof {name});\n"
        f"    {name}.data.mem.{ctype} = {name}_data; {name}.data.capacity = sizeof {name}_data;\n"
        f"    {name}.rank = {len(t.shape)}; {name}.el_type = {el};\n{dims}"
        f"    {name}.el_params.sa.type = MLI_EL_PARAM_SC16_ZP16; {name}.el_params.sa.dim = -1;\n"
        f"    {name}.el_params.sa.zero_point.mem.i16 = {int(t.zero_point[0])};\n"
        f"    {name}.el_params.sa.scale.mem.i16 = {int(t.scale[0])};\n"
        f"    {name}.el_params.sa.scale_frac_bits.mem.i8 = {int(t.scale_frac_bits[0])};\n"
    )


def driver(cases: list[dict]) -> str:
    """A C program that runs every case through mli_krn_fully_connected_sa8_sa8_sa32 and writes
    the int8 outputs to stdout; exits 1 on a status other than MLI_STATUS_OK."""
    arrays, calls = [], []
    for i, c in enumerate(cases):
        names = {role: f"c{i}_{role}" for role in ("in", "weights", "bias", "out")}
        arrays += [
            _c_array("int8_t", f"{names['in']}_data", c["x"]),
            _c_array("int8_t", f"{names['weights']}_data", c["weights"].data),
            _c_array("int32_t", f"{names['bias']}_data", c["bias"].data),
            f"static int8_t {names['out']}_data[{OUT_CHANNELS}];\n",
        ]
        calls.append(
            "  {\n"
            + _c_tensor(names["in"], c["in"], "pi8", "MLI_EL_SA_8")
            + _c_tensor(names["weights"], c["weights"], "pi8", "MLI_EL_SA_8")
            + _c_tensor(names["bias"], c["bias"], "pi32", "MLI_EL_SA_32")
            + _c_tensor(names["out"], c["out"], "pi8", "MLI_EL_SA_8")
            + f"    if (mli_krn_fully_connected_sa8_sa8_sa32(&{names['in']}, &{names['weights']}, "
            f"&{names['bias']}, &cfg, &{names['out']}) != MLI_STATUS_OK) return 1;\n"
            + f"    fwrite({names['out']}_data, 1, {OUT_CHANNELS}, stdout);\n  }}\n"
        )
    return (
        '#include <stdio.h>\n#include <string.h>\n#include "mli_api.h"\n\n'
        + "".join(arrays)
        + "\nint main(void) {\n  mli_fully_connected_cfg cfg;\n  memset(&cfg, 0, sizeof cfg);\n"
        + "".join(calls)
        + "  return 0;\n}\n"
    )


@pytest.fixture(scope="module")
def wide_bias_cases() -> list[dict]:
    rng = np.random.default_rng(16)
    return [make_case(rng) for _ in range(CASES)]


@pytest.fixture(scope="module")
def library_outputs(
    mli_builds, wide_bias_cases, tmp_path_factory
) -> dict[tuple[str, str], np.ndarray]:
    """{(ROUND_MODE, FULL_ACCU): outputs (CASES, OUT_CHANNELS)} of the real library."""
    tmp = tmp_path_factory.mktemp("wide_bias")
    (tmp / "driver.c").write_text(driver(wide_bias_cases))
    some = next(iter(mli_builds.values()))
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            *some.cflags,
            "-c",
            "driver.c",
            "-o",
            "driver.o",
        ],
        cwd=tmp,
        check=True,
    )
    outputs = {}
    for cfg, build in mli_builds.items():
        exe = tmp / f"driver_{build.name}"
        subprocess.run(["gcc", "driver.o", *build.ldflags, "-o", str(exe)], cwd=tmp, check=True)
        run = subprocess.run([str(exe)], capture_output=True, check=True)
        outputs[cfg] = np.frombuffer(run.stdout, np.int8).reshape(CASES, OUT_CHANNELS)
    return outputs


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c[0]}_ACCU_{c[1]}")
def test_wide_bias_matches_the_library(cfg, wide_bias_cases, library_outputs):
    arith = Arith(RUN_OPTIONS[cfg[0]], cfg[1] == "ON")
    want = library_outputs[cfg]
    inside = 0
    for i, c in enumerate(wide_bias_cases):
        got = mac.fully_connected(
            c["x"][None], c["in"], c["weights"], c["bias"], c["out"], {}, arith
        )[0]
        np.testing.assert_array_equal(got, want[i], err_msg=f"case {i}")
        inside += int(((want[i] > -128) & (want[i] < 127)).sum())
    assert inside > CASES * OUT_CHANNELS * 0.9  # the bias decides outputs inside int8


def test_the_truncation_shows(library_outputs):
    """The cases discriminate: FULL_ACCU OFF (bias truncated) differs from ON in most outputs."""
    for round_mode in ("UP", "CONVERGENT"):
        differ = library_outputs[(round_mode, "OFF")] != library_outputs[(round_mode, "ON")]
        assert differ.mean() > 0.5
