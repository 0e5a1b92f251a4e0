"""`mlitool tune`: choose each layer's format (sa8 / fx8w16d / fx16) automatically, the cheapest
mix found that meets accuracy targets and memory budgets (`search.py`), written as a
ready mlitool.toml and a Pareto table (`render.py`)."""
