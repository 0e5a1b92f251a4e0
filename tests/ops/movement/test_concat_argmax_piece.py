"""CONCATENATION of an int32 ARG_MAX output (MLI's argmax writes [1, 1] for TFLite's [1]) between
int32 constants, as TF writes run-time start indices `[0, argmax, 2, 0]`: the piece is seen in
its own shape, so its slice of the output has the output's rank (was an internal error). tflite
mode and the executor equal LiteRT; the C equals the executor on the real MLI 2.0.2 library in
the four builds."""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, int32_const, options


def test_argmax_between_constants(mli_builds, tmp_path):
    tensors = [
        T([1, 8], "int8", [0.05], 3),
        int32_const(1),
        T([1], "int32"),
        int32_const([0]),
        int32_const([2, 0]),
        T([4], "int32"),
    ]
    ops = [
        ("ARG_MAX", [0, 1], [2], options("ArgMaxOptions", outputType=2)),
        ("CONCATENATION", [3, 2, 4], [5], options("ConcatenationOptions", axis=0)),
    ]
    path = tmp_path / "concat_argmax.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    g = read(path).main
    xs = {0: np.random.default_rng(3).integers(-128, 128, (6, 1, 8)).astype(np.int8)}
    ref = reference_outputs(path, g, xs)[5]
    assert (ref[:, 0] == 0).all() and (ref[:, 2:] == [2, 0]).all() and len(set(ref[:, 1])) > 1
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[5], ref)
    conv = H.convert(path, "sa8", tmp_path / "out")
    np.testing.assert_array_equal(run_mli(g, conv.model, xs, arith_for("vpx"))[0][5], ref)
    batches = H.join_inputs(H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, xs))
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )
