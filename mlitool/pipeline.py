"""The one way from a .tflite file to an MLI model: read (+ validate) → (calibrate) → lower,
shared by convert, run, verify and report, with the options they all take (`ModelOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from mlitool import ir
from mlitool.errors import OptionError, UnsupportedError
from mlitool.execute.mli_intops import Arith
from mlitool.mli.target import DEFAULT, Target, check_options
from mlitool.mli.types import MliModel
from mlitool.plumbing.progress import Progress


@dataclass(frozen=True)
class ModelOptions:
    """Which MLI model to make of a .tflite file, and the MLI build that runs it.

    None means: the config file's value, else the default (sa8, MLI 2.0, hwc for 2.x / chw for
    1.x; build preset vpx). The build fields matter only where the model is executed."""

    format: str | None = None
    mli: str | None = None  # MLI version: 2.0 | 1.1 | 1.0
    layout: str | None = None
    config: Path | None = None
    overrides: dict = field(default_factory=dict)  # per-layer, over the config file's
    weights_only: bool = False
    calibration: Path | None = None
    calibration_method: str = "minmax"
    build: str | None = None  # preset (the CLI's --target): vpx | em
    round_mode: str | None = None  # up | convergent, over the preset's
    accu: str | None = None  # full | reduced, over the preset's
    fast_memory: str | None = None  # convert's --fast-memory SIZE, over the config's

    def arith(self) -> Arith:
        """The arithmetic of the chosen build (OptionError on a bad name)."""
        from mlitool.execute.presets import arith_for

        return arith_for(self.build, self.round_mode, self.accu)


@dataclass(frozen=True)
class Settings:
    """ModelOptions settled against the config file."""

    format: str
    target: Target
    layout: str
    overrides: dict
    config: str | None  # the config file read, as shown to the user
    fast_memory: int | None = None  # bytes of fast memory the runtime is planned for


def resolve(opts: ModelOptions) -> Settings:
    """Settle format, MLI version, layout and overrides from options over the config file."""
    from mlitool.config import load_config

    cfg = load_config(opts.config)
    fmt = (opts.format or cfg.format or "sa8").lower()
    layout = opts.layout or cfg.layout
    overrides = {**cfg.overrides, **opts.overrides}
    target, layout = check_options(
        fmt, opts.mli or cfg.mli or DEFAULT.version, layout and layout.lower(), overrides
    )
    fast = cfg.fast_memory
    if opts.fast_memory is not None:
        from mlitool.mli.placement import parse_size

        fast = parse_size(opts.fast_memory, "--fast-memory")
    if fast is not None and not target.mov_staging:
        raise OptionError(
            f"--fast-memory needs mli_mov_tensor_sync, which MLI {target.version} does not have"
        )
    return Settings(fmt, target, layout, overrides, cfg.path, fast)


def lower_model(
    model: ir.Model,
    model_path: Path,
    opts: ModelOptions,
    *,
    executed_by: str | None = None,
    calibrated_by: str | None = None,
    progress: Progress | None = None,
    ranges: dict | None = None,
) -> MliModel:
    """Calibrate (float models, when asked) and lower an already-read model; the MLI model's
    warnings start with the reader's. `executed_by` names a command that runs the result,
    which needs MLI 2.0 and real activation ranges (it has no --weights-only);
    `calibrated_by` a command that has no --weights-only but takes any MLI version. `ranges`:
    activation ranges `calibrate` already gave (a command lowering many variants)."""
    from mlitool.config import check_overrides
    from mlitool.mli.lower import float_activations, lower

    s = resolve(opts)
    check_overrides(model.main, s.overrides, s.config)
    if executed_by and not s.target.executable:
        raise OptionError(
            f"{executed_by} runs MLI 2.0.2 arithmetic; the configuration selects MLI "
            f"{s.target.version}, which has no reference build to check against"
        )
    ignored = _ignored_options(opts) if not float_activations(model.main) else []
    if ignored:  # an int8 model: nothing to calibrate, no float activation to leave as is
        opts = replace(opts, calibration=None, weights_only=False)
    if ranges is None:
        ranges = calibrate(model, opts, s, progress)
    command = executed_by or calibrated_by  # one without --weights-only: calibration it is
    remedy = (
        {}
        if command is None
        else {"ranges_remedy": f"give {command} real inputs to calibrate on (--calibration DATA)"}
    )
    mli = lower(
        model.main,
        format=s.format,
        mli_version=s.target.version,
        layout=s.layout,
        overrides=s.overrides,
        weights_only=opts.weights_only,
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


def calibrate(
    model: ir.Model, opts: ModelOptions, s: Settings, progress: Progress | None = None
) -> dict | None:
    """Activation ranges from --calibration (None without it, or for an int8 model)."""
    from mlitool.mli.lower import float_activations

    if opts.calibration is None or not float_activations(model.main):
        return None
    from mlitool.calibrate import calibration_ranges
    from mlitool.mli.lower import check_supported

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
    fold its float16 weights and its constant ops (batch fixed to 1) and validate its main graph
    (ModelFormatError on a bad file or graph)."""
    from mlitool.tflite.reader import read_model
    from mlitool.tflite.validate import check_graph
    from mlitool.tflite.validate_structure import check_structure

    model = read_model(model_path)
    check_structure(model.main, str(model_path))
    fold_model(model)
    check_graph(model.main, str(model_path))
    return model


def fold_model(model: ir.Model) -> None:
    """Fold `model`'s main graph in place, as every command sees it: float16 weights into
    float32 constants, then constant ops (the batch fixed to 1), then nearest upsampling built
    of EXPAND_DIMS / TILE / RESHAPE into one RESIZE_NEAREST_NEIGHBOR, then dilated convs run
    through the batch (SPACE_TO_BATCH_ND ... BATCH_TO_SPACE_ND) into one CONV_2D, then an int8 model's float
    islands (DEQUANTIZE -> element-wise op -> QUANTIZE) into the int8 op; recorded on the model."""
    from mlitool.tflite.constant_fold import fold_constants
    from mlitool.tflite.dilated import fuse_space_to_batch_conv
    from mlitool.tflite.fold import fold_float16_dequantize
    from mlitool.tflite.islands import fuse_float_islands
    from mlitool.tflite.upsampling import fuse_tiled_upsampling

    g, done = fold_constants(fold_float16_dequantize(model.main))
    g, upsampling = fuse_tiled_upsampling(g)
    g, dilated = fuse_space_to_batch_conv(g)
    model.subgraphs[0], islands = fuse_float_islands(g)
    model.rewritten_ops = {**upsampling, **dilated, **islands}
    model.batch_fixed = list(done.batch_fixed)
    model.folded_ops = list(done.folded)
    model.removed_ops = list(done.removed)


def load(
    model_path: Path,
    opts: ModelOptions,
    *,
    executed_by: str | None = None,
    calibrated_by: str | None = None,
    progress: Progress | None = None,
) -> tuple[ir.Graph, MliModel]:
    """Read, validate, calibrate (a progress stage) and lower: (main graph, its MLI model)."""
    model = read(model_path)
    return model.main, lower_model(
        model,
        Path(model_path),
        opts,
        executed_by=executed_by,
        calibrated_by=calibrated_by,
        progress=progress,
    )
