"""The support check's named checks (each refusal is its check's docstring) and the OpSpec
registry as the one source of supported ops, their lowering functions and check sets."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import mlitool
from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli.lower import checks, checks_values, support
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.mli.ops import MAC_KINDS, OUTPUT_PARAMS
from mlitool.mli.target import MLI2, target_of
from mlitool.ops import spec as opspec
from mlitool.ops.activation import checks as activation_checks
from mlitool.ops.movement import checks as movement_checks


def _q(scale=0.1, zp=0):
    return ir.Quant(np.array([scale]), np.array([zp]), None)


def one_op(op_type, shapes, out_shape, *, dtype="int8", consts=None, n_out=1, **options):
    """A graph of one op over activations of `shapes` (constants: {slot: array}) -> `n_out`
    outputs of `out_shape`."""
    consts = consts or {}
    tensors, inputs = [], []
    for slot, shape in enumerate(shapes):
        data = consts.get(slot)
        if data is not None:
            shape, t_dtype = np.shape(data), str(np.asarray(data).dtype)
        else:
            t_dtype = dtype
        tensors.append(
            ir.Tensor(
                slot, f"t{slot}", tuple(shape), t_dtype, data, _q() if t_dtype == "int8" else None
            )
        )
        inputs.append(slot)
    outs = list(range(len(tensors), len(tensors) + n_out))
    tensors += [ir.Tensor(i, f"y{i}", tuple(out_shape), dtype, None, _q()) for i in outs]
    op = ir.Op(0, op_type, tuple(inputs), tuple(outs), options)
    acts = [i for i in inputs if tensors[i].data is None]
    return ir.Graph("g", tensors, [op], acts, outs)


def _int16_acts(g: ir.Graph) -> ir.Graph:
    """`g` with its int16 activations quantized as a 16x8 model's (zero point 0)."""
    for t in g.tensors:
        if t.dtype == "int16":
            t.quant = _q()
    return g


# (graph, MLI version, check, its fields, the refusal text written out)
CASES = [
    (one_op("SIGN", [(1, 8)], (1, 8)), "2.0", support.has_kernel, {}, "no MLI kernel for this op"),
    (
        one_op("RELU", [(1, 8)], (1, 8), dtype="uint16"),
        "2.0",
        support.activation_type,
        {"name": "t0", "dtype": "uint16"},
        "tensor 't0' has type uint16 (MLI activations: int8, "
        "float, or int16 with zero point 0 and one scale, as 16x8 models have)",
    ),
    (
        one_op("SOFTMAX", [(2, 8)], (2, 8)),
        "2.0",
        support.batch_one,
        {"name": "t0", "batch": 2},
        "tensor 't0' has batch 2 (MLI runs batch 1)",
    ),
    (
        one_op("ADD", [(1, 8), (1, 8)], (1, 8), fused_activation="TANH"),
        "2.0",
        support.fused_activation,
        {"act": "TANH"},
        "fused activation TANH has no MLI equivalent",
    ),
    (
        one_op(
            "PRELU", [(1, 4, 4, 2), None], (1, 4, 4, 2), consts={1: np.ones((1, 1, 2), np.float32)}
        ),
        "1.1",
        checks.kernel_needs_mli2,
        {"kind": "prelu", "version": "1.1"},
        "prelu has no MLI 1.1 kernel (MLI 2.x has one)",
    ),
    (
        one_op("SOFTMAX", [(1, 10)], (1, 10), beta=2.0),
        "2.0",
        activation_checks.softmax_beta_one,
        {"beta": 2.0},
        "softmax beta 2.0 != 1",
    ),
    (
        one_op("ADD", [(1, 3, 4), (1, 5, 4)], (1, 5, 4)),
        "2.0",
        checks.operands_broadcast,
        {"a": [1, 3, 4], "b": [1, 5, 4]},
        "shapes [1, 3, 4] and [1, 5, 4] do not broadcast",
    ),
    (
        one_op("MUL", [(1, 4, 4, 2), (1, 1, 1, 2)], (1, 4, 4, 2)),
        "1.1",
        checks.broadcast_needs_mli2,
        {"name": "t1", "shape": [1, 1, 1, 2], "full": [1, 4, 4, 2]},
        "activation 't1' [1, 1, 1, 2] broadcasts to [1, 4, 4, 2]: MLI's element-wise kernels take "
        "equal shapes or a scalar, so mlitool calls the kernel once per slice, through views whose "
        "data pointers the runtime moves; that is done for MLI 2.x only (convert with --mli 2.0)",
    ),
    (
        _int16_acts(
            one_op(
                "MUL",
                [None, (1, 1, 1, 2)],
                (1, 4, 4, 2),
                dtype="int16",
                consts={0: np.ones((1, 4, 4, 2), np.int8)},
            )
        ),
        "2.0",
        checks.broadcast_against_activation,
        {"name": "t1", "shape": [1, 1, 1, 2], "const": "t0"},
        "activation 't1' [1, 1, 1, 2] broadcasts against the constant 't0': the kernel is called "
        "once per slice of both operands, and the runtime moves views of activations only",
    ),
    (
        one_op("ARG_MAX", [(1, 300, 200), None], (1, 300), consts={1: np.array([2], np.int32)}),
        "2.0",
        movement_checks.argmax_row_starts_fit,
        {"rows": 300, "size": 200, "last": 59800, "limit": 32767},
        "ARG_MAX over 300 rows of 200: MLI reports offsets from the tensor start, and row starts up "
        "to 59800 do not fit the int16 zero points that make them row-relative (at most 32767)",
    ),
    (
        one_op(
            "PAD",
            [(1, 4, 4, 2), None],
            (1, 304, 4, 2),
            consts={1: np.array([[0, 0], [300, 0], [0, 0], [0, 0]], np.int32)},
        ),
        "2.0",
        movement_checks.pad_spatial,
        {},
        "PAD is lowered only for padding of H, W (and C on MLI 2.x) by 0..255 of a 4-D tensor, "
        "or (MLI 2.x) of T and C of a 3-D one",
    ),
    (
        one_op(
            "PAD",
            [(1, 4, 4, 2), None],
            (1, 4, 4, 4),
            consts={1: np.array([[0, 0], [0, 0], [0, 0], [1, 1]], np.int32)},
        ),
        "1.1",
        movement_checks.pad_channels_need_mli2,
        {},
        "padding the channel axis needs MLI 2.x (its mli_mov pads every dimension; MLI 1.x pads "
        "H and W only)",
    ),
    (
        one_op("SPLIT", [None, (1, 5, 2)], (1, 2, 2), consts={0: np.array([1], np.int32)}, n_out=2),
        "2.0",
        movement_checks.slice_expressible,
        {"reason": "SPLIT of dimension 5 into 2 parts"},
        "SPLIT of dimension 5 into 2 parts",
    ),
]


@pytest.mark.parametrize(
    "graph,version,check,fields,text", CASES, ids=[c[2].__name__ for c in CASES]
)
def test_refusal_is_the_checks_text(graph, version, check, fields, text):
    expected = checks.message(check, **fields)
    if text is not None:
        assert expected == text
    assert unsupported_ops(graph, target_of(version)) == [f"op 0 ({graph.ops[0].type}): {expected}"]
    with pytest.raises(UnsupportedError, match=re.escape(expected)):
        lower(graph, mli_version=version, layout="hwc")


def test_every_registered_check_has_a_message():
    registered = {c for spec in opspec.REGISTRY.values() for c in spec.checks}
    registered |= {
        support.has_kernel,
        support.lowered,
        support.has_elements,
        support.fused_activation,
        *support.TENSOR_CHECKS,
    }
    for check in registered:
        first = check.__doc__.split("\n\n")[0]
        fields = set(re.findall(r"\{(\w+)", first))
        assert checks.message(check, **{f: "X" for f in fields}).strip(), check.__name__


def _family(module_name: str) -> str | None:
    """The op family a module belongs to (mlitool.ops.<family>...), None outside them."""
    parts = module_name.split(".")
    return parts[2] if parts[:2] == ["mlitool", "ops"] and len(parts) > 3 else None


def test_every_lowered_op_has_a_lowering_and_a_kernel():
    specs = [s for s in opspec.REGISTRY.values() if s.kind is not None]
    assert {s.name for s in specs} == opspec.lowered_ops()
    # onto MLI kernels (SPACE_TO_DEPTH, DEPTH_TO_SPACE, PACK, UNPACK, ARG_MIN: compositions;
    # EXPAND_DIMS: a view)
    assert len([s for s in specs if s.kind != "fallback"]) == 41
    for spec in specs:
        # an op's lowering lives in an op family's folder; its checks there too, or among the
        # checks every family shares (mli/lower/checks.py, ops/common)
        fn = spec.lower
        assert _family(inspect.getmodule(fn).__name__), spec.name
        assert fn.__name__.startswith("lower_") or fn.__qualname__.startswith("lower_"), spec.name
        for c in spec.checks:
            where = inspect.getmodule(c).__name__
            assert _family(where) or where in (checks.__name__, checks_values.__name__), (
                spec.name,
                where,
            )
    for kind in {s.kind for s in specs} | set(OUTPUT_PARAMS) | MAC_KINDS:
        assert MLI2.formats_for(kind), kind


def test_op_facts_are_defined_only_in_the_op_table():
    root = Path(mlitool.__file__).parent
    pattern = re.compile(
        r"^\s*(_?[A-Z0-9_]*(SUPPORTED_OPS|MAC_KINDS?|SA8_MAC|OUTPUT_PARAMS|"
        r"FIXED_SA8_OUTPUT|REWRITING_KINDS))\s*[:=]",
        re.M,
    )
    defined = {
        str(p.relative_to(root)) for p in root.rglob("*.py") if pattern.search(p.read_text())
    }
    assert defined == {"mli/ops.py"}


def test_an_unnamed_tensor_is_named_by_its_index():
    graph = one_op("RELU", [(1, 4)], (1, 4), dtype="int32")
    graph.tensors[0].name = ""
    assert unsupported_ops(graph)[0].startswith("op 0 (RELU): tensor '#0' has type int32")
