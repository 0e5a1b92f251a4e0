"""Support checks of the activations (each docstring is the refusal): SOFTMAX's beta and axis, PRELU's
general slope (fallback C, int8)."""

from __future__ import annotations

from mlitool.mli.lower.checks import _OK, Subject
from mlitool.ops.activation.prelu_c import general_slope
from mlitool.ops.common.fallback_checks import fallback_int8

# --- MLI 1.x -------------------------------------------------------------------------------


# --- MAC layers ----------------------------------------------------------------------------


# --- element-wise, activations, pooling ----------------------------------------------------


def softmax_beta_one(s: Subject):
    """softmax beta {beta} != 1"""
    beta = s.op.options.get("beta", 1.0)
    return {"beta": s.op.options.get("beta")} if float(beta) != 1.0 else _OK


def softmax_one_axis_on_mli1(s: Subject):
    """MLI {version} softmax works on the whole tensor, not along an axis"""
    if not s.target.softmax_axis and sum(d > 1 for d in s.input(0).shape) > 1:
        return {"version": s.target.version}
    return _OK


def prelu_general_slope_int8(s: Subject):
    """PReLU slope {shape} is not one along one axis: fallback C runs it on int8 tensors, and on
    int16 ones with a constant int8 slope; tensor {name!r} is {dtype}"""
    if not general_slope(s.graph, s.op):
        return _OK
    shape = list(s.input("alpha").shape)
    alpha = s.input("alpha")
    if s.input(0).dtype == "int16" and s.output.dtype == "int16":
        q = alpha.quant
        if alpha.data is not None and alpha.dtype == "int8" and q is not None and not q.per_axis:
            return _OK
        return {"shape": shape, "name": alpha.name, "dtype": f"{alpha.dtype} slope"}
    fields = fallback_int8(s)
    return _OK if fields is _OK else {"shape": shape, **fields}


# --- data movement -------------------------------------------------------------------------
