"""Support checks on values a file may hold that MLI cannot take, though TFLite runs them (the
conventions of checks.py: the docstring is the refusal, the fields fill it in)."""

from __future__ import annotations

import numpy as np

from mlitool.mli.lower.checks import Subject


def finite_alpha(s: Subject):
    """alpha {alpha} is not a finite number (MLI's slope is a finite constant)"""
    alpha = float(s.op.options.get("alpha", 0.2))
    return None if np.isfinite(alpha) else {"alpha": alpha}
