"""IR `Graph` -> `MliModel`: one `MliLayer` per kernel call, every number final.

Layout of this package: driver.py (`lower`, and the checks it runs first), support.py (the
support check) and checks.py (one named check per refusal), builder.py (the state a lowering
builds up), params.py (tensor parameters compared and copied, real values of constants),
facts.py (what it reads off the graph), one module per op family (mac.py, activations.py,
movement.py, recurrent.py). Which ops exist, what they become and the function that lowers each
is their OpSpec (mlitool/optable/).

Public: `lower(graph, settings, ...)`, `unsupported_ops(graph, target, layout)`,
`check_supported`, `float_activations`.
"""

from mlitool.mli.lower.driver import check_supported, float_activations, lower
from mlitool.mli.lower.support import unsupported_ops

__all__ = ["check_supported", "float_activations", "lower", "unsupported_ops"]
