"""`mlitool convert`: requantize a model and write NAME.h, NAME.c and NAME.json; the table of
its layers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import dumps, finish, model_options, path_option, progress_of
from mlitool.cli.groups import grouped


@app.command("convert", epilog=EXIT_CODES)
@grouped
def convert_cmd(
    model: opt.ModelArg,
    name: Optional[str] = typer.Option(
        None, "--name", help="Base name of NAME.h/.c/.json [default: the model file's stem]."
    ),
    quantization=opt.QUANTIZATION,
    mli: opt.MliOpt = None,
    layout: opt.LayoutOpt = None,
    header: str = typer.Option("mli_api.h", "--header", help="MLI API header to #include."),
    align: Optional[int] = typer.Option(
        None, "--align", help="Alignment attribute for data arrays."
    ),
    section: Optional[str] = typer.Option(None, "--section", help="Linker section for weights."),
    single_header: bool = typer.Option(
        False, "--single-header", help="Write one self-contained NAME.h with static definitions."
    ),
    no_runtime: bool = typer.Option(
        False,
        "--no-runtime",
        help="Tensors and configs only: no NAME_init / NAME_run (the output of earlier versions).",
    ),
    selftest: Optional[int] = typer.Option(
        None,
        "--selftest",
        metavar="N",
        show_default=False,
        help="Also write NAME_selftest.c: N test inputs and every layer's CRC-32 for the build "
        "the header names [default: the config's selftest, else none].",
    ),
    selftest_input: Optional[Path] = path_option(
        "--selftest-input",
        metavar="FILE",
        help=".npy / .npz real samples for --selftest [default: seeded random inputs].",
    ),
    fast_memory: opt.FastMemoryOpt = None,
    no_specialize: bool = typer.Option(
        False,
        "--no-specialize",
        help="Call MLI's generic kernels only, not the kernel-size specializations TFLite "
        "Micro picks (conv 1x1/3x3/5x5, depthwise 3x3/5x5, pooling 2x2/3x3, ...).",
    ),
    build=opt.BUILD,
    weights_only: bool = typer.Option(
        False,
        "--weights-only",
        help="Float models without calibration: convert weights, leave activations unquantized.",
    ),
    output=opt.OUTPUT,
) -> None:
    """Requantize a model into MLI formats and write NAME.h, NAME.c and NAME.json into -o DIR
    [default: the working directory]."""
    model_opts = model_options(
        quantization,
        build,
        mli=mli,
        layout=layout,
        weights_only=weights_only,
        fast_memory=fast_memory,
    )
    from mlitool.convert import EmitOptions, convert

    emit_opts = EmitOptions(
        out=output.out or Path("."),
        name=name,
        header=header,
        align=align,
        section=section,
        single_header=single_header,
        runtime=not no_runtime,
        selftest=selftest,
        selftest_input=selftest_input,
        specialize=not no_specialize,
    )
    from mlitool.errors import UnsupportedError

    try:
        with progress_of(output) as progress:
            result = convert(model, model_opts, emit_opts, progress)
    except UnsupportedError as exc:
        if output.as_json:  # a pipeline reads the refusals from stdout too (and the exit code, 4)
            refusal = {"model": str(model), "converted": False, "refusals": refusals_of(exc)}
            sys.stdout.write(dumps(refusal))
        raise
    finish(result, output, render=lambda: _render_convert(result))


def _render_convert(result: dict) -> None:
    from mlitool.plumbing.console import stdout_console, table

    console = stdout_console()
    console.print(f"{Path(result['model']).stem}: {result['summary']}", markup=False)
    rows = [
        [
            str(layer["index"]),
            layer["op"],
            layer["kernel"] or "(view)",
            layer["output"],
            "; ".join(layer["notes"]),
        ]
        for layer in result["layers"]
    ]
    console.print(
        table(
            f"{result['model']} → MLI {result['target']} ({result['format']})",
            ("#", "op", "MLI kernel", "output", "notes"),
            rows,
            width=console.width,
        )
    )
    if "selftest" in result:
        st = result["selftest"]
        console.print(
            f"self-test: {st['samples']} inputs, {st['flash_bytes']['total']:,} bytes of "
            f"constant data, CRCs for {st['build']}",
            markup=False,
        )
    console.print(f"config: {result['config'] or 'none'}", markup=False)


def refusals_of(exc) -> list[dict]:
    """The refusals of an UnsupportedError: one entry per reason with the ops it applies to."""
    groups = getattr(exc, "groups", None)
    if groups is None:
        return [{"reason": str(exc), "ops": []}]
    return [{"reason": r, "ops": [{"index": i, "type": t} for i, t in ops]} for r, ops in groups]
