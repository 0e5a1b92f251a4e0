"""What a graph pass is given and what it records: `PassContext`.

Every pass is a function `(graph, ctx) -> graph` (`mlitool.passes.runner`). `ctx.target` is the
MLI target where it is known (the lowering stage); the model stage runs right after reading, for
every command, before any option is settled, so it has none. What a pass did that later stages
show (inspect, the manifest, the report) it adds to the context; the pipeline copies it onto the
model (`ir.Model.rewritten_ops`, `batch_fixed`, `folded_ops`, `removed_ops`, `warnings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlitool.mli.target import Target


@dataclass
class PassContext:
    target: Target | None = None  # None in the model stage: no option is settled yet
    # {label of a new op: labels of the ops it replaces} (upsampling, dilated, float islands)
    rewritten: dict[str, list[str]] = field(default_factory=dict)
    batch_fixed: list[str] = field(default_factory=list)  # graph inputs whose batch became 1
    folded: list[str] = field(default_factory=list)  # labels of ops evaluated into constants
    removed: list[str] = field(default_factory=list)  # labels of ops left without a reader
    warnings: list[str] = field(default_factory=list)  # what the user should know of a rewrite
