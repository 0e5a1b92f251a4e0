"""One shared array for the per-axis zero points that are all 0 (issue 36).

Weights and biases are quantized symmetrically: their per-axis zero points are arrays of zeros,
one int16 per channel (10,944 B of vww_96_int8's constants). MLI 2.x kernels read only element 0
of a constant's zero points and check that the array holds a value per channel, so every such
constant points into one `const int16_t NAME_zero_points[N]` of zeros, N its longest; views of it
at a channel offset (fast-memory channel slices) stay inside. Activations keep their own (a
kernel may write an output's). The emitter (`emit.c_mli2`), its byte totals and the report's ROM
ask the same two functions.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.types import MliModel, MliTensor


def shares_zeros(model: MliModel, t: MliTensor) -> bool:
    """`t`'s zero points live in the shared array, not in an array of its own."""
    return (
        model.target.shared_zero_points
        and t.role.is_constant
        and t.per_axis
        and t.el_type.is_sa
        and not np.any(t.zero_point)
    )


def shared_length(model: MliModel) -> int:
    """Elements of the shared array: the most channels of a constant using it (0: none does)."""
    return max(
        (len(t.zero_point) for t in model.tensors.values() if shares_zeros(model, t)), default=0
    )
