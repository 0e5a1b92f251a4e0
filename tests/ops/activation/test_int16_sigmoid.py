"""LOGISTIC and TANH on int16 (16x8 models) in `tflite` mode: TFLite's reference int16 kernels
(a 256-entry sigmoid table in Q0.16 with linear interpolation), equal to LiteRT on all 65536
inputs for power-of-two input scales (the converter's) and general ones; what TFLite's Prepare()
refuses, tflite mode refuses too."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import oracle
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.params import checked_log2
from mlitool.ops.activation.sigmoid16 import SIGMOID_TABLE, input_rescale
from mlitool.pipeline import read
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, single_op_model

ALL = np.arange(-(1 << 15), 1 << 15, dtype=np.int64)


def one_op(path, op, in_scale, out_scale=1 / 32768, zp=0, n=ALL.size):
    path.write_bytes(
        single_op_model(
            op,
            [T([1, n], dtype="int16", scale=[in_scale], zero_point=[zp])],
            [T([1, n], dtype="int16", scale=[out_scale], zero_point=[0])],
        )
    )
    return path


def _every_input(path):
    """tflite mode and LiteRT on each of the 65536 int16 values."""
    g = read(path).main
    x = {g.inputs[0]: ALL.astype(np.int16).reshape(1, 1, -1)}
    ours = run_graph(g, x, "tflite")[g.outputs[0]]
    ref = reference_outputs(path, g, x)[g.outputs[0]]
    return ours.ravel(), ref.ravel()


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize(
    "scale",
    # powers of two (TANH takes 2^-12 and 2^-11 as such, LOGISTIC 2^-12), the converter's
    # scales of tests/corpus/efficientnet_like_16x8 (7.03e-7: a 21-bit shift), and others
    [2**-12, 2**-11, 2**-10, 2**-15, 2**-8, 7.0343935e-7, 3.2368887e-5, 1e-4, 0.0123, 0.3],
    ids=lambda s: f"{s:.3g}",
)
def test_every_int16_input_equals_litert(op, scale, tmp_path):
    ours, ref = _every_input(one_op(tmp_path / "m.tflite", op, scale))
    assert ours.dtype == np.int16
    np.testing.assert_array_equal(ours, ref)
    assert len(np.unique(ref)) > 30  # not a constant


def test_table_read_back_from_litert(tmp_path):
    """The 256 entries as LiteRT's own TANH gives them: at input scale 2 / 12288 the kernel
    takes x to 2x in the table's scale (multiplier 2^14, shift 13), so at x = 128 k the
    interpolation weight is 0 and the output is entry k - 32768. 44 entries are not
    round(65536 sigmoid(k / 24)): the table cannot be a formula."""
    assert input_rescale(2 / 12288, (0, 1)) == (1 << 14, 13)
    _, ref = _every_input(one_op(tmp_path / "t.tflite", "TANH", 2 / 12288))
    k = np.arange(256)
    np.testing.assert_array_equal(ref[128 * k + (1 << 15)].astype(np.int64) + 32768, SIGMOID_TABLE)
    formula = np.round(65536 / (1 + np.exp(-k / 24)))
    assert np.count_nonzero(formula != SIGMOID_TABLE) == 44


@pytest.mark.parametrize(
    "op,out_scale,zp",
    [
        ("LOGISTIC", 1 / 32768 * 1.0001, 0),  # within CheckedLog2, not == 1/32768
        ("LOGISTIC", 1 / 256, 0),
        ("TANH", 1 / 16384, 0),
        ("TANH", 1 / 32768, 3),
    ],
)
def test_what_tflite_refuses_is_refused(op, out_scale, zp, tmp_path):
    path = one_op(tmp_path / "r.tflite", op, 1 / 4096, out_scale, zp, n=8)
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    assert oracle.cannot_load(path) is not None
    g = read(path).main
    with pytest.raises(UnsupportedError, match=f"int16 {op} with .*TFLite"):
        run_graph(g, {g.inputs[0]: np.zeros((1, 1, 8), np.int16)}, "tflite")


def test_tanh_takes_a_2_to_the_minus_11_scale_as_a_power_of_two():
    """TANH's Prepare() takes input scales 2^-12 and 2^-11 as powers of two (3 << shift),
    LOGISTIC only 2^-12; a scale just off a power of two gets the 15-bit multiplier."""
    assert input_rescale(2**-11, (0, 1)) == (6, 0)
    assert input_rescale(2**-12, (0,)) == (3, 0)
    assert input_rescale(2**-11, (0,)) == (24576, 12)
    assert input_rescale(2**-12 * 1.01, (0,)) == (24821, 13)


def test_checked_log2():
    """TFLite's CheckedLog2: a power of two within 1e-3 of its rounded float32 log2; a zero
    scale (an all-zero constant's) is none, rather than an overflow."""
    assert checked_log2(2**-15) == (-15, True)
    assert checked_log2(2**-15 * 1.0006) == (-15, True)  # log2 off by 8.7e-4
    assert checked_log2(2**-15 * 1.0008) == (-15, False)  # 1.15e-3
    assert checked_log2(0.0) == (0, False)
