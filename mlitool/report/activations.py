"""Activation statistics observed on executed samples: the float model's value of every IR
activation that has a primary MLI tensor, quantized with that tensor's parameters."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mlitool import ir
from mlitool.mli.types import MliModel
from mlitool.report.quant_stats import ActivationObservation

BATCH = 16


def observe_activations(
    graph: ir.Graph,
    model: MliModel,
    inputs: dict,
    *,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> dict[str, ActivationObservation]:
    """{MLI tensor name: observation} over the batched `inputs` (float executor, batch by
    batch); `progress(1)` after each batch."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.reference.graph import run_graph

    primary = {
        i: name
        for i, name in B.primary_tensors(graph, model).items()
        if not graph.tensors[i].is_constant
        and (model.tensor(name).el_type.is_sa or model.tensor(name).el_type.is_fx)
    }
    obs = {name: ActivationObservation() for name in primary.values()}
    n = next(iter(inputs.values())).shape[0]
    for start in range(0, n, batch):
        chunk = {k: np.asarray(v)[start : start + batch] for k, v in inputs.items()}
        ref = run_graph(graph, chunk, "float", keep=True)
        for i, name in primary.items():
            if i not in ref or np.asarray(ref[i]).dtype.kind != "f":
                continue
            t = model.tensor(name)
            real = np.asarray(ref[i]).reshape((ref[i].shape[0],) + t.shape)
            obs[name].add(t, real, B.encode(t, real))
        if progress is not None:
            progress(1)
    return obs
