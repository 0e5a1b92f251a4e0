"""Graphs whose output or input list is empty (found by fuzzing: internal errors in `run`,
`verify` and `report`). LiteRT loads and runs both, so neither is malformed: `run` writes an .npz
without outputs (with --dump-layers, the layers) in every mode; a model without inputs has no
samples to run on: run, verify and report refuse it as unsupported (exit 4) in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.tflite_build import T, graph_model


def no_output_model(path):
    tensors = [
        T([1, 4], scale=[0.1], zero_point=[0], name="x"),
        T([1, 4], scale=[0.1], zero_point=[0], name="y"),
    ]
    path.write_bytes(graph_model(tensors, [("RELU", [0], [1], None)], [0], []))
    return path


def no_input_model(path):
    tensors = [
        T([1, 4], scale=[0.1], zero_point=[0], name="c", data=np.array([[-2, -1, 1, 2]], np.int8)),
        T([1, 4], scale=[0.1], zero_point=[0], name="y"),
    ]
    path.write_bytes(graph_model(tensors, [("RELU", [0], [1], None)], [], [1]))
    return path


def test_litert_runs_them(tmp_path):
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")

    def interpreter(path):
        it = litert.Interpreter(
            model_path=str(path), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF
        )
        it.allocate_tensors()
        return it

    it = interpreter(no_output_model(tmp_path / "no_out.tflite"))
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 4), np.int8))
    it.invoke()
    assert it.get_output_details() == []
    it = interpreter(no_input_model(tmp_path / "no_in.tflite"))
    it.invoke()
    assert it.get_input_details() == []
    assert it.get_tensor(it.get_output_details()[0]["index"]).tolist() == [[0, 0, 1, 2]]


@pytest.mark.parametrize("mode", ["mli", "float", "tflite"])
def test_run_writes_no_outputs(mode, tmp_path, capsys):
    from mlitool.cli.entry import main

    path = no_output_model(tmp_path / "m.tflite")
    q = np.arange(-6, 6).reshape(3, 1, 4)
    np.save(tmp_path / "x.npy", (q * 0.1).astype(np.float32))
    for dump in ([], ["--dump-layers"]):
        npz = tmp_path / f"out{len(dump)}.npz"
        with pytest.raises(SystemExit) as exc:
            main(
                [
                    "run",
                    str(path),
                    "--mode",
                    mode,
                    "--input",
                    str(tmp_path / "x.npy"),
                    "--npz",
                    str(npz),
                    "--json",
                    *dump,
                ]
            )
        out, err = capsys.readouterr()
        assert exc.value.code == 0, err
        summary = json.loads(out)
        assert summary["outputs"] == [] and summary["samples"] == 3
        with np.load(npz) as arrays:
            if not dump:
                assert list(arrays.keys()) == []
                continue
            relu = np.maximum(q, 0)  # the RELU layer, in the model's representation
            want = (relu * 0.1).astype(np.float32) if mode == "float" else relu.astype(np.int8)
            np.testing.assert_array_equal(arrays["y"], want)


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--mode", "tflite", "--input", "X"],
        ["run", "--mode", "mli", "--input", "X"],
        ["verify"],
        ["verify", "--input", "X"],
        ["report"],
    ],
)
def test_a_model_without_inputs_is_refused_as_unsupported(command, tmp_path, capsys):
    from mlitool.cli.entry import main

    path = no_input_model(tmp_path / "m.tflite")
    np.save(tmp_path / "x.npy", np.zeros((2, 1, 4), np.float32))
    argv = [
        command[0],
        str(path),
        *[str(tmp_path / "x.npy") if a == "X" else a for a in command[1:]],
        "-o",
        str(tmp_path / "out"),
    ]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 4
    assert err.strip().splitlines() == [
        (
            "mlitool: error: the model has no inputs to give samples for: running it (run, verify, "
            "report, calibration) needs at least one"
        )
    ]
