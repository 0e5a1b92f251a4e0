"""int16 reductions (16x8 models: MEAN beyond H and W, SUM, REDUCE_MAX, REDUCE_MIN) on the
`reduce16` fallback: tflite mode equals LiteRT (reference kernels; SUM: builtin, see
test_reduce.py) on random inputs over the whole int16 range under several scales, the mli
executor equals tflite mode where the scales are powers of two (FX16 holds them exactly), and
the emitted C on the real MLI 2.0.2 library equals the executor in the four builds (fx16,
between two MLI layers)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reduce_reference
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

# name -> (op, input shape, axes, keep_dims)
CASES = {
    "gap1d": ("MEAN", (1, 12, 6), [1], False),  # GlobalAveragePooling1D
    "channel_mean": ("MEAN", (1, 4, 5, 6), [-1], True),
    "mean_h_c": ("MEAN", (1, 4, 5, 6), [3, 1], False),
    "sum_last": ("SUM", (1, 7, 5), [-1], True),
    "max_time": ("REDUCE_MAX", (1, 9, 6), [1], False),
    "min_hw": ("REDUCE_MIN", (1, 4, 5, 6), [1, 2], True),
}
# (input scale, output scale); zero points are 0 (TFLite requires it for int16). The last
# three are powers of two: FX16 holds them as they are. MAX / MIN: equal scales only.
QUANT = [(0.05, 0.02), (0.001, 0.003), (2.0**-10, 2.0**-12), (2.0**-12, 2.0**-8), (2.0**-9,) * 2]
POW2 = QUANT[2:]


def _out_shape(shape, axes, keep):
    red = {a % len(shape) for a in axes}
    if keep:
        return [1 if i in red else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in red]


def _quant(case, qs=QUANT):
    extreme = CASES[case][0] in ("REDUCE_MAX", "REDUCE_MIN")
    return [q for q in qs if q[0] == q[1]] if extreme else qs


def _model(tmp_path, case: str, q, relus=False):
    """The case's op on int16 tensors; `relus`: RELU -> OP -> RELU (the fallback between two
    MLI layers)."""
    op, shape, axes, keep = CASES[case]
    out = _out_shape(shape, axes, keep)
    tin, tout = (dict(dtype="int16", scale=[s], zero_point=[0]) for s in q)
    ts = [T(list(shape), **tin), T(out, **tout), T([len(axes)], "int32", data=np.array(axes))]
    ops = [(op, [0, 2], [1], options("ReducerOptions", keepDims=keep))]
    inputs, outputs = [0], [1]
    if relus:
        ts += [T(list(shape), **tin), T(out, **tout)]
        ops = [("RELU", [3], [0], None), *ops, ("RELU", [1], [4], None)]
        inputs, outputs = [3], [4]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(graph_model(ts, ops, inputs, outputs))
    return path


def _random(g, n=48, seed=0):
    shape = (n, *g.tensors[g.inputs[0]].shape)
    rng = np.random.default_rng(seed)
    return {g.inputs[0]: rng.integers(-32768, 32768, shape).astype(np.int16)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tflite_mode_equals_litert(case, tmp_path):
    for k, q in enumerate(_quant(case)):
        path = _model(tmp_path, case, q)
        g = read(path).main
        xs = _random(g, seed=k)
        ref = reduce_reference(path, g, xs)
        ours = run_graph(g, xs, "tflite")[g.outputs[0]]
        np.testing.assert_array_equal(ours, ref.reshape(ours.shape), err_msg=str(q))


@pytest.mark.parametrize("case", sorted(CASES))
def test_mli_mode_equals_tflite_mode(case, tmp_path):
    for k, q in enumerate(_quant(case, POW2)):
        g = read(_model(tmp_path, case, q)).main
        model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
        (layer,) = model.layers
        assert (layer.kind, layer.kernel) == ("fallback", "mlitool_reduce16")
        xs = _random(g, seed=k)
        ours, _ = run_mli(g, model, xs, arith_for("vpx"))
        want = run_graph(g, xs, "tflite")[g.outputs[0]]
        np.testing.assert_array_equal(ours[g.outputs[0]], want, err_msg=str(q))


@pytest.mark.parametrize(
    "case, q", [("gap1d", 0), ("mean_h_c", 3), ("sum_last", 2), ("max_time", 4), ("min_hw", 4)]
)
def test_fallback_c_on_the_real_library(case, q, mli_builds, tmp_path):
    path = _model(tmp_path, case, QUANT[q], relus=True)
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))
