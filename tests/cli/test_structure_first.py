"""Op arity and options are checked right after reading, before any graph pass or statistic
(mlitool/tflite/validate_structure.py): the two internal errors a fuzz campaign found (issue 37)
are one line and exit 2 on every command, naming the file, the op and the field.

- an op with no outputs: a float16-weights model whose DEQUANTIZE lists no output reached the
  float island pass (`fuse_float_islands`), which reads every DEQUANTIZE's output;
- a stride of 0 in a convolution's or a pooling's options, on a model of dynamic batch: constant
  folding re-derives the shapes of run-time-shaped tensors with the op's shape check, which
  divides by the stride.

Both are files LiteRT refuses (checked here).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli.test_bad_input import run_main
from tests.support.tflite_build import T, graph_model, options


def _conv_options(**fields):
    base = dict(padding=0, strideW=1, strideH=1, dilationWFactor=1, dilationHFactor=1)
    return options("Conv2DOptions", **(base | fields))


def float16_model(tmp_path, deq_outputs=(2,)) -> str:
    """x [1,4,4,2] float32 -CONV_2D(DEQUANTIZE(w float16 [3,3,3,2]), bias)-> [1,4,4,3]."""
    rng = np.random.default_rng(5)
    tensors = [
        T([1, 4, 4, 2], dtype="float32", name="x"),
        T([3, 3, 3, 2], dtype="float16", name="w16", data=rng.standard_normal((3, 3, 3, 2))),
        T([3, 3, 3, 2], dtype="float32", name="w"),
        T([3], dtype="float32", name="b", data=np.array([0.5, -1.0, 2.0])),
        T([1, 4, 4, 3], dtype="float32", name="y"),
    ]
    ops = [
        ("DEQUANTIZE", [1], list(deq_outputs), None),
        ("CONV_2D", [0, 2, 3], [4], _conv_options()),
    ]
    path = tmp_path / "f16.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return str(path)


def dynamic_batch_model(tmp_path, conv=None, pool=None) -> str:
    """x [-1,8,8,2] int8 -CONV_2D(w [3,3,3,2], SAME)-> [1,8,8,3] -MAX_POOL_2D(2x2 /2)->
    [1,4,4,3]; `conv` / `pool`: option fields over those."""
    rng = np.random.default_rng(6)
    tensors = [
        T([1, 8, 8, 2], scale=0.05, name="x", shape_signature=[-1, 8, 8, 2]),
        T(
            [3, 3, 3, 2],
            scale=[0.01, 0.02, 0.03],
            zero_point=[0, 0, 0],
            name="w",
            data=rng.integers(-127, 128, (3, 3, 3, 2), dtype=np.int8),
        ),
        T(
            [3],
            dtype="int32",
            scale=[5e-4, 1e-3, 1.5e-3],
            zero_point=[0, 0, 0],
            name="b",
            data=np.array([10, -20, 30], np.int32),
        ),
        T([1, 8, 8, 3], scale=0.1, zero_point=-128, name="c", shape_signature=[-1, 8, 8, 3]),
        T([1, 4, 4, 3], scale=0.1, zero_point=-128, name="p", shape_signature=[-1, 4, 4, 3]),
    ]
    pool_fields = dict(padding=1, strideW=2, strideH=2, filterWidth=2, filterHeight=2)
    ops = [
        ("CONV_2D", [0, 1, 2], [3], _conv_options(**(conv or {}))),
        ("MAX_POOL_2D", [3], [4], options("Pool2DOptions", **(pool_fields | (pool or {})))),
    ]
    path = tmp_path / "dyn.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return str(path)


def _litert_refuses(path: str) -> None:
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    with pytest.raises((RuntimeError, ValueError)):
        it = litert.Interpreter(
            model_path=path,
            num_threads=1,
            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
        )
        it.allocate_tensors()
        it.invoke()


def _every_command_refuses(path: str, tmp_path, capsys, *mentions: str) -> None:
    """inspect, convert, run (tflite mode), verify, report and tune: exit 2, one line naming the
    file and `mentions`, nothing written."""
    npy = tmp_path / "in.npy"
    np.save(npy, np.zeros((1, 1, 4, 4, 2), np.float32))
    out = tmp_path / "out"
    commands = [
        ["inspect", path],
        ["convert", path, "--out", str(out)],
        ["run", path, "--mode", "tflite", "--input", str(npy), "--npz", str(out / "o.npz")],
        ["verify", path, "--out", str(out)],
        ["report", path, "--out", str(out)],
        ["tune", path, "--min-snr", "30", "--out", str(out)],
    ]
    for args in commands:
        code, stdout, err = run_main(args, capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, (args, err)
        assert lines[0].startswith(f"mlitool: error: {path}: malformed graph: "), lines[0]
        for m in mentions:
            assert m in lines[0], (args, lines[0])
    assert not out.exists() or not any(out.iterdir())


def test_the_two_models_are_valid(tmp_path, capsys):
    for path in (float16_model(tmp_path), dynamic_batch_model(tmp_path)):
        code, _, err = run_main(["inspect", path], capsys)
        assert code == 0, err
        out = str(tmp_path / "o")
        code, _, err = run_main(["convert", path, "--out", out, "--weights-only"], capsys)
        assert code == 0, err


def test_dequantize_without_outputs(tmp_path, capsys):
    path = float16_model(tmp_path, deq_outputs=())
    _litert_refuses(path)
    _every_command_refuses(path, tmp_path, capsys, "op 0 (DEQUANTIZE)", "has 0 outputs, expected 1")


@pytest.mark.parametrize(
    "where,field,key,label",
    [
        ("conv", "strideW", "stride_w", "op 0 (CONV_2D)"),
        ("conv", "strideH", "stride_h", "op 0 (CONV_2D)"),
        ("conv", "dilationWFactor", "dilation_w", "op 0 (CONV_2D)"),
        ("pool", "strideH", "stride_h", "op 1 (MAX_POOL_2D)"),
        ("pool", "strideW", "stride_w", "op 1 (MAX_POOL_2D)"),
    ],
)
def test_zero_stride_or_dilation(tmp_path, capsys, where, field, key, label):
    path = dynamic_batch_model(tmp_path, **{where: {field: 0}})
    _litert_refuses(path)
    _every_command_refuses(path, tmp_path, capsys, label, f"option {key} is 0, must be >= 1")


def test_negative_stride(tmp_path, capsys):
    path = dynamic_batch_model(tmp_path, pool={"strideW": -2})
    _litert_refuses(path)
    _every_command_refuses(path, tmp_path, capsys, "op 1 (MAX_POOL_2D)", "option stride_w is -2")


def test_pooling_window_wider_than_its_input_runs_as_litert(tmp_path, capsys):
    """A SAME pooling window of 65536 over 8 columns (fuzzed option values reach such files;
    LiteRT runs them, its windows clamped to the input; it refuses 2^20 and more) is no
    malformed option: inspect and convert take it, and tflite mode, which pools with the
    equivalent window no wider than twice the input (`windows.pool_geometry`; padding the
    input by 2^30 was a MemoryError), gives LiteRT's outputs."""
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    path = dynamic_batch_model(tmp_path, pool={"padding": 0, "filterWidth": 65536})
    x = np.random.default_rng(8).integers(-128, 128, (1, 8, 8, 2), dtype=np.int8)
    it = litert.Interpreter(
        model_path=path,
        num_threads=1,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    ref = it.get_tensor(it.get_output_details()[0]["index"])
    code, _, err = run_main(["inspect", path], capsys)
    assert code == 0, err
    code, _, err = run_main(["convert", path, "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    np.save(tmp_path / "x.npy", x[None])
    npz = tmp_path / "o.npz"
    args = ["run", path, "--mode", "tflite", "--input", str(tmp_path / "x.npy"), "--npz", str(npz)]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    np.testing.assert_array_equal(np.load(npz)["p"], ref[None])
