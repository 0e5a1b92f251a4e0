"""The one way from a .tflite file to an MLI model: read (+ the model-stage graph passes +
validate) → (calibrate) → lower, shared by convert, run, verify, report and tune, with the
options they all take settled once (`mlitool.settings`: `ModelOptions` → `Settings`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mlitool import ir, op_families
from mlitool.errors import OptionError, UnsupportedError
from mlitool.mli.types import MliModel
from mlitool.passes.runner import fold_model
from mlitool.plumbing.progress import Progress
from mlitool.settings import ModelOptions, Settings, settle

op_families.load()  # the entry point of every command: the op registry, once

__all__ = [
    "ModelOptions",
    "Settings",
    "calibrate",
    "fold_model",
    "load",
    "lower_model",
    "read",
    "settle",
]


def lower_model(
    model: ir.Model,
    model_path: Path,
    s: Settings,
    *,
    executed_by: str | None = None,
    calibrated_by: str | None = None,
    progress: Progress | None = None,
    ranges: dict | None = None,
) -> MliModel:
    """Calibrate (float models, when asked) and lower an already-read model with settled
    options `s`; the MLI model's warnings start with the reader's. `executed_by` names a
    command that runs the result, which needs MLI 2.0 and real activation ranges (it has no
    --weights-only); `calibrated_by` a command that has no --weights-only but takes any MLI
    version. `ranges`: activation ranges `calibrate` already gave (a command lowering many
    variants)."""
    from mlitool.config import check_overrides
    from mlitool.mli.lower.driver import float_activations, lower

    check_overrides(model.main, s.overrides, s.config)
    if executed_by and not s.target.executable:
        raise OptionError(
            f"{executed_by} runs MLI 2.0.2 arithmetic; the configuration selects MLI "
            f"{s.target.version}, which has no reference build to check against"
        )
    ignored = _ignored_options(s.options) if not float_activations(model.main) else []
    if ignored:  # an int8 model: nothing to calibrate, no float activation to leave as is
        s = replace(s, options=replace(s.options, calibration=None, weights_only=False))
    if ranges is None:
        ranges = calibrate(model, s, progress)
    command = executed_by or calibrated_by  # one without --weights-only: calibration it is
    remedy = (
        {}
        if command is None
        else {"ranges_remedy": f"give {command} real inputs to calibrate on (--calibration DATA)"}
    )
    mli = lower(
        model.main,
        s,
        weights_only=s.options.weights_only,
        ranges=ranges,
        source=str(model_path),
        **remedy,
    )
    notes = [f"{' and '.join(ignored)} ignored: the model's activations are already quantized"]
    mli.warnings[:0] = list(model.warnings) + (notes if ignored else [])
    mli.batch_fixed, mli.folded_ops = list(model.batch_fixed), list(model.folded_ops)
    mli.removed_ops = list(model.removed_ops)
    mli.config = s.config
    return mli


def calibrate(model: ir.Model, s: Settings, progress: Progress | None = None) -> dict | None:
    """Activation ranges from --calibration (None without it, or for an int8 model)."""
    from mlitool.mli.lower.driver import float_activations

    opts = s.options
    if opts.calibration is None or not float_activations(model.main):
        return None
    from mlitool.calibrate import calibration_ranges
    from mlitool.mli.lower.driver import check_supported

    # Calibrate only what lowering takes: its refusals (e.g. an op reading an empty tensor)
    # come before a long run, and the float run meets no tensor without elements.
    check_supported(model.main, s.target, s.layout)
    _check_inputs_have_elements(model.main)
    return calibration_ranges(model.main, opts.calibration, opts.calibration_method, progress)


def _ignored_options(opts: ModelOptions) -> list[str]:
    given = {"--calibration": opts.calibration is not None, "--weights-only": opts.weights_only}
    return [name for name, on in given.items() if on]


def _check_inputs_have_elements(graph: ir.Graph) -> None:
    for i in graph.inputs:
        t = graph.tensors[i]
        if t.size == 0:
            raise UnsupportedError(
                f"graph input {t.name or i!r} has no elements (shape "
                f"{list(t.shape)}): calibration takes ranges from inputs "
                "with elements"
            )


def read(model_path: Path) -> ir.Model:
    """Read a .tflite file, check its ops' structure (arity, options: what the passes read),
    run the model-stage graph passes on its main graph (float16 weights and constant ops folded,
    the batch fixed to 1, ...) and validate it (ModelFormatError on a bad file or graph)."""
    from mlitool.tflite.reader import read_model
    from mlitool.tflite.validate import check_graph
    from mlitool.tflite.validate_structure import check_structure

    model = read_model(model_path)
    check_structure(model.main, str(model_path))
    fold_model(model)
    check_graph(model.main, str(model_path))
    return model


def load(
    model_path: Path,
    s: Settings,
    *,
    executed_by: str | None = None,
    calibrated_by: str | None = None,
    progress: Progress | None = None,
) -> tuple[ir.Graph, MliModel]:
    """Read, validate, calibrate (a progress stage) and lower with settled options `s`: (main
    graph, its MLI model)."""
    model = read(model_path)
    return model.main, lower_model(
        model,
        Path(model_path),
        s,
        executed_by=executed_by,
        calibrated_by=calibrated_by,
        progress=progress,
    )
