"""The activations lowered onto MLI kernels: ReLU (`mli_krn_relu`), LEAKY_RELU and PRELU (slope kernels;
a PRELU slope of any other shape onto fallback C, `prelu_c.py`), and the table kernels LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION, which write fixed output parameters."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import RELU_TYPES, Builder, act_el
from mlitool.mli.types import MliTensor, Role
from mlitool.ops import spec as opspec
from mlitool.ops.activation.prelu_c import general_slope, lower_prelu_general

# leaky_relu / prelu: an FX output takes its input's frac bits (ops.SAME_FX_FRAC_BITS)
SAME_FRAC_BITS_NOTE = "frac bits of the input: MLI's FX kernel requires them equal"


def lower_relu(b: Builder, op: ir.Op, fmt: str) -> None:
    """RELU, RELU6, RELU_N1_TO_1."""
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    leaves = P.kernel_leaves("relu", b.tensors[x])
    kout, pending = b.kernel_output(op, op.outputs[0], el, leaves)
    b.layer(
        op,
        "relu",
        fmt,
        [x],
        [kout],
        cfg_type="mli_relu_cfg",
        cfg={"relu_type": RELU_TYPES[op.type]},
    )
    b.finish(op, pending, "relu copies its input's parameters")


def lower_leaky_relu(b: Builder, op: ir.Op, fmt: str) -> None:
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    alpha = float(op.options.get("alpha", 0.2))
    slope = b.scalar_param(f"{b.base(op.outputs[0])}_slope", alpha, b.tensors[x])
    _slope_layer(b, op, fmt, "leaky_relu", x, slope, notes=[f"slope {alpha} as a rank-0 constant"])


def _slope_layer(b: Builder, op: ir.Op, fmt: str, kind: str, x: str, slope: str, **kw) -> None:
    """A leaky_relu / prelu layer: `x`, times `slope` below zero."""
    leaves = P.kernel_leaves(kind, b.tensors[x])
    out, _ = b.kernel_output(op, op.outputs[0], act_el(fmt), leaves, why=SAME_FRAC_BITS_NOTE)
    b.layer(op, kind, fmt, [x], [out], params={"slope": slope}, **kw)


def lower_prelu(b: Builder, op: ir.Op, fmt: str) -> None:
    """PRELU onto MLI's prelu (a slope along one axis), else onto fallback C (`prelu8`)."""
    if general_slope(b.g, op):
        lower_prelu_general(b, op, fmt)
        return
    el = act_el(fmt)
    x = b.use(op, op.input("input"), el)
    at = b.g.slot(op, "alpha")
    in_rank = len(b.g.slot(op, "input").shape)
    real = P.real(at).reshape((1,) * (in_rank - len(at.shape)) + tuple(at.shape))
    mshape = b.mli_shape(real.shape)
    real = real.reshape(real.shape[1:]) if in_rank >= 2 else real
    if b.layout == "chw" and real.ndim == 3:
        real = real.transpose(2, 0, 1)
    non1 = [i for i, d in enumerate(mshape) if d > 1]
    axis = non1[0] if non1 else -1
    m = MliTensor(
        name=b.base(at.index),
        role=Role.PARAM,
        shape=mshape if non1 else (),
        el_type=el,
        source=at.name,
        source_index=at.index,
    )

    def own_int8() -> np.ndarray:
        data = np.asarray(at.data, np.int8).reshape(real.shape)
        return data.transpose(2, 0, 1) if b.layout == "chw" and data.ndim == 3 else data

    data = b.encode_param(m, at, real, el, own_int8)
    m.data = np.ascontiguousarray(np.asarray(data).reshape(m.shape))
    slope = b.add(m)
    _slope_layer(b, op, fmt, "prelu", x, slope, cfg_type="mli_prelu_cfg", cfg={"axis": axis})


def lower_lut(b: Builder, op: ir.Op, fmt: str) -> None:
    """LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION: kernels that write fixed output parameters."""
    kind = opspec.spec(op.type).kind
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    kout, pending = b.kernel_output(op, op.outputs[0], el, P.kernel_leaves(kind, b.tensors[x]))
    params, cfg_type, cfg = {}, None, {}
    mrank = len(b.tensors[x].shape)
    if kind in ("softmax", "l2_normalize") and b.target.softmax_axis:
        cfg_type = f"mli_{kind}_cfg"
        cfg = {"axis": b.mli_axis(-1, len(b.g.tensors[op.inputs[0]].shape)) if mrank > 1 else 0}
    if kind == "l2_normalize":
        params["epsilon"] = _epsilon(b, op, b.tensors[x])
    b.layer(
        op,
        kind,
        fmt,
        [x],
        [kout],
        params=params,
        cfg_type=cfg_type,
        cfg=cfg,
        notes=[f"{kind} writes fixed output parameters into its output tensor"],
    )
    b.finish(op, pending, f"{kind} writes fixed output parameters")


def _epsilon(b: Builder, op: ir.Op, x: MliTensor) -> str:
    """l2_normalize epsilon: a rank-0 tensor with the input's parameters holding one LSB
    above the input's zero (the smallest positive value), keeping the root away from 0."""
    m = MliTensor(
        name=f"{b.base(op.outputs[0])}_epsilon",
        role=Role.PARAM,
        shape=(),
        el_type=x.el_type,
        frac_bits=x.frac_bits,
    )
    if x.el_type.is_sa:
        m.zero_point, m.scale = x.zero_point.copy(), x.scale.copy()
        m.scale_frac_bits, m.dim = x.scale_frac_bits.copy(), -1
        m.data = np.array(min(int(x.zero_point[0]) + 1, 127), np.int8).reshape(())
    else:
        m.data = np.array(1, x.el_type.dtype).reshape(())
    m.notes.append("epsilon: one LSB of the input")
    return b.add(m)
