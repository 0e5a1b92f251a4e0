"""Support checks of the activations (each docstring is the refusal): SOFTMAX's beta and axis, PRELU's
slope."""

from __future__ import annotations

from mlitool.mli.lower.checks import _OK, Subject

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


def prelu_slope_one_axis(s: Subject):
    """PReLU slope is not constant or varies along more than one axis"""
    alpha = s.input("alpha")
    return {} if alpha.data is None or sum(d > 1 for d in alpha.shape) > 1 else _OK


# --- data movement -------------------------------------------------------------------------
