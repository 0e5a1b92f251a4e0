"""`mlitool convert`: the pipeline's MLI model emitted as C, and a summary of what was written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlitool.errors import OptionError
from mlitool.mli.types import MliModel
from mlitool.pipeline import ModelOptions, load
from mlitool.plumbing.progress import Progress


@dataclass(frozen=True)
class EmitOptions:
    """Where and how convert writes the C sources."""

    out: Path
    name: str | None = None  # None: from the model file name
    header: str = "mli_api.h"
    align: int | None = None
    section: str | None = None
    single_header: bool = False
    runtime: bool = True  # NAME_init / NAME_run in the sources


def default_name(model_path: Path) -> str:
    """A C-friendly base name from the model file name: `kws_ref_model_int8.tflite` → same stem."""
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in model_path.stem)
    return stem if stem and not stem[0].isdigit() else f"model_{stem}"


def verified_build(opts: ModelOptions) -> str:
    """The MLI build the emitted header names: "ROUND_MODE=UP FULL_ACCU=OFF" for the default."""
    from mlitool.execute.presets import describe

    return describe(opts.arith())


def convert(
    model_path: str | Path,
    opts: ModelOptions,
    emit_opts: EmitOptions,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Convert and write NAME.h / NAME.c / NAME.json atomically; returns a JSON-ready summary.
    `progress` shows calibration, the one stage that can take long."""
    from mlitool.emit.symbols import check_file_name, check_not_shadowing
    from mlitool.emit.writer import emit
    from mlitool.pipeline import resolve
    from mlitool.plumbing.fsio import make_dirs

    model_path = Path(model_path)
    name = emit_opts.name or default_name(model_path)
    check_file_name(name)  # refused before any work (emit checks again)
    check_not_shadowing(name, emit_opts.header)
    fast_memory = resolve(opts).fast_memory
    if fast_memory is not None and not emit_opts.runtime:
        raise OptionError("--fast-memory plans the runtime; it cannot go with --no-runtime")
    _, mli = load(model_path, opts, progress=progress)
    out = Path(emit_opts.out)
    if out.exists() and not out.is_dir():
        raise OptionError("--out exists and is not a directory", str(out))
    make_dirs(out)
    written = emit(
        mli,
        out,
        name,
        header=emit_opts.header,
        align=emit_opts.align,
        section=emit_opts.section,
        single_header=emit_opts.single_header,
        runtime=emit_opts.runtime,
        verified_build=verified_build(opts),
        fast_memory=fast_memory,
    )
    return summary(mli, written)


def summary(mli: MliModel, written: list[Path]) -> dict[str, Any]:
    layers = [
        {
            "index": layer.index,
            "op": layer.op_type,
            "kind": layer.kind,
            "kernel": layer.kernel,
            "output": layer.outputs[0],
            "notes": list(layer.notes),
        }
        for layer in mli.layers
    ]
    const_bytes = sum(
        t.nbytes for t in mli.tensors.values() if t.role.is_constant and t.buffer is None
    )
    return {
        "model": mli.source,
        "target": mli.mli_version,
        "format": mli.format,
        "layout": mli.layout,
        "files": [str(p) for p in written],
        "layers": layers,
        "constant_bytes": const_bytes,
        "config": mli.config,
        "warnings": list(mli.warnings),
    }
