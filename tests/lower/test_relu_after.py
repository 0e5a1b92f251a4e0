"""`Builder.relu_after`: a fused activation the kernel cannot apply becomes a relu layer after
the kernel's layers, and nothing of it outlives a kernel that fails."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import kernels as K
from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import ElType
from mlitool.settings import settings_for


def _builder(out_zp: int) -> tuple[Builder, ir.Op]:
    q = ir.Quant(np.array([0.1]), np.array([out_zp]))
    tensors = [ir.Tensor(i, n, (1, 4), "int8", quant=q) for i, n in enumerate("abcd")]
    ops = [
        ir.Op(0, "ADD", (0, 1), (2,), {"fused_activation": "RELU"}),
        ir.Op(1, "ADD", (2, 1), (3,), {"fused_activation": "NONE"}),
    ]
    b = Builder(ir.Graph("g", tensors, ops, [0, 1], [3]), settings_for(), False, {}, "")
    return b, ops[0]


def test_relu_layer_follows_the_kernel():
    b, op = _builder(out_zp=-3)  # RELU clamps at raw -3 > -128
    out = b.produce(2, ElType.SA8).name
    with b.relu_after(op, "sa8", out) as kout:
        assert kout == "c_pre_act" and b.tensors[kout].zero_point[0] == -3
        b.layer(op, "eltwise_add", "sa8", ["a", "b"], [kout])
    assert [(lay.kind, lay.inputs, lay.outputs) for lay in b.layers] == [
        ("eltwise_add", ["a", "b"], ["c_pre_act"]),
        ("relu", ["c_pre_act"], ["c"]),
    ]
    assert (b.layers[1].index, b.layers[1].op_type) == (0, "ADD")
    assert b.layers[1].cfg == {"relu_type": K.RELU_GEN}


def test_no_relu_where_it_clamps_nothing():
    b, op = _builder(out_zp=-128)  # real 0 is raw -128: RELU leaves every value
    out = b.produce(2, ElType.SA8).name
    with b.relu_after(op, "sa8", out) as kout:
        assert kout == "c"
    assert b.layers == [] and list(b.tensors) == ["c"]


def test_a_failing_kernel_leaves_no_relu_behind():
    b, op = _builder(out_zp=-3)
    out = b.produce(2, ElType.SA8).name
    with pytest.raises(UnsupportedError, match="no kernel"), b.relu_after(op, "sa8", out):
        raise UnsupportedError("no kernel")
    assert b.layers == []
    # the next op's own block adds only its layer
    nxt = b.g.ops[1]
    out2 = b.produce(3, ElType.SA8).name
    with b.relu_after(nxt, "sa8", out2) as kout:
        b.layer(nxt, "eltwise_add", "sa8", ["c", "b"], [kout])
    assert [(lay.kind, lay.index) for lay in b.layers] == [("eltwise_add", 1)]
