"""`mlitool convert`: the pipeline's MLI model emitted as C, and a summary of what was written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlitool.errors import OptionError
from mlitool.mli.types import MliModel
from mlitool.pipeline import ModelOptions, Settings, load, settle
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
    selftest: int | None = None  # NAME_selftest.c with this many inputs (None: the config's)
    selftest_input: Path | None = None  # real samples for it (else seeded random inputs)
    specialize: bool = True  # call the kernel-size specializations TFLite Micro picks


def default_name(model_path: Path) -> str:
    """A C-friendly base name from the model file name: `kws_ref_model_int8.tflite` → same stem."""
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in model_path.stem)
    return stem if stem and not stem[0].isdigit() else f"model_{stem}"


def verified_build(s: Settings) -> str:
    """The MLI build the emitted header names: "ROUND_MODE=UP FULL_ACCU=OFF" for the default."""
    from mlitool.execute.mli.presets import describe

    return describe(s.arith)


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
    from mlitool.plumbing.fsio import make_dirs

    model_path = Path(model_path)
    name = emit_opts.name or default_name(model_path)
    check_file_name(name)  # refused before any work (emit checks again)
    check_not_shadowing(name, emit_opts.header)
    s = settle(opts)
    fast_memory = s.fast_memory
    if fast_memory is not None and not emit_opts.runtime:
        raise OptionError("--fast-memory plans the runtime; it cannot go with --no-runtime")
    graph, mli = load(model_path, s, progress=progress)
    if emit_opts.specialize:
        from mlitool.mli.specialize import specialize

        mli = specialize(mli)
    st = selftest_data(graph, mli, s, emit_opts)
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
        verified_build=verified_build(s),
        selftest=st,
        fast_memory=fast_memory,
    )
    result = summary(mli, written)
    from mlitool.footprint.summary import footprint, footprint_text

    result["footprint"] = footprint(graph, mli, fast_memory, emit_opts.specialize)
    result["summary"] = footprint_text(result["footprint"])
    if st is not None:
        from mlitool.emit.selftest import SelfTest

        result["selftest"] = {"samples": int(st.crcs.shape[0]), "build": st.build}
        result["selftest"]["flash_bytes"] = SelfTest.flash_of(st)
    return result


def selftest_data(graph, mli: MliModel, s: Settings, emit_opts: EmitOptions):
    """The self-test's inputs, expected CRCs (`mlitool.crclog`) and expected output bytes (the
    `mli` executor with the build the header names), or None when no self-test is asked for (--selftest, else the
    config's `selftest`; --selftest-input alone takes every sample of the file)."""
    n = emit_opts.selftest
    if n is None:
        n = s.file.selftest
    if n is None and emit_opts.selftest_input is None:
        return None
    if n is not None and n < 1:
        raise OptionError(f"--selftest {n}: give the number of test inputs (1 or more)")
    if not mli.target.executable:
        raise OptionError(
            f"--selftest: mlitool computes MLI 2.x only; MLI {mli.mli_version} has no "
            "reference build to take the expected CRCs from"
        )
    from mlitool.crclog import layer_crcs
    from mlitool.emit.selftest import SelfTestData
    from mlitool.execute.mli.bridge import model_inputs
    from mlitool.execute.mli.walker import run_model
    from mlitool.execute.reference.inputs import random_inputs

    if emit_opts.selftest_input is not None:
        from mlitool.datafile import load_inputs

        given = load_inputs(emit_opts.selftest_input, graph)
        have = next(iter(given.values())).shape[0]
        n = have if n is None else n
        if have < n:
            raise OptionError(
                f"--selftest {n}: the file has {have} sample(s)", str(emit_opts.selftest_input)
            )
        given = {k: v[:n] for k, v in given.items()}
        source = f"the first {n} of {emit_opts.selftest_input.name}"
    else:
        given = random_inputs(graph, n, seed=0)
        source = "seeded random inputs over each input's range (seed 0)"
    inputs = model_inputs(graph, mli, given)
    values = run_model(mli, inputs, s.arith, keep=True)  # one run: CRCs and outputs
    crcs = layer_crcs(mli, values, next(iter(inputs.values())).shape[0])
    outputs = {name: values[name] for name in mli.outputs}
    return SelfTestData(inputs, crcs, outputs, verified_build(s), source)


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
