"""Kernel calls per inference: what NAME_run calls, layer by layer (issue 36). Each call costs
MLI's parameter checks and set-up on the core, so the manifest gives the count.

A layer with a kernel is one call; a layer run once per slice (`SliceCalls`, broadcasts) one per
index of its looped output dimensions (leading or trailing, `mlitool.mli.lower.broadcast`); with --fast-memory each of those once per tile of the plan.
A view is none.
"""

from __future__ import annotations

from mlitool.mli.types import MliModel


def kernel_calls(model: MliModel, fast_plan=None) -> list[int]:
    """Calls per inference of each layer, in order (`fast_plan`: the --fast-memory plan,
    `mlitool.mli.placement.plan_model`)."""
    out = []
    for pos, la in enumerate(model.layers):
        if not la.kernel:
            out.append(0)
            continue
        n = 1
        if la.calls is not None:
            n = la.calls.count(model.tensors[la.outputs[0]].shape)
        if fast_plan is not None:
            n *= fast_plan.layers[pos].calls
        out.append(n)
    return out
