"""TRANSPOSE_CONV through the emitted runtime on the real MLI 2.0.2 library
(mli_krn_transpose_conv2d_hwcn_*): every layer bit-exact against the executor in the four
builds, for int8 models in sa8 (SAME and VALID, stride 2 and mixed strides, uneven TFLite
padding, fused ReLU / ReLU6 through cfg.relu, no bias, 2x2 and 4x4 kernels) and in fx16 /
fx8w16d, and for 16x8 models in fx16 / fx8w16d."""

from __future__ import annotations

import pytest

from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tconv_models import INT8_CASES, WIDE_CASES, decoder_model, tconv_model

CASES = (
    [(f"int8_{n}", kw, "sa8") for n, kw in sorted(INT8_CASES.items())]
    + [
        (f"int8_{n}", INT8_CASES[n], fmt)
        for n in ("same_s2", "valid_s2_relu")
        for fmt in ("fx16", "fx8w16d")
    ]
    + [
        (f"16x8_{n}", kw, fmt)
        for n, kw in sorted(WIDE_CASES.items())
        for fmt in ("fx16", "fx8w16d")
    ]
)


@pytest.mark.parametrize("name,kw,fmt", CASES, ids=[f"{n}-{f}" for n, _, f in CASES])
def test_transpose_conv_runtime_equals_executor(name, kw, fmt, mli_builds, tmp_path):
    path = tconv_model(tmp_path / f"{name}.tflite", **kw)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_decoder_block_writes_into_a_concatenation_view(mli_builds, tmp_path):
    """conv -> transpose conv -> concatenation with the block's input -> 1x1 conv: the
    transpose conv writes its output through the strides of a channel slice."""
    path = decoder_model(tmp_path / "decoder.tflite")
    conv = H.convert(path, "sa8", tmp_path / "c")
    tconv = next(t for t in conv.model.layers if t.kind == "transpose_conv2d")
    out = conv.model.tensors[tconv.outputs[0]]
    assert out.buffer and out.mem_stride[1] == 8  # a view, 8 channels apart
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
