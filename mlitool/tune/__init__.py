"""`mlitool tune`: choose each layer's format (sa8 / fx8w16d / fx16) automatically, the cheapest
mix found that meets accuracy targets and memory budgets. `search.py`: the greedy loop;
`mixes.py`: candidates and moves; `evaluate.py`: one mix, bit-exact, reusing the unchanged
prefix; `choose.py`: the move, running only the candidates that could be it; `goal.py`: the
targets, judged by `mlitool.verdict`; `document.py`, `render.py`: the JSON document, the Pareto
table, the ready mlitool.toml and the HTML chart."""
