"""Malformed graphs (mlitool/tflite/validate.py): every command that lowers or executes refuses them with
exit 2 and one line naming the file, the op (index and type) and the tensor; `inspect` lists them,
but for an op's arity and options (validate_structure.py), which it refuses with the same line.
Each is a file LiteRT refuses to load or run (checked here, but where it crashes the process).
Files LiteRT runs are converted (an output shape the op recomputes) or refused as unsupported
(exit 4).

Each case edits one field of a small, valid int8 model built here:
    input [1,4,4,2] -CONV_2D(w [3,3,3,2], bias [3], SAME)-> [1,4,4,3] -MAX_POOL_2D(2x2 /2)->
    [1,2,2,3] -FULLY_CONNECTED(w [5,12], bias [5])-> [1,5] -SOFTMAX-> [1,5]
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli.test_bad_input import run_main
from tests.support.tflite_build import Buf, T, build, fc_spec, graph_model, options


def _parts():
    rng = np.random.default_rng(3)
    tensors = [
        T([1, 4, 4, 2], scale=0.05, zero_point=-3, name="input"),
        T(
            [3, 3, 3, 2],
            scale=[0.01, 0.02, 0.03],
            zero_point=[0, 0, 0],
            axis=0,
            name="conv_w",
            data=rng.integers(-127, 128, (3, 3, 3, 2), dtype=np.int8),
        ),
        T(
            [3],
            dtype="int32",
            scale=[0.0005, 0.001, 0.0015],
            zero_point=[0, 0, 0],
            name="conv_b",
            data=np.array([10, -20, 30], np.int32),
        ),
        T([1, 4, 4, 3], scale=0.1, zero_point=-128, name="conv_out"),
        T([1, 2, 2, 3], scale=0.1, zero_point=-128, name="pool_out"),
        T(
            [5, 12],
            scale=0.02,
            zero_point=0,
            name="fc_w",
            data=rng.integers(-127, 128, (5, 12), dtype=np.int8),
        ),
        T(
            [5],
            dtype="int32",
            scale=0.002,
            zero_point=0,
            name="fc_b",
            data=np.arange(5, dtype=np.int32),
        ),
        T([1, 5], scale=0.2, zero_point=5, name="logits"),
        T([1, 5], scale=1 / 256, zero_point=-128, name="probs"),
    ]
    ops = [
        [
            "CONV_2D",
            [0, 1, 2],
            [3],
            options(
                "Conv2DOptions",
                padding=0,
                strideW=1,
                strideH=1,
                dilationWFactor=1,
                dilationHFactor=1,
            ),
        ],
        [
            "MAX_POOL_2D",
            [3],
            [4],
            options(
                "Pool2DOptions", padding=1, strideW=2, strideH=2, filterWidth=2, filterHeight=2
            ),
        ],
        ["FULLY_CONNECTED", [4, 5, 6], [7], options("FullyConnectedOptions")],
        ["SOFTMAX", [7], [8], options("SoftmaxOptions", beta=1.0)],
    ]
    return tensors, ops


def write_model(tmp_path, edit=None, name="m.tflite"):
    tensors, ops = _parts()
    inputs, outputs = [0], [8]
    if edit is not None:
        edited = edit(tensors, ops)
        if edited is not None:
            inputs, outputs = edited
    path = tmp_path / name
    path.write_bytes(graph_model(tensors, [tuple(op) for op in ops], inputs, outputs))
    return path


def litert_outputs(path, x: np.ndarray) -> list[np.ndarray]:
    """LiteRT's reference kernels on one sample (raises where LiteRT refuses the file)."""
    litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    it = litert.Interpreter(
        model_path=str(path),
        num_threads=1,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


_X = np.random.default_rng(7).integers(-128, 128, (1, 4, 4, 2), dtype=np.int8)


def refused(tmp_path, capsys, edit, *mentions, litert=True, structural=False):
    """convert and run --mode tflite both exit 2 with one line naming the file and `mentions`;
    inspect exits 0 and lists the same problem, or, for a `structural` one (arity, options:
    validate_structure.py, checked before inspect's statistics), exits 2 with the same line.
    LiteRT refuses the file (unless not `litert`: it crashes on it)."""
    path = write_model(tmp_path, edit)
    if litert:
        with pytest.raises((RuntimeError, ValueError)):
            litert_outputs(path, _X)
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((1, 1, 4, 4, 2), np.float32))
    lines = []
    for args in (
        ["convert", str(path), "--out", str(tmp_path / "out")],
        [
            "run",
            str(path),
            "--mode",
            "tflite",
            "--input",
            str(npy),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
    ):
        code, out, err = run_main(args, capsys)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        line = err.strip()
        assert line.startswith(f"mlitool: error: {path}: malformed graph: "), line
        for m in mentions:
            assert m in line, line
        lines.append(line)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    if structural:
        assert (code, out, err.strip()) == (2, "", lines[0])
        return lines[0]
    assert code == 0
    problems = json.loads(out)["problems"]
    assert problems and lines[0].split("malformed graph: ")[1].startswith(problems[0])
    return lines[0]


def unsupported(tmp_path, capsys, edit, *mentions):
    """LiteRT runs the file; convert and run --mode tflite exit 4 in one line naming
    `mentions`, never "malformed"; inspect lists no problem."""
    path = write_model(tmp_path, edit)
    litert_outputs(path, _X)
    npy = tmp_path / "x.npy"
    np.save(npy, _X[None])
    for args in (
        ["convert", str(path), "--out", str(tmp_path / "out")],
        [
            "run",
            str(path),
            "--mode",
            "tflite",
            "--input",
            str(npy),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
    ):
        code, _, err = run_main(args, capsys)
        assert code == 4 and len(err.strip().splitlines()) == 1, err
        assert "malformed" not in err and all(m in err for m in mentions), err
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["problems"] == [], err


def normalised(tmp_path, capsys, edit, warning):
    """LiteRT runs the file, recomputing a stored output shape: convert takes the computed shape
    with one `warning` and exits 0; run --mode tflite gives LiteRT's outputs."""
    path = write_model(tmp_path, edit)
    (ref,) = litert_outputs(path, _X)
    code, _, err = run_main(["convert", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 0 and err.count(warning) == 1, err
    np.save(tmp_path / "x.npy", _X[None])
    code, _, err = run_main(
        [
            "run",
            str(path),
            "--mode",
            "tflite",
            "--input",
            str(tmp_path / "x.npy"),
            "--npz",
            str(tmp_path / "o.npz"),
        ],
        capsys,
    )
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["probs"], ref[None])


def test_the_base_model_is_valid(tmp_path, capsys):
    path = write_model(tmp_path)
    code, out, err = run_main(["convert", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["problems"] == []


# -- arity ---------------------------------------------------------------------------------------


def test_op_without_outputs(tmp_path, capsys):
    def edit(t, ops):
        ops[3][2] = []
        return [0], [7]

    refused(tmp_path, capsys, edit, "op 3 (SOFTMAX)", "has 0 outputs, expected 1", structural=True)


def test_conv_missing_weights(tmp_path, capsys):
    def edit(t, ops):
        ops[0][1] = [0]

    refused(
        tmp_path, capsys, edit, "op 0 (CONV_2D)", "has 1 inputs, expected 2 to 3", structural=True
    )


def test_required_input_omitted(tmp_path, capsys):
    def edit(t, ops):
        ops[2][1] = [4, -1, 6]

    refused(
        tmp_path, capsys, edit, "op 2 (FULLY_CONNECTED)", "omits a required input", structural=True
    )


# -- order, cycles, writers, outputs (structural: the passes walk producers and readers) ----------


def test_self_loop(tmp_path, capsys):
    def edit(t, ops):
        ops[3][1] = [8]

    refused(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 8 'probs'",
        "is written by op 3 (SOFTMAX), which runs at or after this op",
        structural=True,
    )


def test_cycle_between_two_ops(tmp_path, capsys):
    def edit(t, ops):
        ops[0][1] = [4, 1, 2]  # conv reads the pool's output, the pool reads the conv's

    refused(
        tmp_path,
        capsys,
        edit,
        "op 0 (CONV_2D)",
        "tensor 4 'pool_out'",
        "op 1 (MAX_POOL_2D)",
        structural=True,
    )


def test_tensor_never_written(tmp_path, capsys):
    def edit(t, ops):
        t.append(T([1, 5], scale=0.2, zero_point=5, name="orphan"))
        ops[3][1] = [9]

    refused(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 9 'orphan'",
        "no op writes it",
        structural=True,
    )


def test_two_ops_write_one_tensor(tmp_path, capsys):
    def edit(t, ops):
        ops[3][2] = [7]
        return [0], [7]

    refused(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 7 'logits'",
        "also written by op 2 (FULLY_CONNECTED)",
        structural=True,
    )


def test_op_writes_a_graph_input(tmp_path, capsys):
    def edit(t, ops):
        ops[3][2] = [0]
        return [0], [7]

    refused(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 0 'input'",
        "writes a graph input",
        structural=True,
    )


def test_graph_output_never_written(tmp_path, capsys):
    """LiteRT invokes it, but has no data for the output."""

    def edit(t, ops):
        del ops[3]  # the op removed, its output still a graph output

    refused(tmp_path, capsys, edit, "tensor 8 'probs'", "graph output, but no op writes it")


# -- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field,key",
    [("strideH", "stride_h"), ("strideW", "stride_w"), ("dilationHFactor", "dilation_h")],
)
def test_conv_stride_or_dilation_zero(tmp_path, capsys, field, key):
    def edit(t, ops):
        ops[0][3].fields[field] = 0

    refused(
        tmp_path,
        capsys,
        edit,
        "op 0 (CONV_2D)",
        f"option {key} is 0, must be >= 1",
        structural=True,
    )


def test_pool_filter_negative(tmp_path, capsys):
    """LiteRT runs it (it checks strides, not filters): unsupported."""

    def edit(t, ops):
        ops[1][3].fields["filterWidth"] = -2

    unsupported(tmp_path, capsys, edit, "op 1 (MAX_POOL_2D)", "option filter_w is -2, must be >= 1")


def test_options_table_of_the_wrong_type(tmp_path, capsys):
    def edit(t, ops):
        ops[1][3] = options("Conv2DOptions", padding=1, strideW=2, strideH=2)

    refused(
        tmp_path,
        capsys,
        edit,
        "op 1 (MAX_POOL_2D)",
        "has options of type Conv2DOptions, expected Pool2DOptions",
        structural=True,
    )


def test_options_table_missing(tmp_path, capsys):
    def edit(t, ops):
        ops[1][3] = None

    refused(tmp_path, capsys, edit, "op 1 (MAX_POOL_2D)", "has no options table", structural=True)


# -- shapes ----------------------------------------------------------------------------------------


def test_conv_bias_length(tmp_path, capsys):
    def edit(t, ops):
        t[2] = T(
            [4],
            dtype="int32",
            scale=0.001,
            zero_point=0,
            name="conv_b",
            data=np.arange(4, dtype=np.int32),
        )

    refused(
        tmp_path,
        capsys,
        edit,
        "op 0 (CONV_2D)",
        "tensor 2 'conv_b'",
        "bias of shape [4], expected [3]",
    )


def test_conv_weights_channels(tmp_path, capsys):
    def edit(t, ops):
        t[1] = T(
            [3, 3, 3, 3],
            scale=0.01,
            zero_point=0,
            name="conv_w",
            data=np.ones((3, 3, 3, 3), np.int8),
        )

    refused(
        tmp_path,
        capsys,
        edit,
        "op 0 (CONV_2D)",
        "tensor 1 'conv_w'",
        "weights have 3 input channels, the input 2",
    )


def test_conv_output_shape(tmp_path, capsys):
    def edit(t, ops):
        t[3] = T([1, 8, 2, 3], scale=0.1, zero_point=-128, name="conv_out")  # computes [1,4,4,3]

    normalised(
        tmp_path,
        capsys,
        edit,
        "warning: op 0 (CONV_2D): tensor 3 'conv_out' is stored "
        "with shape [1, 8, 2, 3]; the op computes [1, 4, 4, 3]",
    )


def test_recomputed_shapes_that_leave_the_fc_rows_short(tmp_path, capsys):
    """Stride 2 computes [1, 2, 4, 3] (stored [1, 4, 4, 3]), the pool then [1, 1, 2, 3]: 6
    elements for weights of 12 columns. LiteRT runs it (0 rows, an empty output)."""

    def edit(t, ops):
        ops[0][3].fields["strideH"] = 2

    path = write_model(tmp_path, edit)
    assert litert_outputs(path, _X)[0].shape == (0, 5)
    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 2 (FULLY_CONNECTED)",
        "tensor 5 'fc_w'",
        "weights [5, 12] do not fit an input of shape [1, 1, 2, 3]",
    )


def test_fc_weights_do_not_fit_the_input(tmp_path, capsys):
    """LiteRT runs 12 // 7 = 1 row of 7 of the 12 elements."""

    def edit(t, ops):
        t[5] = T([5, 7], scale=0.02, zero_point=0, name="fc_w", data=np.ones((5, 7), np.int8))

    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 2 (FULLY_CONNECTED)",
        "tensor 5 'fc_w'",
        "weights [5, 7] do not fit an input of shape [1, 2, 2, 3]",
        "TFLite reads 7 of its 12 elements",
    )


def test_fc_weights_not_fitting_with_keep_num_dims(tmp_path, capsys):
    """keep_num_dims: TFLite requires the input's last dimension to be the weights' columns."""

    def edit(t, ops):
        t[5] = T([5, 6], scale=0.02, zero_point=0, name="fc_w", data=np.ones((5, 6), np.int8))
        t[7] = T([1, 2, 2, 5], scale=0.2, zero_point=5, name="logits")
        t[8] = T([1, 2, 2, 5], scale=1 / 256, zero_point=-128, name="probs")
        ops[2][3] = options("FullyConnectedOptions", keepNumDims=True)

    refused(
        tmp_path,
        capsys,
        edit,
        "op 2 (FULLY_CONNECTED)",
        "tensor 5 'fc_w'",
        "weights [5, 6] do not fit an input of shape [1, 2, 2, 3]",
    )


def test_fc_output_rows(tmp_path, capsys):
    def edit(t, ops):
        t[7] = T([1, 4], scale=0.2, zero_point=5, name="logits")

    normalised(
        tmp_path,
        capsys,
        edit,
        "warning: op 2 (FULLY_CONNECTED): tensor 7 'logits' is "
        "stored with shape [1, 4]; the op computes [1, 5]",
    )


def test_fc_output_of_more_rows(tmp_path, capsys):
    """The last dimension right, the row count not: [2, 5] for the input's 1 row; the logits
    take the computed [1, 5], the graph output keeps its stored shape: unsupported."""

    def edit(t, ops):
        t[7] = T([2, 5], scale=0.2, zero_point=5, name="logits")
        t[8] = T([2, 5], scale=1 / 256, zero_point=-128, name="probs")

    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 8 'probs'",
        "has shape [2, 5], but the input's is [1, 5]",
        "mlitool does not change the shape of a graph output",
    )


def test_fc_graph_output_rows(tmp_path, capsys):
    def edit(t, ops):
        t[7] = T([3, 5], scale=0.2, zero_point=5, name="logits")
        return [0], [7, 8]

    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 2 (FULLY_CONNECTED)",
        "tensor 7 'logits'",
        "has shape [3, 5], but the op computes 1 row(s) of 5",
        "mlitool does not change the shape of a graph output",
    )


def test_op_writes_a_constant(tmp_path, capsys):
    """LiteRT crashes (SIGSEGV) on this file."""

    def edit(t, ops):
        t[4] = T(
            [1, 2, 2, 3],
            scale=0.1,
            zero_point=-128,
            name="pool_out",
            data=np.zeros((1, 2, 2, 3), np.int8),
        )

    refused(
        tmp_path,
        capsys,
        edit,
        "op 1 (MAX_POOL_2D)",
        "tensor 4 'pool_out'",
        "writes a graph input or constant tensor",
        litert=False,
        structural=True,
    )


@pytest.mark.parametrize("axis", [2, -4])
def test_concat_axis_outside_the_rank(tmp_path, capsys, axis):
    """LiteRT refuses these axes (concatenation.cc: axis >= 0, axis < rank after adding the
    rank to a negative one); each wraps modulo the rank 2 to axis 0 or 1, along which the shapes
    fit. axis -2 (as 0) is valid."""

    def edit(t, ops):
        t += [T([2, 5], scale=0.2, zero_point=5, name="both")]
        ops.append(["CONCATENATION", [7, 7], [9], options("ConcatenationOptions", axis=axis)])
        return [0], [8, 9]

    refused(
        tmp_path,
        capsys,
        edit,
        "op 4 (CONCATENATION)",
        "tensor 7 'logits'",
        f"axis {axis} is outside the rank 2 of input 0",
    )


def test_concat_output_shape(tmp_path, capsys):
    def edit(t, ops):
        t += [T([2, 5], scale=0.2, zero_point=5, name="both")]
        ops.append(["CONCATENATION", [7, 7], [9], options("ConcatenationOptions", axis=1)])
        return [0], [8, 9]

    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 4 (CONCATENATION)",
        "tensor 9 'both'",
        "has shape [2, 5], but the op computes [1, 10]",
        "mlitool does not change the shape of a graph output",
    )


def test_concat_negative_axis_is_valid(tmp_path, capsys):
    def edit(t, ops):
        t += [T([2, 5], scale=0.2, zero_point=5, name="both")]
        ops.append(["CONCATENATION", [7, 7], [9], options("ConcatenationOptions", axis=-2)])
        return [0], [8, 9]

    path = write_model(tmp_path, edit)
    code, out, err = run_main(["inspect", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["problems"] == [], err


def test_depthwise_multiplier(tmp_path, capsys):
    def edit(t, ops):
        t[1] = T(
            [1, 3, 3, 3],
            scale=0.01,
            zero_point=0,
            name="conv_w",
            data=np.ones((1, 3, 3, 3), np.int8),
        )
        ops[0][0] = "DEPTHWISE_CONV_2D"
        ops[0][3] = options(
            "DepthwiseConv2DOptions",
            padding=0,
            strideW=1,
            strideH=1,
            depthMultiplier=1,
            dilationWFactor=1,
            dilationHFactor=1,
        )

    refused(
        tmp_path,
        capsys,
        edit,
        "op 0 (DEPTHWISE_CONV_2D)",
        "tensor 1 'conv_w'",
        "depthwise weights [1, 3, 3, 3] do not fit an input of 2 channels",
    )


def test_softmax_output_shape(tmp_path, capsys):
    def edit(t, ops):
        t[8] = T([1, 6], scale=1 / 256, zero_point=-128, name="probs")

    unsupported(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 8 'probs'",
        "has shape [1, 6], but the input's is [1, 5]",
        "mlitool does not change the shape of a graph output",
    )


def test_pool_output_shape(tmp_path, capsys):
    def edit(t, ops):
        t[4] = T([1, 2, 6, 1], scale=0.1, zero_point=-128, name="pool_out")

    normalised(
        tmp_path,
        capsys,
        edit,
        "warning: op 1 (MAX_POOL_2D): tensor 4 'pool_out' is "
        "stored with shape [1, 2, 6, 1]; the op computes [1, 2, 2, 3]",
    )


def test_element_types_differ(tmp_path, capsys):
    def edit(t, ops):
        t[8] = T([1, 5], dtype="float32", name="probs")

    refused(
        tmp_path,
        capsys,
        edit,
        "op 3 (SOFTMAX)",
        "tensor 8 'probs'",
        "has type float32, the op's input int8",
    )


# -- quantization ---------------------------------------------------------------------------------


@pytest.mark.parametrize("zp", [128, -129, -(2**63)])
def test_zero_point_outside_its_type(tmp_path, capsys, zp):
    """LiteRT runs these (zero points are int64 in its tensors): unsupported."""

    def edit(t, ops):
        t[4] = T([1, 2, 2, 3], scale=0.1, zero_point=zp, name="pool_out")

    unsupported(
        tmp_path,
        capsys,
        edit,
        "tensor 4 'pool_out'",
        f"zero point {zp} is outside the int8 range [-128, 127]",
    )


@pytest.mark.parametrize("scale", [0.0, -0.5, float("nan")])
def test_scale_not_finite_positive(tmp_path, capsys, scale):
    def edit(t, ops):
        t[7] = T([1, 5], scale=scale, zero_point=5, name="logits")

    # LiteRT aborts the process on a negative scale
    refused(
        tmp_path,
        capsys,
        edit,
        "tensor 7 'logits'",
        f"quantization scale {scale!r}",
        litert=not scale < 0,
    )


def test_infinite_scale(tmp_path, capsys):
    """LiteRT's scale checks pass an infinite output scale: it runs the file."""

    def edit(t, ops):
        t[7] = T([1, 5], scale=float("inf"), zero_point=5, name="logits")

    unsupported(tmp_path, capsys, edit, "tensor 7 'logits'", "quantization scale inf")


def test_bias_of_the_wrong_type(tmp_path, capsys):
    def edit(t, ops):
        t[6] = T([5], dtype="float32", name="fc_b", data=np.arange(5, dtype=np.float32))

    refused(
        tmp_path,
        capsys,
        edit,
        "op 2 (FULLY_CONNECTED)",
        "tensor 6 'fc_b'",
        "bias of type float32, expected int32",
    )


def test_constant_with_nan(tmp_path, capsys):
    def edit(t, ops):
        t[5] = T(
            [5, 12],
            dtype="float32",
            name="fc_w",
            data=np.where(np.arange(60).reshape(5, 12) == 7, np.nan, 0.5).astype(np.float32),
        )

    refused(tmp_path, capsys, edit, "tensor 5 'fc_w'", "constant data holds 1 NaN or inf value(s)")


def test_control_characters_in_names_stay_on_one_line(tmp_path, capsys):
    """The reader quotes names as they are; the CLI escapes what would break the line."""
    spec = fc_spec()
    spec.tensors[2].name = "bi\ras\x1e"
    spec.buffers[2] = Buf(b"\0" * 3)
    path = tmp_path / "ctl.tflite"
    path.write_bytes(build(spec))
    code, out, err = run_main(["inspect", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1 and "\r" not in err and "\x1e" not in err, err
    assert "tensor 2 'bi\\ras\\x1e'" in err, err
