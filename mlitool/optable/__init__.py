"""The built-in ops: one `OpSpec` (opspec.py) per TFLite op mlitool knows, registered on import.

Everything about an op is in its entry: input slots, options table, element types, validation
shape check, MLI layer kind, support checks, lowering and executor kernels. The entries are
grouped by op family, one module each: `mac` (convolutions, FULLY_CONNECTED, pools, MEAN),
`elementwise` (element-wise ops, activations, type conversions), `movement` (concatenation,
padding, views, transposes, arg max/min, slices), `recurrent` (LSTM, RNN) and `shape`
(shape arithmetic and index ops: SHAPE, PACK, GATHER, TILE...). The stages that
dispatch on an op (validate, the support check, lowering, inspect, the executors) import this
package and read the registry; the functions named in the entries read the op's facts through it.
"""

from __future__ import annotations

# Imported, hence registered, in the registry's order.
# isort: off
from mlitool.optable import mac  # noqa: F401
from mlitool.optable import elementwise  # noqa: F401
from mlitool.optable import movement  # noqa: F401
from mlitool.optable import recurrent  # noqa: F401
from mlitool.optable import fallback  # noqa: F401
from mlitool.optable import shape  # noqa: F401
from mlitool.optable import binary  # noqa: F401
from mlitool.optable import reduce  # noqa: F401
from mlitool.optable import resize  # noqa: F401
from mlitool.optable import unary  # noqa: F401
from mlitool.optable import compare  # noqa: F401
from mlitool.optable import log_softmax  # noqa: F401
from mlitool.optable import keras_extra  # noqa: F401
from mlitool.optable import power  # noqa: F401

# isort: on
from mlitool.opspec import REGISTRY, get, lowered_ops, spec

__all__ = ["REGISTRY", "get", "lowered_ops", "spec"]  # the registry, loaded
