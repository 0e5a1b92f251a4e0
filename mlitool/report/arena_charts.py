"""The arena charts of the memory section: each activation buffer a rectangle over the layers
it lives at its offsets (one arena; or the fast buffer, with its staging blocks and look-up
tables, and the slow arena), coloured by the kind of layer that writes it."""

from __future__ import annotations

from mlitool.mli.kernels import LUT_LENGTHS
from mlitool.mli.kinds import KINDS
from mlitool.mli.memory.arena import ArenaPlan, Buffer, live_lower_bound, root_of
from mlitool.mli.memory.placement import FastPlan
from mlitool.mli.types import MliModel
from mlitool.report.document import Chart, Series


def layer_group(kind: str) -> str:
    """The colour group of a layer kind in the arena charts (`mlitool.report.svg_arena`): its
    kinds table entry's `chart`."""
    entry = KINDS.get(kind)
    return entry.chart if entry is not None else kind


def _writers(model: MliModel) -> dict[str, str]:
    """Root buffer -> the colour group of the first layer that writes it (model inputs:
    "input")."""
    out: dict[str, str] = {}
    for layer in model.layers:
        for n in layer.outputs:
            out.setdefault(root_of(model, n), layer_group(layer.kind))
    for n in model.inputs:
        out[root_of(model, n)] = "input"
    return out


def _bound_label(value: int, what: str = "") -> str:
    return f"lower bound{what}: {value:,} B (most bytes alive at once)"


def _plan_chart(
    id: str, title: str, rows: list[tuple[str, str, int, int, int, int]], bound: int, layers: int
) -> Chart:
    """An arena chart of (name, group, first, last, offset, size) rectangles."""
    return Chart(
        id,
        title,
        "intervals",
        tuple(r[0] for r in rows),
        tuple(
            Series(k, tuple(r[i] for r in rows))
            for i, k in enumerate(("first", "last", "offset", "size"), start=2)
        ),
        x_label="layer (from the one that writes a buffer to the last that reads it)",
        y_label="offset [bytes]",
        precision=0,
        groups=tuple(r[1] for r in rows),
        lines=((bound, _bound_label(bound)),),
        layers=layers,
    )


def fast_buffer_contents(model: MliModel, plan: FastPlan) -> list[Buffer]:
    """What occupies the fast buffer, as buffers with lifetimes: the resident activations,
    each layer's staged copies (one block, "staging N"), the look-up tables (all along)."""
    end = max(len(model.layers) - 1, 0)
    bufs = [p.buffer for p in plan.resident.placements]
    for pos, st in enumerate(plan.layers):
        extent = max((s.offset + s.bytes for s in st.slots), default=plan.staging_offset)
        if extent > plan.staging_offset:
            bufs.append(Buffer(f"staging {pos}", extent - plan.staging_offset, pos, pos))
    bufs += [Buffer(f"{k} table", 2 * LUT_LENGTHS[k], 0, end) for k in plan.luts]
    return bufs


def arena_charts(model: MliModel, arena: ArenaPlan, fast: FastPlan | None) -> list[Chart]:
    """The arena chart (one arena), or the fast buffer's and, when it is used, the slow
    arena's; buffers coloured by the kind of layer that writes them, the lower bound drawn."""
    group, n = _writers(model), len(model.layers)

    def rows(plan: ArenaPlan):
        return [
            (p.buffer.name, group.get(p.buffer.name, "input"), p.buffer.first, p.buffer.last)
            + (p.offset, p.buffer.size)
            for p in plan.placements
        ]

    if fast is None:
        title = f"Activation arena: {arena.arena_bytes:,} bytes over the layers"
        return [_plan_chart("arena-plan", title, rows(arena), arena.lower_bound, n)]
    contents = fast_buffer_contents(model, fast)
    extra = [
        (b.name, "staging" if b.name.startswith("staging") else "tables", b.first, b.last)
        + (
            fast.luts[b.name[: -len(" table")]]
            if b.name.endswith(" table")
            else fast.staging_offset,
        )
        + (b.size,)
        for b in contents[len(fast.resident.placements) :]
    ]
    title = f"Fast buffer: {fast.fast_bytes:,} of {fast.budget:,} bytes over the layers"
    bound = live_lower_bound(contents, fast.align)
    charts = [_plan_chart("arena-plan", title, rows(fast.resident) + extra, bound, n)]
    if fast.slow.placements:
        title = f"Slow arena: {fast.slow_bytes:,} bytes over the layers"
        slow = fast.slow
        charts.append(_plan_chart("arena-plan-slow", title, rows(slow), slow.lower_bound, n))
    return charts
