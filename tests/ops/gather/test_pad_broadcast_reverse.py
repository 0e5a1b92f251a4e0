"""Index gathers onto the `gather4` fallback C (issue 35): MIRROR_PAD (REFLECT, SYMMETRIC),
BROADCAST_TO and STRIDED_SLICE with a negative stride. tflite and float mode equal LiteRT's
reference kernels (int8, int16, float32), the gather4 layer makes the mli executor equal tflite
mode, and the emitted C on the real MLI 2.0.2 library equals the executor in the four builds, in
sa8 and fx16 (between a TANH and a RELU)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import activation, graph_model, int32_const, options

Q = (0.05, 3)


# name -> (op, input shape, constant inputs, options, output shape)
CASES = {
    "reflect": (
        "MIRROR_PAD",
        (1, 6, 5, 3),
        [[[0, 0], [2, 1], [1, 4], [0, 0]]],
        options("MirrorPadOptions", mode=0),
        (1, 9, 10, 3),
    ),
    "symmetric": (
        "MIRROR_PAD",
        (1, 6, 5, 3),
        [[[0, 0], [3, 0], [2, 5], [1, 1]]],
        options("MirrorPadOptions", mode=1),
        (1, 9, 12, 5),
    ),
    "broadcast_h": ("BROADCAST_TO", (1, 1, 5, 3), [[1, 4, 5, 3]], None, (1, 4, 5, 3)),
    "broadcast_wc": ("BROADCAST_TO", (1, 6, 1, 1), [[1, 6, 4, 3]], None, (1, 6, 4, 3)),
    "broadcast_rank2_to_4": ("BROADCAST_TO", (1, 3), [[1, 4, 2, 3]], None, (1, 4, 2, 3)),
    "broadcast_rank3_to_4": ("BROADCAST_TO", (1, 5, 1), [[1, 2, 5, 3]], None, (1, 2, 5, 3)),
    "slice_neg": (
        "STRIDED_SLICE",
        (1, 8, 6, 4),
        [[0, 0, 0, 0], [0, 0, 0, 0], [1, -2, 1, 1]],
        options("StridedSliceOptions", beginMask=15, endMask=15),
        (1, 4, 6, 4),
    ),
    "slice_neg_bounds": (
        "STRIDED_SLICE",
        (1, 8, 6, 4),
        [[0, 6, 5, 3], [1, 1, 0, 0], [1, -1, -2, -3]],
        options("StridedSliceOptions"),
        (1, 5, 3, 1),
    ),
    "slice_neg_shrink": (
        "STRIDED_SLICE",
        (1, 8, 6, 4),
        [[0, 0, 4, 0], [1, 0, 5, 0], [1, -1, 1, 1]],
        options("StridedSliceOptions", beginMask=10, endMask=10, shrinkAxisMask=4),
        (1, 8, 4),
    ),
}


def _model(tmp_path, name, dtype="int8", between=False):
    op, shape, consts, opts, out_shape = CASES[name]
    q = (1 / 128, 0) if between else Q  # TANH's int8 output parameters
    tensors = [activation(shape, dtype, q)] + [int32_const(c) for c in consts]
    tensors.append(activation(out_shape, dtype, q))
    out = len(tensors) - 1
    ops = [(op, list(range(out)), [out], opts)]
    graph_in, graph_out = 0, out
    if between:
        tensors += [activation(shape, dtype), activation(out_shape, dtype, q)]
        ops = [("TANH", [len(tensors) - 2], [0], None), *ops]
        ops.append(("RELU", [out], [len(tensors) - 1], None))
        graph_in, graph_out = len(tensors) - 2, len(tensors) - 1
    path = tmp_path / f"{name}_{dtype}{'_between' if between else ''}.tflite"
    versions = {"BROADCAST_TO": 3, "MIRROR_PAD": 2, "STRIDED_SLICE": 2}
    path.write_bytes(graph_model(tensors, ops, [graph_in], [graph_out], versions))
    return path


def _inputs(g, n=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        x = rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)
    else:
        info = np.iinfo(t.dtype)
        x = rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)
    return {g.inputs[0]: x}


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_and_float_mode_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    assert ref.shape[1:] == CASES[name][-1]
    modes = ("tflite", "float") if dtype == "float32" else ("tflite",)
    for mode in modes:
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_gather4_layer_equal_to_tflite_mode(name, tmp_path):
    g = read(_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [(la.kind, la.kernel) for la in model.layers] == [("fallback", "mlitool_gather4")]
    xs = _inputs(g, seed=1)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_reflect_pad_beyond_the_edge_is_refused(tmp_path):
    """REFLECT pads at most the dimension less one (TFLite's Prepare refuses more)."""
    case = CASES["reflect"]
    CASES["too_far"] = (
        case[0],
        case[1],
        [[[0, 0], [6, 0], [0, 0], [0, 0]]],
        case[3],
        (1, 12, 5, 3),
    )
    try:
        g = read(_model(tmp_path, "too_far")).main
    except UnsupportedError as exc:
        assert "outside 0..5" in str(exc)
    else:
        with pytest.raises(UnsupportedError, match="outside 0..5"):
            run_graph(g, _inputs(g), "tflite")
    finally:
        del CASES["too_far"]
