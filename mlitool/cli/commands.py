"""The five commands (inspect, convert, run, verify, report): parse options, call one function,
render. Each imports its heavy modules inside, so that --help stays fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.notices import one_line as _one_line
from mlitool.cli.options import (
    AccuOpt,
    CalibrationMethodOpt,
    CalibrationOpt,
    ConfigOpt,
    FormatOpt,
    JobsOpt,
    JsonOpt,
    JsonOutOpt,
    LayoutOpt,
    MaxLsbOpt,
    MinSnrOpt,
    MliOpt,
    Mode,
    ModelArg,
    Oracle,
    OutOpt,
    QuietOpt,
    RoundOpt,
    SamplesFileOpt,
    SamplesOpt,
    SeedOpt,
    TargetOpt,
    _value,
)
from mlitool.errors import OptionError


def _model_options(
    fmt,
    config,
    calibration,
    calibration_method,
    target,
    round_mode,
    accu,
    *,
    mli=None,
    layout=None,
    weights_only=False,
):
    """The pipeline's options from the shared command-line options (--target names the build)."""
    from mlitool.pipeline import ModelOptions

    return ModelOptions(
        format=_value(fmt),
        mli=_value(mli),
        layout=_value(layout),
        config=config,
        weights_only=weights_only,
        calibration=calibration,
        calibration_method=_value(calibration_method),
        build=_value(target),
        round_mode=_value(round_mode),
        accu=_value(accu),
    )


def _dumps(doc: dict, *, allow_nan: bool = True) -> str:
    import json

    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=allow_nan) + "\n"


def _out_dir(out: Path | None) -> Path | None:
    """`-o DIR`, checked and created (None when not given)."""
    if out is None:
        return None
    from mlitool.cli.fsio import make_dirs

    if out.exists() and not out.is_dir():
        raise OptionError("--out is a directory (it exists and is not one)", str(out))
    return make_dirs(out)


def _finish(
    doc: dict,
    *,
    as_json: bool,
    json_out: Path | None,
    quiet: bool,
    render,
    files: tuple[Path, ...] = (),
    allow_nan: bool = True,
) -> None:
    """The one way every command ends: JSON files written (atomically), then stdout (JSON or
    the tables), then the warnings and the files written on stderr."""
    from mlitool.cli.fsio import write_file_atomically

    text = _dumps(doc, allow_nan=allow_nan)
    written = [write_file_atomically(p, text) for p in (*files, *([json_out] if json_out else []))]
    if as_json:
        sys.stdout.write(text)
    elif not quiet:
        render()
    _print_warnings(doc.get("warnings", []))
    if not quiet:
        made = doc.get("files") or ([doc["output"]] if "output" in doc else [])
        for path in (*made, *map(str, written)):
            print(f"wrote {path}", file=sys.stderr)


def _print_warnings(warnings) -> None:
    """On stderr, one line per kind (`mlitool.cli.notices`): the same on every command."""
    from mlitool.cli.notices import warning_lines

    for line in warning_lines(warnings):
        print(f"warning: {_one_line(line)}", file=sys.stderr)


@app.command("inspect", epilog=EXIT_CODES)
def inspect_cmd(
    model: ModelArg,
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    out: OutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals.
    With -o DIR: DIR/STEM.inspect.json."""
    from mlitool.inspect.command import inspect_file

    summary = inspect_file(model)
    d = _out_dir(out)
    files = (d / f"{model.stem}.inspect.json",) if d else ()

    def render():
        from mlitool.inspect.render import render as render_summary

        render_summary(summary)

    _finish(
        summary,
        as_json=as_json,
        json_out=json_out,
        quiet=quiet,
        render=render,
        files=files,
        allow_nan=False,
    )


@app.command("convert", epilog=EXIT_CODES)
def convert_cmd(
    model: ModelArg,
    out: OutOpt = None,
    name: Optional[str] = typer.Option(
        None, "--name", help="Base name of NAME.h/.c/.json [default: the model file's stem]."
    ),
    fmt: FormatOpt = None,
    mli: MliOpt = None,
    layout: LayoutOpt = None,
    config: ConfigOpt = None,
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
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    weights_only: bool = typer.Option(
        False,
        "--weights-only",
        help="Float models without calibration: convert weights, leave activations unquantized.",
    ),
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Requantize a model into MLI formats and write NAME.h, NAME.c and NAME.json into -o DIR
    [default: the working directory]."""
    from mlitool.cli.progress import progress_for, wanted
    from mlitool.convert import EmitOptions, convert

    model_opts = _model_options(
        fmt,
        config,
        calibration,
        calibration_method,
        target,
        round_mode,
        accu,
        mli=mli,
        layout=layout,
        weights_only=weights_only,
    )
    emit_opts = EmitOptions(
        out=out or Path("."),
        name=name,
        header=header,
        align=align,
        section=section,
        single_header=single_header,
        runtime=not no_runtime,
    )
    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        result = convert(model, model_opts, emit_opts, progress)
    _finish(
        result,
        as_json=as_json,
        json_out=json_out,
        quiet=quiet,
        render=lambda: _render_convert(result),
    )


def _render_convert(result: dict) -> None:
    from mlitool.cli.console import stdout_console, table

    console = stdout_console()
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
    console.print(f"constant data: {result['constant_bytes']:,} bytes", markup=False)
    console.print(f"config: {result['config'] or 'none'}", markup=False)


@app.command("run", epilog=EXIT_CODES)
def run_cmd(
    model: ModelArg,
    input_file: Path = typer.Option(
        ...,
        "--input",
        "-i",
        help=".npy / .npz batch (leading "
        "dimension = samples; .npz keyed by input name). Float arrays "
        "are real values, arrays of the input's dtype quantized values.",
        show_default=False,
    ),
    mode: Mode = typer.Option(
        "mli",
        "--mode",
        "-m",
        case_sensitive=False,
        help="Arithmetic: MLI kernels, TFLite reference, or float.",
    ),
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    out: OutOpt = None,
    npz: Optional[Path] = typer.Option(
        None,
        "--npz",
        metavar="FILE",
        show_default=False,
        help="The output .npz [default: DIR/STEM.MODE.npz].",
    ),
    dump_layers: bool = typer.Option(
        False,
        "--dump-layers",
        help="Also write every intermediate tensor (mli mode: raw MLI tensors as mli/NAME).",
    ),
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Run a model on a batch of inputs (float, tflite or mli arithmetic) and write the outputs
    as .npz into -o DIR [default: the working directory]."""
    from mlitool.run import RunOptions, default_output, run

    if out is not None and out.suffix == ".npz":
        raise OptionError(f"-o/--out {out} names a directory; give the file with --npz {out}")
    model_opts = _model_options(
        fmt, config, calibration, calibration_method, target, round_mode, accu
    )
    if npz is None and out is not None:
        npz = _out_dir(out) / default_output(model, mode.value).name
    from mlitool.cli.progress import progress_for, wanted

    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        summary = run(
            model,
            model_opts,
            RunOptions(
                input=input_file,
                mode=mode.value,
                output=npz,
                dump_layers=dump_layers,
                jobs=jobs,
                progress=progress,
            ),
        )

    def render():
        extra = f", {summary['format']}, {summary['build']}" if summary["mode"] == "mli" else ""
        print(
            f"{summary['model']}: {summary['samples']} sample(s) in {summary['mode']} mode{extra}"
        )
        for o in summary["outputs"]:
            top = f"; top-1 of the first samples: {o['top1']}" if "top1" in o else ""
            print(f"  {o['name']}: {o['dtype']} {o['shape']}{top}")
        if summary["mode"] == "mli":
            print(f"config: {summary['config'] or 'none'}")

    _finish(summary, as_json=as_json, json_out=json_out, quiet=quiet, render=render)


@app.command("verify", epilog=EXIT_CODES)
def verify_cmd(
    model: ModelArg,
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    input_file: SamplesFileOpt = None,
    samples: SamplesOpt = 100,
    seed: SeedOpt = 0,
    oracle: Optional[Oracle] = typer.Option(
        None,
        "--oracle",
        case_sensitive=False,
        show_default=False,
        help="Also compare with the TFLite interpreter's reference kernels.",
    ),
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    min_snr: MinSnrOpt = None,
    max_lsb: MaxLsbOpt = None,
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    out: OutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Compare mli mode with float and tflite modes, per layer and at the outputs.
    With -o DIR: DIR/STEM.verify.json."""
    from mlitool.cli.progress import progress_for, wanted
    from mlitool.errors import ThresholdError
    from mlitool.verify.command import VerifyOptions, verify

    model_opts = _model_options(
        fmt, config, calibration, calibration_method, target, round_mode, accu
    )
    d = _out_dir(out)
    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        doc = verify(
            model,
            model_opts,
            VerifyOptions(
                input=input_file,
                samples=samples,
                seed=seed,
                oracle=_value(oracle),
                min_snr=min_snr,
                max_lsb=max_lsb,
                jobs=jobs,
                progress=progress,
            ),
        )

    def render():
        from mlitool.verify.render import render as render_doc

        render_doc(doc)

    _finish(
        doc,
        as_json=as_json,
        json_out=json_out,
        quiet=quiet,
        render=render,
        allow_nan=False,
        files=(d / f"{model.stem}.verify.json",) if d else (),
    )
    failed = doc["thresholds"]["failed"]
    if failed:
        raise ThresholdError("; ".join(failed))


@app.command("report", epilog=EXIT_CODES)
def report_cmd(
    model: ModelArg,
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    mli: MliOpt = None,
    layout: LayoutOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    input_file: SamplesFileOpt = None,
    samples: SamplesOpt = 32,
    seed: SeedOpt = 0,
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    min_snr_flag: float = typer.Option(
        30.0, "--min-snr-flag", metavar="DB", help="Flag tensors whose weight SNR is below DB."
    ),
    min_snr: MinSnrOpt = None,
    max_lsb: MaxLsbOpt = None,
    no_accuracy: bool = typer.Option(
        False,
        "--no-accuracy",
        help="Skip the executed sections "
        "(accuracy, sensitivity): memory and quantization only; "
        "MLI 1.x reports have only these.",
    ),
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    out: OutOpt = None,
    csv_dir: Optional[Path] = typer.Option(
        None,
        "--csv",
        metavar="DIR",
        show_default=False,
        help="Write one CSV file per table into DIR.",
    ),
    markdown: Optional[Path] = typer.Option(
        None,
        "--md",
        "--markdown",
        metavar="FILE",
        show_default=False,
        help="Write the report as Markdown.",
    ),
    html: Optional[Path] = typer.Option(
        None,
        "--html",
        metavar="FILE",
        show_default=False,
        help="Write a self-contained HTML report with charts.",
    ),
    quiet: QuietOpt = False,
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files.
    With -o DIR: DIR/STEM.report.json, .md, .html and the CSV files in DIR/STEM.csv/."""
    from mlitool.report.command import Outputs, ReportOptions, run
    from mlitool.report.render import render_json, render_terminal

    model_opts = _model_options(
        fmt,
        config,
        calibration,
        calibration_method,
        target,
        round_mode,
        accu,
        mli=mli,
        layout=layout,
    )
    opts = ReportOptions(
        input=input_file,
        samples=samples,
        seed=seed,
        min_snr_flag=min_snr_flag,
        accuracy=not no_accuracy,
        min_snr=min_snr,
        max_lsb=max_lsb,
        jobs=jobs,
    )
    d = _out_dir(out)

    def in_out(suffix: str) -> Path | None:
        return d / f"{model.stem}{suffix}" if d else None

    jsons = tuple(p for p in (json_out, in_out(".report.json")) if p is not None)
    outs = Outputs(
        json=jsons,
        csv=csv_dir or in_out(".csv"),
        markdown=markdown or in_out(".report.md"),
        html=html or in_out(".report.html"),
    )
    from mlitool.cli.progress import wanted

    report, written = run(
        model, model_opts, opts, outs, show_progress=wanted(as_json=as_json, quiet=quiet)
    )
    if as_json:
        sys.stdout.write(render_json(report))
    elif not quiet:
        render_terminal(report)
    _print_warnings(report.warnings)
    if not quiet:
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    checks = dict(report.meta)
    if checks["verdict"] == "FAIL":
        from mlitool.errors import ThresholdError

        raise ThresholdError(checks["checks"])
