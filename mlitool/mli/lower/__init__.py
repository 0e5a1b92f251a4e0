"""IR `Graph` -> `MliModel`: one `MliLayer` per kernel call, every number final.

`driver.py`: `lower(graph, settings, ...)` and the checks it runs first (`check_supported`,
`float_activations`); `support.py`: the support check (`unsupported_ops`), `checks.py`: the
named checks several families share; `builder.py`: the state a lowering builds up;
`params.py`: tensor parameters compared and copied, real values of constants; `facts.py`: what
lowering reads off the graph. Which ops exist, what they become and the function that lowers
each is their OpSpec, in their family (mlitool/ops/<family>/).
"""
