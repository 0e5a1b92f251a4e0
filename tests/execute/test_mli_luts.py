"""The LUTs we compute equal the tables MLI 2.0.2's `mli_krn_*_create_lut` produced."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.kernels import luts
from tests.support.paths import shared_path


@pytest.fixture(scope="module")
def golden_luts():
    with np.load(shared_path("golden", "luts.npz")) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", ["sigm", "tanh", "softmax", "l2_normalize"])
def test_lut_matches_mli(golden_luts, name):
    table = luts.lut(name)
    want = golden_luts
    assert table.data.dtype == np.int16
    np.testing.assert_array_equal(table.data, want[f"{name}_data"])
    assert str(want[f"{name}_type"]) == "fx16" and table.el_type.name == "FX16"
    assert table.length == int(want[f"{name}_length"])
    assert table.in_frac_bits == int(want[f"{name}_in_frac_bits"])
    assert table.out_frac_bits == int(want[f"{name}_out_frac_bits"])
    assert table.input_offset == int(want[f"{name}_input_offset"])
    assert table.output_offset == int(want[f"{name}_output_offset"])


def test_lookup_interpolates_between_entries():
    # sigm table has 4 input frac bits: an input with 5 frac bits halfway between entries 160
    # (x = 0, 16384) and 161 (x = 1/16, 16896) gives their mean.
    table = luts.lut("sigm")
    assert int(table.data[160]) == 16384 and int(table.data[161]) == 16896
    assert luts.lookup(np.array([1]), table, 5, "up").tolist() == [16640]
