"""Per-layer sensitivity: how much the model output suffers when ONE MAC layer runs in MLI
arithmetic and every other layer stays float.

For each IR op whose MLI layers include a MAC kernel (conv, depthwise, group/transpose conv,
fully connected) or an LSTM cell, per batch of samples:
1. the float executor gives every activation (the reference);
2. the op's MLI layers run alone (`mli_bridge.run_op`): the float values of their inputs are
   encoded into the layers' MLI input tensors (as `mli_hlp_convert_tensor` converts FP32), the
   MLI kernels run with the chosen arithmetic, and the op's output is decoded to real values;
3. the float executor continues from there: only the ops downstream of that output are run
   again, the others keep their reference values;
4. the model outputs are compared with the reference (SNR over all outputs together, and top-1
   agreement for classifier outputs, as verify finds them: `mlitool.verify.classes`).
The layer whose quantization costs the most output SNR is the first to keep in a wider format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.ops import WEIGHTED_KINDS
from mlitool.mli.types import MliModel
from mlitool.verify.classes import classifier_outputs
from mlitool.verify.stats import RealStats, Top1Stats

BATCH = 16


@dataclass(frozen=True)
class LayerSensitivity:
    op_index: int
    op_type: str
    position: int  # of the op's MAC (or LSTM cell) layer in `model.layers`
    kind: str  # that layer's kind
    output_snr_db: float  # model outputs vs float, only this op in MLI arithmetic
    top1: float | None  # agreement with float on classifier outputs (None: no classifier)


def mac_ops(graph: ir.Graph, model: MliModel) -> list[tuple[ir.Op, int, str]]:
    """(op, position of its MAC layer, kind) of every op lowered to a MAC kernel or an LSTM
    cell, graph order."""
    from mlitool.execute.mli import bridge as B

    primary = B.primary_tensors(graph, model)
    position = {id(layer): pos for pos, layer in enumerate(model.layers)}
    groups = B.layers_by_op(model)
    out = []
    for op in graph.ops:
        macs = [layer for layer in groups.get(op.index, []) if layer.kind in WEIGHTED_KINDS]
        if macs and op.outputs and op.outputs[0] in primary:
            out.append((op, position[id(macs[0])], macs[0].kind))
    return out


class _FloatTail:
    """Re-runs the float ops downstream of one replaced tensor (constants converted once)."""

    def __init__(self, graph: ir.Graph):
        self.graph = graph
        self.consts: dict[int, np.ndarray] = {}
        self.pos = {op.index: p for p, op in enumerate(graph.ops)}

    def run(
        self, ref: dict[int, np.ndarray], op: ir.Op, value: np.ndarray, n: int
    ) -> dict[int, np.ndarray]:
        """The graph outputs when `op`'s first output is `value` instead of its reference."""
        from mlitool.execute.reference.graph import run_op

        values = dict(ref)  # shallow: reference arrays are never written
        values[op.outputs[0]] = value
        dirty = {op.outputs[0]}
        for later in self.graph.ops[self.pos[op.index] + 1 :]:
            if not dirty.intersection(later.inputs):
                continue
            run_op(later, self.graph, "float", values, n, self.consts)
            dirty.update(later.outputs)
        return {i: values[i] for i in self.graph.outputs}


def layer_sensitivity(
    graph: ir.Graph,
    model: MliModel,
    inputs: dict,
    arith: Arith,
    *,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> list[LayerSensitivity]:
    """Sensitivity of every MAC op (see the module docstring) over the batched `inputs`
    ({input name / position / tensor index: array}). `progress(k)` is called after each
    (op, batch) step with k = 1."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.reference.graph import run_graph

    ops = mac_ops(graph, model)
    groups = B.layers_by_op(model)
    primary = B.primary_tensors(graph, model)
    classifier = classifier_outputs(graph)  # verify's: top-1 on the same outputs
    stats = {op.index: (RealStats(), Top1Stats()) for op, _, _ in ops}
    tail = _FloatTail(graph)
    n = next(iter(inputs.values())).shape[0]
    for start in range(0, n, batch):
        chunk = {k: np.asarray(v)[start : start + batch] for k, v in inputs.items()}
        ref = run_graph(graph, chunk, "float", keep=True)
        m = next(iter(chunk.values())).shape[0]
        for op, _, _ in ops:
            i = op.outputs[0]
            q = B.run_op(graph, model, op.index, ref, arith, groups, primary)[i]
            real = B.decode(model.tensor(primary[i]), q).reshape(ref[i].shape)
            outs = tail.run(ref, op, real.astype(ref[i].dtype, copy=False), m)
            snr, top1 = stats[op.index]
            for o in graph.outputs:
                snr.add(ref[o], outs[o])
                if o in classifier:
                    top1.add(ref[o], outs[o])
            if progress is not None:
                progress(1)
    return [
        LayerSensitivity(
            op.index,
            op.type,
            pos,
            kind,
            stats[op.index][0].result()["snr_db"],
            stats[op.index][1].result() if classifier else None,
        )
        for op, pos, kind in ops
    ]


def steps(graph: ir.Graph, model: MliModel, samples: int, batch: int = BATCH) -> int:
    """How many progress steps `layer_sensitivity` takes."""
    return len(mac_ops(graph, model)) * -(-samples // batch)
