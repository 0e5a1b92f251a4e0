"""SVDF: tflite mode against LiteRT's integer kernel and float mode against its float kernel over
consecutive invocations (the state carries from one to the next), the `svdf8` fallback C on the
real MLI 2.0.2 library against the executor in the four builds over the same invocations, and
NAME_init starting a new stream."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mlitool.calibrate import collect_ranges
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from mlitool.plumbing.parallel import STREAM_BATCH, batch_size
from tests.support import runtime_harness as H
from tests.support.cli import run_main
from tests.support.fast_memory import least_budget
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}


def svdf_model(
    dtype: str,
    *,
    batch: int = 1,
    n_in: int = 8,
    units: int = 3,
    rank: int = 2,
    memory: int = 6,
    act: str | None = None,
    zp_in: int = 0,
    zp_out: int = 0,
    s_state: float = 1 / 2048,
    seed: int = 0,
) -> bytes:
    rng = np.random.default_rng(seed)
    filters = units * rank
    # LiteRT runs an integer SVDF only with a fused RELU (and applies none)
    act = act or ("NONE" if dtype == "float32" else "RELU")
    wf = rng.uniform(-1, 1, (filters, n_in)).astype(np.float32)
    wt = rng.uniform(-1, 1, (filters, memory)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, (units,)).astype(np.float32)
    svdf = options("SVDFOptions", rank=rank, fusedActivationFunction=ACT[act])
    state_shape = [batch, filters * memory]
    if dtype == "float32":
        tensors = [
            T([batch, n_in], "float32", name="x"),
            T([filters, n_in], "float32", data=wf, name="weights_feature"),
            T([filters, memory], "float32", data=wt, name="weights_time"),
            T([units], "float32", data=bias, name="bias"),
            T(state_shape, "float32", name="state", is_variable=True),
            T([batch, units], "float32", name="out"),
        ]
    else:
        s_in, s_wf, s_wt, s_out = 1 / 100, 1 / 127, 1 / 32767, 1 / 20
        tensors = [
            T([batch, n_in], "int8", name="x", scale=s_in, zero_point=zp_in),
            T([filters, n_in], "int8", data=np.round(wf / s_wf), scale=s_wf, name="wf"),
            T([filters, memory], "int16", data=np.round(wt / s_wt), scale=s_wt, name="wt"),
            T([units], "int32", data=np.round(bias / (s_state * s_wt)), scale=s_state * s_wt),
            T(state_shape, "int16", name="state", is_variable=True, scale=s_state),
            T([batch, units], "int8", name="out", scale=s_out, zero_point=zp_out),
        ]
    return graph_model(tensors, [("SVDF", [0, 1, 2, 3, 4], [5], svdf)], [0], [5])


INT8_CASES = {
    "plain": {},
    "rank1_zero_points": dict(rank=1, units=4, zp_in=-7, zp_out=5, memory=3),
    "saturating_state": dict(s_state=1 / 32768, n_in=16),
    "batch2": dict(batch=2),
}


def _inputs(g, n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-1, 1, (n, *t.shape)).astype(np.float32)}
    return {g.inputs[0]: rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)}


def _write(tmp_path, name: str, content: bytes):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("case", sorted(INT8_CASES))
def test_tflite_mode_equals_litert_over_consecutive_invocations(case, tmp_path):
    path = _write(tmp_path, case, svdf_model("int8", **INT8_CASES[case]))
    g = read(path).main
    xs = _inputs(g, 24)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)
    # the state matters: each sample alone, from a zero state, gives other outputs
    alone = np.concatenate(
        [
            run_graph(g, {k: v[i : i + 1] for k, v in xs.items()}, "tflite")[g.outputs[0]]
            for i in range(len(ref))
        ]
    )
    assert (alone != ref).any()
    assert (alone[0] == ref[0]).all()


@pytest.mark.parametrize("act", ["NONE", "RELU"])
def test_float_mode_equals_litert_over_consecutive_invocations(act, tmp_path):
    path = _write(tmp_path, f"f_{act}", svdf_model("float32", act=act, batch=2))
    g = read(path).main
    xs = _inputs(g, 20)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    for mode in ("float", "tflite"):
        ours = run_graph(g, xs, mode)[g.outputs[0]]
        # float32 sums in another order than LiteRT's
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    if act == "RELU":
        assert (ref == 0).any() and (ref > 0).any()


def test_integer_svdf_refuses_a_state_zero_point(tmp_path):
    content = svdf_model("int8")
    g = read(_write(tmp_path, "ok", content)).main
    g.tensors[g.ops[0].inputs[4]].quant.zero_point[0] = 3
    with pytest.raises(Exception, match="state zero point is 3"):
        run_graph(g, _inputs(g, 2), "tflite")


@pytest.mark.parametrize("case", ["plain", "rank1_zero_points", "saturating_state"])
def test_mli_executor_equals_tflite_mode(case, tmp_path):
    path = _write(tmp_path, case, svdf_model("int8", **INT8_CASES[case]))
    g = read(path).main
    xs = _inputs(g, 24)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_svdf8"]
    want = run_graph(g, xs, "tflite")[g.outputs[0]]
    for build in ("vpx", "em"):
        got, _ = run_mli(g, model, xs, arith_for(build))
        np.testing.assert_array_equal(got[g.outputs[0]], want)


def test_batch_of_streams_is_refused_by_convert(tmp_path):
    g = read(_write(tmp_path, "b2", svdf_model("int8", batch=2))).main
    with pytest.raises(Exception, match="has batch 2"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc")


@pytest.mark.parametrize("case", ["plain", "rank1_zero_points"])
def test_c_on_the_real_library_over_consecutive_runs(case, mli_builds, tmp_path):
    """The harness inits once and runs every sample in order, then the first again: the C's
    static state must follow the executor's stream through all of them."""
    path = _write(tmp_path, case, svdf_model("int8", **INT8_CASES[case]))
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("calibrated", [True, False])
def test_float_model_quantized_follows_float_mode(calibrated, tmp_path):
    """A float SVDF quantized by mlitool (state scale calibrated, or bounded from the input's
    range) stays within a few output steps of float mode over a stream of invocations."""
    path = _write(tmp_path, "f", svdf_model("float32", act="RELU"))
    g = read(path).main
    xs = _inputs(g, 32)
    ranges = collect_ranges(g, xs[g.inputs[0]])
    state = g.ops[0].inputs[4]
    assert state in ranges  # float mode leaves the state's values for calibration
    if not calibrated:
        del ranges[state]  # the bound from the input's range instead
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", ranges=ranges)
    want = run_graph(g, xs, "float")[g.outputs[0]]
    out = model.tensor(model.outputs[0])
    scale = float(out.real_scale()[0])
    got, _ = run_mli(g, model, xs, arith_for("vpx"))
    err = np.abs(got[g.outputs[0]].astype(np.float64) - want).max() / scale
    assert err <= (3 if calibrated else 8), err


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_float_model_quantized_c_on_the_real_library(fmt, mli_builds, tmp_path):
    """sa8, and fx16 with the conversions to and from SA8 around the fallback."""
    path = _write(tmp_path, "f", svdf_model("float32", act="RELU"))
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(1).uniform(-1, 1, (16, 1, 8)).astype(np.float32))
    conv_dir = tmp_path / "out"
    H.assert_bit_exact(
        H.run_case(path, fmt, conv_dir, mli_builds, mli_cflags("2.0"), calibration=calib)
    )


def test_init_zeroes_the_state(tmp_path):
    path = _write(tmp_path, "plain", svdf_model("int8"))
    conv = H.convert(path, "sa8", tmp_path / "out")
    source = (conv.out / f"{conv.name}.c").read_text()
    init = source[source.index(f"mli_status {conv.name}_init(") :]
    init = init[: init.index("\n}\n")]
    assert "_scratch[k] = 0;" in init


@pytest.mark.parametrize("budget", [64 * 1024, "least"])
def test_fast_memory_c_bit_exact_over_consecutive_runs(budget, mli_builds, tmp_path):
    """--fast-memory: the state stays in its own static RAM (not staged), NAME_init zeroes it,
    and the stream follows the executor's, at a roomy budget and at the least one."""
    path = _write(tmp_path, "plain", svdf_model("int8"))
    if budget == "least":
        budget = least_budget(H.convert(path, "sa8", tmp_path / "plain").model)
    conv = H.convert(path, "sa8", tmp_path / "out", fast_memory=budget)
    fm = conv.manifest["runtime"]["fast_memory"]
    objs = H.compile_objects(conv, [*mli_cflags("2.0"), f"-D{fm['macros']['check_operands']}"])
    results = H.check(conv, objs, mli_builds, H.random_inputs(conv.model, 12, 0))
    H.assert_bit_exact(results)
    source = (conv.out / f"{conv.name}.c").read_text()
    init = source[source.index(f"mli_status {conv.name}_init(") :]
    assert "_scratch[k] = 0;" in init[: init.index("\n}\n")]


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_emitted_c_compiles_as_cxx(tmp_path):
    path = _write(tmp_path, "plain", svdf_model("int8"))
    conv = H.convert(path, "sa8", tmp_path / "out")
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    cmd = [*cxx, *mli_cflags("2.0"), "-c", f"{conv.name}.c", "-o", "net.o"]
    res = subprocess.run(cmd, cwd=conv.out, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[:4000]


@pytest.mark.parametrize("mode", ["tflite", "mli"])
def test_run_takes_the_samples_as_one_stream(mode, tmp_path, capsys):
    """40 samples, more than one batch of an ordinary model (16), over two jobs: `run` gives
    LiteRT's 40 consecutive invocations, the state never restarted."""
    path = _write(tmp_path, "plain", svdf_model("int8"))
    g = read(path).main
    assert g.is_stream and batch_size(g) == STREAM_BATCH
    xs = _inputs(g, 40, seed=5)
    np.save(tmp_path / "x.npy", xs[g.inputs[0]])
    out = tmp_path / "y.npz"
    args = ["run", path, "-i", tmp_path / "x.npy", "--mode", mode, "--jobs", "2", "--npz", out]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    with np.load(out) as z:
        got = z[g.tensors[g.outputs[0]].name]
    np.testing.assert_array_equal(got, reference_outputs(path, g, xs)[g.outputs[0]])
