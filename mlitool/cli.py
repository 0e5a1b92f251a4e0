"""The `mlitool` command line: parse options, call one function, render, map errors to exit codes.

Heavy modules (numpy, tflite, rich tables) are imported inside the commands so that
`mlitool --version` and `--help` stay fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from mlitool import __version__
from mlitool.errors import EXIT_INTERNAL, MlitoolError

app = typer.Typer(
    name="mlitool",
    help="Make TensorFlow Lite models ready for the embARC MLI library.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        print(f"mlitool {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on internal errors."),
) -> None:
    _state["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every error into one line and an exit code."""
    try:                                       # typer < 0.20 uses click; newer typer vendors it
        from click import ClickException
    except ImportError:
        from typer._click.exceptions import ClickException

    args = sys.argv[1:] if argv is None else list(argv)
    _state["debug"] = "--debug" in args
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=args, prog_name="mlitool", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except ClickException as exc:        # usage errors: click's own message
        exc.show()
        code = exc.exit_code
    except typer.Abort:
        print("mlitool: aborted", file=sys.stderr)
        code = 130
    except MlitoolError as exc:
        print(f"mlitool: error: {_one_line(str(exc))}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        print(f"mlitool: internal error: {type(exc).__name__}: {exc}. This is a bug in mlitool; "
              "please report it with the command line (run again with --debug for a traceback).",
              file=sys.stderr)
        code = EXIT_INTERNAL
    sys.exit(code)


def _one_line(text: str) -> str:
    """Control characters (from names in a hostile file) escaped: the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_ARITH_HELP = ("MLI build: --target em = ROUND_MODE=CONVERGENT, FULL_ACCU=ON (ARC EM/HS); "
               "vpx = ROUND_MODE=UP, FULL_ACCU=OFF [default: vpx].")

# Options shared by convert, run, verify and report: one definition each.
ModelArg = Annotated[Path, typer.Argument(metavar="MODEL", help="The .tflite model file.",
                                          show_default=False)]
FormatOpt = Annotated[Optional[str], typer.Option(
    "--format", "-f", help="sa8 | fx16 | fx8w16d | fx8 [default: the config's, else sa8].")]
ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", help="TOML settings and per-layer overrides "
    "[default: [tool.mlitool] of ./pyproject.toml].")]
TargetOpt = Annotated[Optional[str], typer.Option("--target", help=_ARITH_HELP)]
RoundOpt = Annotated[Optional[str], typer.Option(
    "--round", help="up | convergent (overrides --target).")]
AccuOpt = Annotated[Optional[str], typer.Option(
    "--accu", help="full | reduced (overrides --target).")]
CalibrationOpt = Annotated[Optional[Path], typer.Option(
    "--calibration", help="Float models: .npy/.npz of real inputs to derive activation ranges from.")]
CalibrationMethodOpt = Annotated[str, typer.Option(
    "--calibration-method", help="minmax | percentile.")]
# The samples verify and report run.
SamplesFileOpt = Annotated[Optional[Path], typer.Option(
    "--input", "-i", help=".npy / .npz inputs (as for run) [default: random inputs].")]
SamplesOpt = Annotated[int, typer.Option("--samples", "-n", help="Random inputs: how many.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random inputs: the seed.")]


def _model_options(fmt, config, calibration, calibration_method, target, round_mode, accu, *,
                   mli=None, layout=None, weights_only=False):
    """The pipeline's options from the shared command-line options (--target names the build)."""
    from mlitool.pipeline import ModelOptions

    return ModelOptions(format=fmt, mli=mli, layout=layout, config=config,
                        weights_only=weights_only, calibration=calibration,
                        calibration_method=calibration_method, build=target,
                        round_mode=round_mode, accu=accu)


def _print_json(doc: dict, *, allow_nan: bool = True) -> None:
    import json

    sys.stdout.write(json.dumps(doc, sort_keys=True, indent=2, allow_nan=allow_nan) + "\n")


@app.command("inspect")
def inspect_cmd(
    model: ModelArg,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals."""
    from mlitool.inspect.command import inspect_file

    summary = inspect_file(model)
    if as_json:
        _print_json(summary, allow_nan=False)
    else:
        from mlitool.inspect.render import render

        render(summary)


@app.command("convert")
def convert_cmd(
    model: ModelArg,
    out: Path = typer.Option(Path("."), "--out", "-o", help="Output directory (created if missing)."),
    name: Optional[str] = typer.Option(None, "--name", help="Base name of NAME.h/.c/.json "
                                       "[default: the model file's stem]."),
    fmt: FormatOpt = None,
    mli: Optional[str] = typer.Option(None, "--mli", help="MLI version: 2.0 | 1.1 | 1.0 [default: 2.0]."),
    layout: Optional[str] = typer.Option(None, "--layout", help="MLI 1.x only: chw | hwc [default: chw]."),
    config: ConfigOpt = None,
    header: str = typer.Option("mli_api.h", "--header", help="MLI API header to #include."),
    align: Optional[int] = typer.Option(None, "--align", help="Alignment attribute for data arrays."),
    section: Optional[str] = typer.Option(None, "--section", help="Linker section for weights."),
    single_header: bool = typer.Option(False, "--single-header",
                                       help="Write one self-contained NAME.h with static definitions."),
    no_runtime: bool = typer.Option(False, "--no-runtime", help="Tensors and configs only: no "
                                    "NAME_init / NAME_run (the output of earlier versions)."),
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    weights_only: bool = typer.Option(False, "--weights-only", help="Float models without "
                                      "calibration: convert weights, leave activations unquantized."),
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON document."),
) -> None:
    """Requantize a model into MLI formats and write NAME.h, NAME.c and NAME.json."""
    from mlitool.convert import EmitOptions, convert

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu, mli=mli, layout=layout, weights_only=weights_only)
    result = convert(model, model_opts, EmitOptions(out=out, name=name, header=header, align=align,
                                                    section=section, single_header=single_header,
                                                    runtime=not no_runtime))
    if as_json:
        _print_json(result)
    else:
        _render_convert(result)


def _render_convert(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{result['model']} → MLI {result['target']} ({result['format']})")
    for col in ("#", "op", "MLI kernel", "output", "notes"):
        table.add_column(col)
    for layer in result["layers"]:
        table.add_row(str(layer["index"]), layer["op"], layer["kernel"] or "(view)",
                      layer["output"], "; ".join(layer["notes"]))
    console.print(table)
    console.print(f"constant data: {result['constant_bytes']:,} bytes")
    for warning in result["warnings"]:
        console.print(f"warning: {warning}", markup=False)
    for path in result["files"]:
        console.print(f"wrote {path}", markup=False)



@app.command("run")
def run_cmd(
    model: ModelArg,
    input_file: Path = typer.Option(..., "--input", "-i", help=".npy / .npz batch (leading "
                                    "dimension = samples; .npz keyed by input name). Float arrays "
                                    "are real values, arrays of the input's dtype quantized values.",
                                    show_default=False),
    mode: str = typer.Option("mli", "--mode", "-m", help="float | tflite | mli."),
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Output .npz "
                                          "[default: MODEL_STEM.MODE.npz]."),
    dump_layers: bool = typer.Option(False, "--dump-layers", help="Also write every "
                                     "intermediate tensor (mli mode: raw MLI tensors as mli/NAME)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON document."),
) -> None:
    """Run a model on a batch of inputs (float, tflite or mli arithmetic) and write the outputs."""
    from mlitool.run import RunOptions, run

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu)
    summary = run(model, model_opts, RunOptions(input=input_file, mode=mode.lower(),
                                                output=output, dump_layers=dump_layers))
    if as_json:
        _print_json(summary)
        return
    extra = f", {summary['format']}, {summary['build']}" if summary["mode"] == "mli" else ""
    print(f"{summary['model']}: {summary['samples']} sample(s) in {summary['mode']} mode{extra}")
    for o in summary["outputs"]:
        top = f"; top-1 of the first samples: {o['top1']}" if "top1" in o else ""
        print(f"  {o['name']}: {o['dtype']} {o['shape']}{top}")
    print(f"wrote {summary['output']} ({summary['arrays']} arrays)")


@app.command("verify")
def verify_cmd(
    model: ModelArg,
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    input_file: SamplesFileOpt = None,
    samples: SamplesOpt = 100,
    seed: SeedOpt = 0,
    oracle: Optional[str] = typer.Option(None, "--oracle", help="litert: also compare with the "
                                         "TFLite interpreter's reference kernels."),
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    min_snr: Optional[float] = typer.Option(None, "--min-snr", help="Exit 3 when an output's SNR "
                                            "vs float is below DB.", metavar="DB"),
    max_lsb: Optional[int] = typer.Option(None, "--max-lsb", help="Exit 3 when an output differs "
                                          "from tflite mode by more than N LSB.", metavar="N"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
) -> None:
    """Compare mli mode with float and tflite modes, per layer and at the outputs."""
    from mlitool.errors import ThresholdError
    from mlitool.verify.command import VerifyOptions, verify

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu)
    doc = verify(model, model_opts, VerifyOptions(input=input_file, samples=samples, seed=seed,
                                                  oracle=oracle, min_snr=min_snr, max_lsb=max_lsb))
    if as_json:
        _print_json(doc, allow_nan=False)
    else:
        from mlitool.verify.render import render

        render(doc)
    failed = doc["thresholds"]["failed"]
    if failed:
        raise ThresholdError("; ".join(failed))


@app.command("report")
def report_cmd(
    model: ModelArg,
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    mli: Optional[str] = typer.Option(None, "--mli", help="MLI version: 2.0 | 1.1 | 1.0 "
                                      "[default: 2.0]; 1.x: memory and quantization only."),
    layout: Optional[str] = typer.Option(None, "--layout", help="MLI 1.x only: chw | hwc."),
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    input_file: SamplesFileOpt = None,
    samples: SamplesOpt = 32,
    seed: SeedOpt = 0,
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    min_snr_flag: float = typer.Option(30.0, "--min-snr-flag", metavar="DB",
                                       help="Flag tensors whose weight SNR is below DB."),
    no_accuracy: bool = typer.Option(False, "--no-accuracy", help="Skip the executed sections "
                                     "(accuracy, sensitivity): memory and quantization only."),
    json_out: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                           help="Write the JSON document (- for stdout)."),
    csv_dir: Optional[Path] = typer.Option(None, "--csv", metavar="DIR",
                                           help="Write one CSV file per table into DIR."),
    markdown: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE",
                                            help="Write the report as Markdown."),
    html: Optional[Path] = typer.Option(None, "--html", metavar="FILE",
                                        help="Write a self-contained HTML report with charts."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No tables on the terminal."),
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files."""
    from mlitool.report.command import Outputs, ReportOptions, run

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu, mli=mli, layout=layout)
    opts = ReportOptions(input=input_file, samples=samples, seed=seed, min_snr_flag=min_snr_flag,
                         accuracy=not no_accuracy)
    out = Outputs(json=json_out, csv=csv_dir, markdown=markdown, html=html)
    show = sys.stderr.isatty() and sys.stdout.isatty() and not out.json_to_stdout
    report, written = run(model, model_opts, opts, out, show_progress=show)
    if out.json_to_stdout:
        from mlitool.report.render import render_json

        sys.stdout.write(render_json(report))
    elif not quiet:
        from mlitool.report.render import render_terminal

        render_terminal(report)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
