"""A CONCATENATION that reads one tensor more than once (`tf.concat([r, r])`): every occurrence
is copied from the tensor's own buffer. Before, the first was written in place into the output
and the others copied from that slice, and mli_mov_tensor_sync refused the copy (status 3: the
two slices' containers overlap), in sa8 and fx16 alike."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def _model(path, dtype: str):
    q = {"scale": 1 / 64, "zero_point": -3} if dtype == "int8" else {}
    path.write_bytes(
        graph_model(
            [
                T([1, 8, 4], dtype, name="x", **q),
                T([1, 8, 4], dtype, name="r", **q),
                T([1, 8, 12], dtype, name="y", **q),
            ],
            [
                ("RELU", [0], [1], None),
                ("CONCATENATION", [1, 0, 1], [2], options("ConcatenationOptions", axis=2)),
            ],
            [0],
            [2],
        )
    )
    return path


def test_each_occurrence_is_copied_from_its_own_buffer(tmp_path):
    g = read(_model(tmp_path / "m.tflite", "int8")).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    copies = [la for la in model.layers if la.kernel == "mli_mov_tensor_sync"]
    assert [la.inputs for la in copies] == [["r"], ["x"], ["r"]]  # x: a model input
    assert model.tensor("r").buffer is None


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_c_on_the_real_library(dtype, fmt, mli_builds, tmp_path):
    path = _model(tmp_path / "m.tflite", dtype)
    rng = np.random.default_rng(3)
    cal = None
    if dtype == "float32":
        cal = tmp_path / "cal.npy"
        np.save(cal, rng.uniform(-1, 1, (16, 1, 8, 4)).astype(np.float32))
    results = H.run_case(
        path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)
