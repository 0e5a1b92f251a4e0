"""TRANSPOSE_CONV through the emitted runtime on the real MLI 2.0.2 library
(mli_krn_transpose_conv2d_hwcn_*): every layer bit-exact against the executor in the four
builds, for int8 models in sa8 (SAME and VALID, stride 2 and mixed strides, uneven TFLite
padding, fused ReLU / ReLU6 through cfg.relu, no bias, 2x2 and 4x4 kernels) and in fx16 /
fx8w16d, and for 16x8 models in fx16 / fx8w16d."""

from __future__ import annotations

import pytest

from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tconv_models import INT8_CASES, WIDE_CASES, tconv_model

CASES = [(f"int8_{n}", kw, "sa8") for n, kw in sorted(INT8_CASES.items())] + \
    [(f"int8_{n}", INT8_CASES[n], fmt) for n in ("same_s2", "valid_s2_relu")
     for fmt in ("fx16", "fx8w16d")] + \
    [(f"16x8_{n}", kw, fmt) for n, kw in sorted(WIDE_CASES.items()) for fmt in ("fx16", "fx8w16d")]


@pytest.mark.parametrize("name,kw,fmt", CASES, ids=[f"{n}-{f}" for n, _, f in CASES])
def test_transpose_conv_runtime_equals_executor(name, kw, fmt, mli_builds, tmp_path):
    path = tconv_model(tmp_path / f"{name}.tflite", **kw)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
