"""Files LiteRT loads and runs are never called malformed (exit 2): mlitool converts them or
refuses them as unsupported (exit 4) naming the op (mlitool/tflite/validate.py, the reader).

Each model is built here and run by LiteRT first, so the test shows TFLite accepts it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli.test_bad_input import run_main
from tests.cli.test_malformed_graph import write_model
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, graph_model, options

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")


def litert_run(path, *inputs: np.ndarray) -> list[np.ndarray]:
    """LiteRT's reference kernels on one sample: the graph outputs."""
    it = litert.Interpreter(
        model_path=str(path),
        num_threads=1,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def unsupported(path, capsys, *mentions, args=()) -> dict:
    """convert exits 4 in one line naming `mentions`, never "malformed"; inspect exits 0 with no
    problem and lists the op as unsupported. Returns inspect's document."""
    code, _, err = run_main(
        ["convert", str(path), "--out", str(path.parent / "out"), *args], capsys
    )
    assert code == 4 and len(err.strip().splitlines()) == 1, err
    assert "malformed" not in err and all(m in err for m in mentions), err
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["problems"] == []
    return doc


# -- shapes TFLite computes at run time ----------------------------------------------------------

_W = (np.arange(96, dtype=np.float32).reshape(3, 32) - 48) / 64
_B = np.array([0.5, -0.25, 1.0], np.float32)


def _run_time_flatten(signatures: bool) -> bytes:
    """A Flatten + Dense whose RESHAPE target is computed at run time from a graph input (the
    batch, an int32 scalar): PACK(batch, -1) -> RESHAPE; the converter writes 1 for the unknown
    dimensions of the RESHAPE's output (static [1, 1], signature [-1, -1]). Without
    `signatures`, only the non-constant shape input says so. (A dynamic batch read by SHAPE is
    folded: tests/reader/test_constant_fold.py.)"""

    def sig(*dims):
        return list(dims) if signatures else None

    tensors = [
        T([1, 4, 4, 2], dtype="float32", name="x", shape_signature=sig(-1, 4, 4, 2)),
        T([], dtype="int32", name="batch"),
        T([], dtype="int32", name="minus_one", data=np.array(-1, np.int32)),
        T([2], dtype="int32", name="packed"),
        T([1, 1], dtype="float32", name="flat", shape_signature=sig(-1, -1)),
        T([3, 32], dtype="float32", name="w", data=_W),
        T([3], dtype="float32", name="b", data=_B),
        T([1, 3], dtype="float32", name="y", shape_signature=sig(-1, 3)),
    ]
    ops = [
        ("PACK", [1, 2], [3], options("PackOptions", valuesCount=2, axis=0)),
        ("RESHAPE", [0, 3], [4], None),
        ("FULLY_CONNECTED", [4, 5, 6], [7], options("FullyConnectedOptions")),
    ]
    return graph_model(tensors, ops, [0, 1], [7])


@pytest.mark.parametrize("signatures", [True, False], ids=["signature", "shape-input"])
def test_run_time_reshape_is_unsupported_not_malformed(signatures, tmp_path, capsys):
    path = tmp_path / "flatten.tflite"
    path.write_bytes(_run_time_flatten(signatures))
    x = (np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) - 10) / 8
    (y,) = litert_run(path, x, np.array(1, np.int32))
    np.testing.assert_allclose(y, x.reshape(1, 32) @ _W.T + _B, rtol=1e-6)
    # the batch fixed to 1: what stays unknown is the second dimension
    why = "shape signature [1, -1]" if signatures else "computed from the non-constant tensor 3"
    doc = unsupported(
        path,
        capsys,
        "op 1 (RESHAPE)",
        "has 1 elements, the input 32",
        "tensor 4 'flat' is only known at run time",
        why,
        args=["--weights-only"],
    )
    rows = {r["index"]: r for r in doc["ops"]}
    assert not rows[1]["supported"] and why in rows[1]["unsupported_reason"]
    assert (
        not rows[2]["supported"] and "weights [3, 32] do not fit" in rows[2]["unsupported_reason"]
    )


# -- empty tensors no op writes ------------------------------------------------------------------


def test_unwritten_empty_concat_input(tmp_path, capsys):
    """A [1, 0] input of a CONCATENATION that no op writes: TFLite needs no data for it."""
    path = tmp_path / "concat.tflite"
    path.write_bytes(
        graph_model(
            [
                T([1, 4], dtype="float32", name="x"),
                T([1, 0], dtype="float32", name="empty"),
                T([1, 4], dtype="float32", name="y"),
            ],
            [("CONCATENATION", [0, 1], [2], options("ConcatenationOptions", axis=1))],
            [0],
            [2],
        )
    )
    x = np.array([[1.5, -2.0, 0.25, 7.0]], np.float32)
    (y,) = litert_run(path, x)
    np.testing.assert_array_equal(y, x)
    unsupported(
        path,
        capsys,
        "op 0 (CONCATENATION)",
        "tensor 'empty' has no elements",
        args=["--weights-only"],
    )
    np.save(tmp_path / "x.npy", x[None])
    code, _, err = run_main(
        [
            "run",
            str(path),
            "--mode",
            "float",
            "--input",
            str(tmp_path / "x.npy"),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
        capsys,
    )
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"], y[None])


def test_unwritten_empty_shape_tensor(tmp_path, capsys):
    """A RESHAPE to a scalar by an empty shape tensor no op writes (as in BirdNET)."""
    path = tmp_path / "scalar.tflite"
    path.write_bytes(
        graph_model(
            [
                T([1, 1], dtype="float32", name="x"),
                T([0], dtype="int32", name="empty_shape"),
                T([], dtype="float32", name="y"),
            ],
            [("RESHAPE", [0, 1], [2], options("ReshapeOptions", newShape=[]))],
            [0],
            [2],
        )
    )
    (y,) = litert_run(path, np.array([[3.25]], np.float32))
    assert y.shape == () and y == np.float32(3.25)
    unsupported(
        path,
        capsys,
        "op 0 (RESHAPE)",
        "tensor 'empty_shape' has no elements",
        args=["--weights-only"],
    )


@pytest.mark.parametrize(
    "op, mentions",
    [
        ("CONCATENATION", ["op 0 (CONCATENATION)", "tensor 'empty' has no elements"]),
        ("RELU", ["graph input 'empty' has no elements (shape [1, 0])"]),  # nothing reads it
    ],
    ids=["read", "unread"],
)
def test_empty_graph_input_with_calibration(op, mentions, tmp_path, capsys):
    """A [1, 0] graph input: refused as unsupported naming the tensor before calibration runs
    the float model on it (was: an internal error taking the range of no values)."""
    reads = [0, 1] if op == "CONCATENATION" else [0]
    path = tmp_path / "empty_input.tflite"
    path.write_bytes(
        graph_model(
            [
                T([1, 4], dtype="float32", name="x"),
                T([1, 0], dtype="float32", name="empty"),
                T([1, 4], dtype="float32", name="y"),
            ],
            [
                (
                    op,
                    reads,
                    [2],
                    options("ConcatenationOptions", axis=1) if len(reads) == 2 else None,
                )
            ],
            [0, 1],
            [2],
        )
    )
    x = np.array([[1.5, -2.0, 0.25, 7.0]], np.float32)
    (y,) = litert_run(path, x, np.zeros((1, 0), np.float32))
    np.testing.assert_array_equal(y, x if op == "CONCATENATION" else np.maximum(x, 0))
    np.savez(tmp_path / "cal.npz", x=np.stack([x, -x]), empty=np.zeros((2, 1, 0), np.float32))
    for cmd in (["convert", str(path), "--out", str(tmp_path / "out")], ["verify", str(path)]):
        code, _, err = run_main([*cmd, "--calibration", str(tmp_path / "cal.npz")], capsys)
        assert code == 4 and len(err.strip().splitlines()) == 1, err
        assert all(m in err for m in mentions), err


# -- what TFLite runs, but mlitool does not convert -----------------------------------------------


@pytest.mark.parametrize("slot, channels", [(2, 3), (6, 5)], ids=["conv", "fc"])
def test_bias_of_rank_two_is_unsupported(slot, channels, tmp_path, capsys):
    """TFLite checks only a bias's element count: a [1, N] bias runs."""

    def edit(t, ops):
        old = t[slot]
        t[slot] = T(
            [1, channels],
            dtype="int32",
            scale=old.scale,
            zero_point=old.zero_point,
            axis=1,
            name=old.name,
            data=old.data.reshape(1, channels),
        )

    path = write_model(tmp_path, edit)
    one_d = write_model(tmp_path, name="one_d.tflite")
    x = np.random.default_rng(5).integers(-128, 128, (1, 4, 4, 2), dtype=np.int8)
    np.testing.assert_array_equal(litert_run(path, x)[0], litert_run(one_d, x)[0])
    op = "op 0 (CONV_2D)" if slot == 2 else "op 2 (FULLY_CONNECTED)"
    unsupported(
        path,
        capsys,
        op,
        f"bias of shape [1, {channels}]: mlitool takes a bias of shape [{channels}]",
    )


@pytest.mark.parametrize("factor", [0.98 * 2.0**30, 1.02 * 2.0**30, 1.5 * 2.0**31])
def test_rescale_factor_bound(factor, tmp_path, capsys):
    """TFLite saturates multipliers of 2^30 and more (QuantizeMultiplier: shift > 30), which
    `tflite` mode does not reproduce: refused as unsupported from 2^30 on; below, tflite mode
    equals LiteRT."""
    from mlitool.execute.reference.graph import run_graph
    from mlitool.pipeline import read

    def edit(t, ops):  # conv factor: input 0.05 x weights 0.03 (channel 2) / output
        t[3] = T(
            [1, 4, 4, 3],
            scale=float(np.float32(0.05) * np.float32(0.03)) / factor,
            zero_point=-128,
            name="conv_out",
        )

    path = write_model(tmp_path, edit)
    x = np.random.default_rng(1).integers(-128, 128, (1, 4, 4, 2), dtype=np.int8)
    litert_run(path, x)
    if factor < 2.0**30:
        g = read(path).main
        ref = reference_outputs(path, g, {0: x[None]})
        ours = run_graph(g, {0: x[None]}, "tflite", keep=True)
        for t in (3, 4, 7, 8):  # every op's output
            np.testing.assert_array_equal(ours[t], ref[t])
        code, _, err = run_main(["convert", str(path), "--out", str(tmp_path / "out")], capsys)
        assert code == 0, err
    else:
        unsupported(
            path,
            capsys,
            "op 0 (CONV_2D)",
            "tensor 3 'conv_out'",
            "rescale factor",
            "is 2^30 or more",
        )
