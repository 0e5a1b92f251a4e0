"""The lowering driver: IR `Graph` + `Settings` -> `MliModel`, one `MliLayer` per kernel call,
every number final; and the checks it runs first (support, kernels, value ranges).

The lowering decides, per TFLite op, the MLI kernel (kernels.py), the layout of its constants, the
encoded quantization of every tensor (quant.py) and the kernel config. Where MLI needs something
TFLite expresses differently it inserts layers and says so in `notes`: "convert" layers where the
format changes between layers or a kernel leaves other output parameters than the model expects,
"relu" layers for fused activations a kernel cannot apply, "view" layers for reshapes.

The lowering-stage graph passes (`mlitool.passes.runner`) run between the support check and
lowering, on a copy of the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlitool import ir
from mlitool.errors import MlitoolError, OptionError, RefusedOps, UnsupportedError
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.facts import layer_kind
from mlitool.mli.target import Target
from mlitool.mli.types import FORMATS, MliModel
from mlitool.ops import spec as opspec

if TYPE_CHECKING:
    from mlitool.settings import Settings

__all__ = ["check_supported", "float_activations", "lower"]


def check_supported(graph: ir.Graph, target: Target, layout: str) -> None:
    """UnsupportedError listing every op that cannot be lowered (the support check)."""
    from mlitool.mli.lower.support import refusal

    found = [(op, refusal(graph, op, target, layout)) for op in graph.ops]
    problems = [(op.index, op.shown_type, reason) for op, reason in found if reason]
    if problems:
        raise RefusedOps(f"cannot be lowered for MLI {target.version}", problems)


RANGES_REMEDY = "calibrate (--calibration) or convert weights only (--weights-only)"


def lower(
    graph: ir.Graph,
    settings: Settings | None = None,
    *,
    weights_only: bool = False,
    ranges: dict[int, tuple[float, float]] | None = None,
    source: str = "",
    ranges_remedy: str = RANGES_REMEDY,
    **options,
) -> MliModel:
    """Lower `graph` with `settings` (its Target, format, layout and per-layer overrides:
    {selector: format}, selector = op index (int), "op:TYPE", or an op's output tensor name).
    A library caller may give `options` instead (format, mli_version, layout, overrides:
    `settings.settings_for`).

    Float activations need `ranges` (tensor index -> (min, max)) unless `weights_only`.
    Raises UnsupportedError (listing every unsupported op, or naming the layer whose format the
    MLI version lacks) and OptionError (bad option, missing ranges).
    """
    if settings is not None and options:
        raise TypeError(f"lower: give settings or {', '.join(options)}, not both")
    # Here, not at the top: reading a model loads the op table, which loads lowering's modules;
    # the passes (and the executor constant folding runs) load only for a lowering.
    from mlitool.passes.context import PassContext
    from mlitool.passes.runner import LOWERING, run_passes
    from mlitool.settings import settings_for

    s = settings if settings is not None else settings_for(**options)
    b = Builder(graph, s, weights_only, ranges or {}, source)
    check_supported(graph, b.target, b.layout)  # the refusals name the model's ops
    _check_kernels(b)
    _check_ranges(b, ranges_remedy)
    b.g = run_passes(graph, PassContext(b.target), LOWERING)  # lowering reads the rewrite
    failed: list[MlitoolError] = []
    lost: set[int] = set()  # outputs of layers that failed: their readers wait
    for op in b.g.ops:
        if lost.intersection(op.inputs):
            lost.update(op.outputs)
            continue
        try:  # a refusal leaves no pending state (passes decide across ops): any
            opspec.spec(op.type).lower(b, op, b.layer_format(op))  # other error is a bug
        except MlitoolError as exc:
            failed.append(_located(exc, op, b.layer_format(op)))
            lost.update(op.outputs)
    if failed:
        first = failed[0]
        text = "; ".join(e.message for e in failed)
        raise type(first)(
            text if len(failed) == 1 else f"{len(failed)} layers cannot be lowered: {text}",
            first.path,
        )
    sats = sum(1 for t in b.tensors.values() if any("saturated" in n for n in t.notes))
    if sats:
        b.warnings.append(
            f"{sats} constant tensor(s) saturated when requantized (see the tensors' notes)"
        )
    inputs = [b.primary[i] for i in graph.inputs if i in b.primary]
    outputs = [b.primary[i] for i in graph.outputs if i in b.primary]
    return MliModel(
        source=source,
        mli_version=b.target.version,
        format=s.format,
        layout=b.layout,
        tensors=b.tensors,
        layers=b.layers,
        inputs=inputs,
        outputs=outputs,
        warnings=b.warnings,
    )


def _located(exc: MlitoolError, op: ir.Op, fmt: str) -> MlitoolError:
    """The error of one layer, naming the op, with the remedy for scales SA8 cannot hold."""
    message = exc.message if op.label in exc.message else f"{op.label}: {exc.message}"
    if isinstance(exc, UnsupportedError) and fmt == "sa8" and "scale" in exc.message:
        message += (
            f" (remedy: run this layer in fx16, [[layer]] index = {op.index} "
            'format = "fx16" in mlitool.toml)'
        )
    return type(exc)(message, exc.path)


def _check_kernels(b: Builder) -> None:
    """Every layer's kind has a kernel in its format on this MLI version, and 16x8 layers are
    not squeezed into 8-bit activations (all refusals at once)."""
    bad = []
    for op in b.g.ops:
        kind = layer_kind(b.g, op)
        fmt = b.layer_format(op)
        wide = [
            b.g.tensors[i].name
            for i in (*op.inputs, *op.outputs)
            if i >= 0
            and b.g.tensors[i].data is None
            and b.g.tensors[i].dtype == "int16"
            and b.g.tensors[i].quant is not None  # a raw int16 (CAST): integers, FX16 frac 0
            and not b.g.tensors[i].is_variable
        ]  # LSTM state: lowering sets it
        if wide and FORMATS[fmt][0].bits < 16:
            bad.append(
                (
                    op.index,
                    op.shown_type,
                    f"int16 activations (a 16x8 model) would lose 8 bits in {fmt}: convert "
                    "with --format fx16 or fx8w16d (FX16 activations)",
                )
            )
            continue
        if b.target.kernel(kind, fmt, b.layout) is None:
            bad.append((op.index, op.shown_type, b.target.no_kernel(kind, fmt, b.layout)))
    if bad:
        raise RefusedOps(f"have no kernel on MLI {b.target.version}", bad)


def float_activations(graph: ir.Graph) -> list[int]:
    """The float32 activation tensors lowering quantizes from value ranges (none in an int8
    model: there --calibration and --weights-only change nothing)."""
    found: list[int] = []
    for op in graph.ops:
        known = opspec.get(op.type)  # an unknown op is the support check's to refuse
        if known is not None and known.kind == "convert":  # QUANTIZE, DEQUANTIZE: float on one side
            continue
        if known is not None and known.keeps_float:  # FP32 in and out (detection post-process)
            continue
        for i in list(op.inputs) + list(op.outputs):
            t = graph.tensor(i)
            if t is None or t.data is not None or t.dtype != "float32" or t.is_variable:
                continue
            if i not in found:
                found.append(i)
    return found


def _check_ranges(b: Builder, remedy: str) -> None:
    """Float activations have value ranges, unless only the weights are converted."""
    if b.weights_only:
        return
    missing = [
        i for i in float_activations(b.g) if i not in b.ranges and b.g.tensors[i].qdq is None
    ]  # a QDQ file's pairs give their tensors' parameters (passes.qdq)
    if missing:
        names = ", ".join(f"{i} ({b.g.tensors[i].name})" for i in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise OptionError(
            f"float activations need value ranges to be quantized: tensors {names}{more}; {remedy}"
        )
