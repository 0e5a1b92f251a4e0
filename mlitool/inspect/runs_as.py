"""How each op runs once converted: on an MLI kernel, as a composition of MLI kernels, as
mlitool's fallback C, as a view (no call), or fused into a neighbour — read off the layers the
lowering makes (default target, weights only, so no calibration is needed)."""

from __future__ import annotations

from collections import defaultdict

from mlitool import ir
from mlitool.errors import MlitoolError
from mlitool.mli.lower.facts import layer_kind

MLI, COMPOSITION, FALLBACK, VIEW, FUSED = "MLI", "MLI composition", "fallback C", "view", "fused"
# Layers lowering inserts around any op (format changes, fused activations): not the op itself.
_INSERTED = ("convert", "relu")


def runs_as(graph: ir.Graph) -> dict[int, str]:
    """Op index -> how it runs, for the graph as folded at import (what convert lowers); empty
    when the graph does not lower (the refusals say why)."""
    from mlitool.mli.lower.driver import lower
    from mlitool.settings import settings_for

    model = None
    for fmt in ("sa8", "fx16"):  # fx16: 16x8 models
        try:
            model = lower(graph, settings_for(fmt), weights_only=True)
            break
        except MlitoolError:
            continue
    if model is None:
        return {}
    kinds: dict[int, list[str]] = defaultdict(list)
    for layer in model.layers:
        inserted = layer.kind in _INSERTED and any(n.startswith("inserted") for n in layer.notes)
        if not inserted:
            kinds[layer.index].append(layer.kind)
    out = {}
    for op in graph.ops:
        k = kinds.get(op.index, [])
        if not k:
            out[op.index] = FUSED
        elif "fallback" in k:
            out[op.index] = FALLBACK
        elif all(kind == "view" for kind in k):
            out[op.index] = VIEW
        elif k == [layer_kind(graph, op)]:
            out[op.index] = MLI
        else:
            out[op.index] = COMPOSITION
    return out
