"""`mlitool convert`: read → (calibrate) → lower → emit, and a summary of what was written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlitool.errors import OptionError
from mlitool.mli.types import FORMATS, TARGETS, MliModel


@dataclass
class ConvertOptions:
    out: Path
    name: str | None = None
    format: str | None = None          # None: the config's, else sa8
    mli: str | None = None             # None: the config's, else 2.0
    layout: str | None = None          # None: the config's, else hwc (2.x) / chw (1.x)
    config: Path | None = None
    header: str = "mli_api.h"
    align: int | None = None
    section: str | None = None
    single_header: bool = False
    runtime: bool = True               # NAME_init / NAME_run in the sources
    target: str | None = None          # the MLI build the header names (run's --target/--round/--accu)
    round_mode: str | None = None
    accu: str | None = None
    weights_only: bool = False
    calibration: Path | None = None
    calibration_method: str = "minmax"
    overrides: dict = field(default_factory=dict)


def default_name(model_path: Path) -> str:
    """A C-friendly base name from the model file name: `kws_ref_model_int8.tflite` → same stem."""
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in model_path.stem)
    return stem if stem and not stem[0].isdigit() else f"model_{stem}"


def resolve(opts: ConvertOptions, model_path: Path) -> tuple[str, str, str, dict, str]:
    """Settle format, target, layout, overrides and name from options over the config file."""
    from mlitool.config import load_config

    cfg = load_config(opts.config, search_dir=Path.cwd() if opts.config is None else None)
    fmt = (opts.format or cfg.format or "sa8").lower()
    target = opts.mli or cfg.mli or "2.0"
    if fmt not in FORMATS:
        raise OptionError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if target not in TARGETS:
        raise OptionError(f"--mli {target!r}: choose one of {', '.join(TARGETS)}")
    layout = (opts.layout or cfg.layout or ("hwc" if target.startswith("2") else "chw")).lower()
    if layout not in ("hwc", "chw"):
        raise OptionError(f"--layout {layout!r}: choose hwc or chw")
    if layout == "chw" and target.startswith("2"):
        raise OptionError("--layout chw exists only for MLI 1.x targets (MLI 2.x kernels are HWC)")
    overrides = {**cfg.overrides, **opts.overrides}
    return fmt, target, layout, overrides, opts.name or default_name(model_path)


def lower_model(model, model_path: Path, opts: ConvertOptions, *,
                executed_by: str | None = None) -> tuple[MliModel, str]:
    """Calibrate (float models, when asked) and lower an already-read `ir.Model` exactly as
    `convert` does; returns the MLI model (reader warnings first) and the output base name.
    `executed_by` names a command that runs the result, which needs an MLI 2.x target."""
    from mlitool.mli.lower import lower

    fmt, target, layout, overrides, name = resolve(opts, model_path)
    if executed_by and target != "2.0":
        raise OptionError(f"{executed_by} runs MLI 2.0.2 arithmetic; the configuration selects MLI "
                          f"{target}, which has no reference build to check against")
    ranges = None
    if opts.calibration is not None:
        from mlitool.calibrate import calibration_ranges

        ranges = calibration_ranges(model.main, opts.calibration, opts.calibration_method)
    mli = lower(model.main, format=fmt, target=target, layout=layout, overrides=overrides,
                weights_only=opts.weights_only, ranges=ranges, source=str(model_path))
    mli.warnings[:0] = list(model.warnings)
    return mli, name


def build_model(model_path: Path, opts: ConvertOptions) -> tuple[MliModel, str]:
    """Everything but writing: returns the MLI model and the output base name."""
    from mlitool.tflite_reader import read_model

    return lower_model(read_model(model_path), model_path, opts)


def verified_build(opts: ConvertOptions) -> str:
    """The MLI build the emitted header names: "ROUND_MODE=UP FULL_ACCU=OFF" for the default."""
    from mlitool.execute.presets import arith_for, describe

    return describe(arith_for(opts.target, opts.round_mode, opts.accu))


def convert(model_path: str | Path, opts: ConvertOptions) -> dict[str, Any]:
    """Convert and write NAME.h / NAME.c / NAME.json atomically; returns a JSON-ready summary."""
    from mlitool.emit.symbols import check_not_shadowing
    from mlitool.emit.writer import emit

    if opts.name is not None:               # refused before any work (emit checks it again)
        check_not_shadowing(opts.name, opts.header)
    model_path = Path(model_path)
    mli, name = build_model(model_path, opts)
    out = Path(opts.out)
    if out.exists() and not out.is_dir():
        raise OptionError("--out exists and is not a directory", str(out))
    out.mkdir(parents=True, exist_ok=True)
    written = emit(mli, out, name, header=opts.header, align=opts.align, section=opts.section,
                   single_header=opts.single_header, runtime=opts.runtime,
                   verified_build=verified_build(opts))
    return summary(mli, written)


def summary(mli: MliModel, written: list[Path]) -> dict[str, Any]:
    layers = [{"index": layer.index, "op": layer.op_type, "kind": layer.kind,
               "kernel": layer.kernel, "output": layer.outputs[0], "notes": list(layer.notes)}
              for layer in mli.layers]
    const_bytes = sum(t.nbytes for t in mli.tensors.values()
                      if t.role.is_constant and t.buffer is None)
    return {
        "model": mli.source,
        "target": mli.target,
        "format": mli.format,
        "layout": mli.layout,
        "files": [str(p) for p in written],
        "layers": layers,
        "constant_bytes": const_bytes,
        "warnings": list(mli.warnings),
    }
