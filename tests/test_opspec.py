"""The OpSpec registry (mlitool/ops/spec.py, mlitool/ops/): a toy op added through its OpSpec
alone flows through validation, the support check, lowering, inspect and the executors; and no
per-op table is left outside the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import mlitool
from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.inspect.command import summarize
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.ops import spec as opspec
from mlitool.ops.movement import layout as layout_ops
from mlitool.ops.movement import lower as movement
from mlitool.tflite import validate_ops
from mlitool.tflite.validate import problems


def _sign(c):
    """A float kernel: sign x."""
    return [np.sign(np.asarray(c.x("input"), np.float32))]


# SIGN (a TFLite op mlitool does not know): validated, executed in float mode, no MLI kernel.
SIGN = opspec.OpSpec(
    "SIGN",
    ("input",),
    shapes=validate_ops.same_shape,
    run=(_sign, None),
)
# An identity lowered as an MLI view (RESHAPE's lowering), executed in both modes.
TOY_IDENTITY = opspec.OpSpec(
    "TOY_IDENTITY",
    ("input",),
    shapes=validate_ops.same_size,
    kind="view",
    lower=movement.lower_reshape,
    run=(layout_ops.reshape,) * 2,
)


def _graph(op_type, n_in=1, out_shape=(1, 4), dtype="float32"):
    q = ir.Quant(np.array([0.5]), np.array([3]), None) if dtype == "int8" else None
    tensors = [ir.Tensor(i, f"x{i}", (1, 4), dtype, None, q) for i in range(n_in)]
    tensors.append(ir.Tensor(n_in, "y", out_shape, dtype, None, q))
    op = ir.Op(0, op_type, tuple(range(n_in)), (n_in,))
    return ir.Graph("g", tensors, [op], list(range(n_in)), [n_in])


X = np.array([[[1.5, -2.0, 0.0, 7.25]]], np.float32)  # one sample of shape (1, 4)


def test_an_unknown_op_gets_only_the_graph_checks():
    assert problems(_graph("SIGN", n_in=2, out_shape=(1, 5))) == []
    with pytest.raises(UnsupportedError, match=r"float mode cannot run op 0 \(SIGN\)"):
        run_graph(_graph("SIGN"), {0: X}, "float")


def test_a_toy_op_flows_through_its_opspec_alone():
    with opspec.registered(SIGN):
        # validation: the spec's arity and shape check
        assert [str(p) for p in problems(_graph("SIGN", n_in=2))] == [
            "op 0 (SIGN): has 2 inputs, expected 1"
        ]
        assert [str(p) for p in problems(_graph("SIGN", out_shape=(1, 5)))] == [
            "op 0 (SIGN), tensor 1 'y': has shape [1, 5], but the input's is [1, 4] (TFLite "
            "recomputes it); mlitool does not change the shape of a graph output"
        ]
        g = _graph("SIGN")
        assert problems(g) == []
        # the support check: no layer kind, refused
        assert unsupported_ops(g) == ["op 0 (SIGN): no MLI kernel for this op"]
        row = summarize(ir.Model("sign.tflite", [g]))["ops"][0]
        assert (row["supported"], row["unsupported_reason"]) == (False, "no MLI kernel for this op")
        # the executors: float runs it, tflite has no kernel
        np.testing.assert_array_equal(
            run_graph(g, {0: X}, "float")[1], np.sign(np.asarray(X, np.float32))
        )
        with pytest.raises(UnsupportedError, match=r"tflite mode cannot run op 0 \(SIGN\)"):
            run_graph(g, {0: X}, "tflite")
    assert opspec.get("SIGN") is None


def test_a_toy_op_is_lowered_through_its_opspec():
    with opspec.registered(TOY_IDENTITY):
        g = _graph("TOY_IDENTITY", dtype="int8")
        assert problems(g) == [] and unsupported_ops(g) == []
        assert summarize(ir.Model("toy.tflite", [g]))["ops"][0]["supported"] is True
        model = lower(g, format="sa8")
        assert [(la.kind, la.op_type) for la in model.layers] == [("view", "TOY_IDENTITY")]
        q = np.array([[[-128, 3, 0, 127]]], np.int8)
        np.testing.assert_array_equal(run_graph(g, {0: q}, "tflite")[1], q)


def test_registering_an_op_twice_is_refused():
    with pytest.raises(ValueError, match="op CONV_2D is registered twice"):
        opspec.register(opspec.OpSpec("CONV_2D"))


def test_slots_by_name():
    tconv = opspec.spec("TRANSPOSE_CONV")
    assert [tconv.slot(n) for n in ("output_shape", "weights", "input", "bias")] == [0, 1, 2, 3]
    assert tconv.arity == (3, 4, 3, 1, 1)
    op = ir.Op(0, "TRANSPOSE_CONV", (7, 8, 9), (10,))
    assert (op.input("input"), op.input("bias")) == (9, -1)
    with pytest.raises(KeyError, match="TRANSPOSE_CONV has no input slot 'filter'"):
        op.input("filter")
    lstm = opspec.spec("UNIDIRECTIONAL_SEQUENCE_LSTM")
    assert (lstm.slot("cell_state"), lstm.slot("projection_weights"), lstm.arity) == (
        19,
        16,
        (20, 24, 1, 1, 1),
    )


# Collections naming two or more registered ops outside the family that registers them (a family's
# folder may list its own ops: the C switch of its kernel), and why these remain.
# Fused activations share names with ops (RELU...): sets of those are not op tables.
_FUSED = {"RELU", "RELU6", "RELU_N1_TO_1", "TANH"}
_ELSEWHERE = {
    "ops/binary/reference.py",  # binary8's op selector (its C switch): ADD... fall back to it
    "ops/integer/reference.py",  # binary32's op selector (its C switch): ADD... on int32
    "passes/pad_fusion.py",  # convolutions PAD fuses into
    "mli/quant.py",  # MLI's per-axis weight dim per version (the Target's)
    "passes/upsampling.py",  # the movement ops a nearest-upsampling chain is made of
    "passes/dilated.py",  # the ops a dilated convolution through the batch is made of
    "verify/classes.py",  # ops that keep values, walked back from an output
    "passes/float_expressions.py",  # the float ops an int8 model's float island may hold
    "passes/bool_islands.py",  # the comparisons and SELECTs of a bool island
    "ops/island/arith.py",  # the island's steps: ADD / SUB / MUL in float32
    "passes/qdq.py",  # ops whose int8 form keeps its input's parameters (a QDQ pair's neighbours)
    "passes/quantize_early.py",  # the joins a QUANTIZE moves through onto each input
    "passes/float_regions.py",  # the float ops a float region may hold
    "passes/order_islands.py",  # ops that depend on the order of values alone
    "ops/float_region/program.py",  # the region's instructions, one per float op it runs
}


def _own_family(path: Path, ops: set[str]) -> bool:
    """Whether `path` is in the folder of the family that registers all of `ops`."""
    if path.parts[0] != "ops":
        return False
    for name in ops:
        spec = opspec.spec(name)
        fn = spec.lower or spec.run[0]
        if fn is None or fn.__module__.split(".")[2] != path.parts[1]:
            return False
    return True


def test_no_per_op_table_outside_the_registry():
    root = Path(mlitool.__file__).parent
    names = set(opspec.REGISTRY) - _FUSED
    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Dict, ast.Set, ast.Tuple, ast.List)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                ops = {e.value for e in elts if isinstance(e, ast.Constant) and e.value in names}
                if len(ops) >= 2 and not _own_family(path.relative_to(root), ops):
                    found.add(str(path.relative_to(root)))
    assert found == _ELSEWHERE
