"""A Keras Flatten + Dense exported with a dynamic batch (SHAPE -> STRIDED_SLICE -> PACK ->
RESHAPE, refused before constant folding): converted, its emitted C run on the real MLI 2.0.2
library in the four builds equals `run --mode mli` bit for bit at every layer."""

from __future__ import annotations

import pytest

from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import dynamic_flatten_model


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_dynamic_flatten_runs_on_the_real_library(fmt, mli_builds, tmp_path):
    path = tmp_path / "flatten.tflite"
    path.write_bytes(dynamic_flatten_model("int8"))
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
