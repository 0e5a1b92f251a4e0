"""OpSpecs of ops the second Keras corpus brought: SQUARE (GroupNormalization, tf.square; an
int8 model's float island, folded into a 256-entry table, `lut8`) and REVERSE_V2 (the backward
half of a Bidirectional RNN; a per-axis index gather, `gather4`)."""

from __future__ import annotations

from mlitool.execute import keras_extra as K
from mlitool.optable.fallback import gather_op, unary_op

unary_op(K.SQUARE)
gather_op("REVERSE_V2", ("input", "axis"), "ReverseV2Options", K.reverse_v2, params=("axis",))
