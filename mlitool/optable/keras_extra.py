"""OpSpecs of ops the second Keras corpus brought: SQUARE (GroupNormalization, tf.square; an
int8 model's float island, folded into a 256-entry table, `lut8`) and REVERSE_V2 (the backward
half of a Bidirectional RNN; a per-axis index gather, `gather4`)."""

from __future__ import annotations

from mlitool.execute import keras_extra as K
from mlitool.mli.lower import fallback_movement as FM
from mlitool.opspec import OpSpec, register
from mlitool.optable.fallback import unary_spec
from mlitool.optable.kernel_shapes import computed_shapes

register(unary_spec(K.SQUARE))
register(
    OpSpec(
        "REVERSE_V2",
        ("input", "axis"),
        options="ReverseV2Options",
        params=("axis",),
        shapes=computed_shapes,
        kind="fallback",
        checks=FM.CHECKS,
        lower=FM.lower_index_gather,
        run=(K.reverse_v2,) * 2,
    )
)
