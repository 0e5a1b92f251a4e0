"""The `mlitool` command line: parse options, call one function, render, map errors to exit codes.

Heavy modules (numpy, tflite, rich tables) are imported inside the commands so that
`mlitool --version` and `--help` stay fast.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from mlitool import __version__
from mlitool.errors import EXIT_INTERNAL, MlitoolError, OptionError
from mlitool.mli.target import LAYOUTS, MLI_VERSIONS

EXIT_CODES = ("\b\nExit codes: 0 ok, 1 internal error (a bug in mlitool), 2 bad input file or\n"
              "option, 3 a verify threshold failed, 4 unsupported by the MLI target,\n"
              "5 cannot write an output, 130 interrupted (Ctrl-C).")

app = typer.Typer(
    name="mlitool",
    help="Make TensorFlow Lite models ready for the embARC MLI library.",
    epilog=EXIT_CODES,
    add_completion=True,
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
    click_errors = _click_exception_types()
    from mlitool.parallel import one_blas_thread

    one_blas_thread()                       # before numpy loads: --jobs N equals --jobs 1
    args = _debug_first(sys.argv[1:] if argv is None else list(argv))
    _state["debug"] = args[:1] == ["--debug"]
    command = typer.main.get_command(app)
    try:
        code = _completion_for_named_shell(args)
        if code is None:
            rv = command.main(args=args, prog_name="mlitool", standalone_mode=False)
            code = rv if isinstance(rv, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except click_errors as exc:          # usage errors: click's message, on one line
        ctx = getattr(exc, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        if type(exc).__name__ == "NoArgsIsHelpError":       # bare `mlitool`: the help, as is
            print(exc.format_message(), file=sys.stderr)
        else:
            print(f"mlitool: error: {_one_line(exc.format_message())}{where}", file=sys.stderr)
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


def _debug_first(args: list[str]) -> list[str]:
    """`--debug` is accepted anywhere before `--` (after the subcommand too): it is moved to
    the front, where the root command takes it."""
    end = args.index("--") if "--" in args else len(args)
    rest = [a for a in args[:end] if a != "--debug"] + args[end:]
    return ["--debug", *rest] if len(rest) < len(args) else rest


_COMPLETION_OPTIONS = ("--show-completion", "--install-completion")


def _completion_for_named_shell(args: list[str]) -> int | None:
    """`--show-completion SHELL` / `--install-completion SHELL` (or `=SHELL`) for the shell
    named, not the one typer detects (typer's options are flags and ignore the name). None when
    no shell is named: typer handles the rest."""
    for i, arg in enumerate(args):
        option, _, shell = arg.partition("=")
        if not arg.startswith("-"):
            return None                                 # the subcommand: no root option follows
        if option not in _COMPLETION_OPTIONS:
            continue
        if not shell and i + 1 < len(args) and not args[i + 1].startswith("-"):
            shell = args[i + 1]
        if not shell or shell in _command_names():
            return None
        from typer._completion_shared import Shells, get_completion_script, install

        names = [s.value for s in Shells]
        if shell not in names:
            raise OptionError(f"{option} {shell!r}: choose one of {', '.join(names)}")
        if option == "--show-completion":
            print(get_completion_script(prog_name="mlitool", complete_var="_MLITOOL_COMPLETE",
                                        shell=shell))
        else:
            _, path = install(shell=shell, prog_name="mlitool", complete_var="_MLITOOL_COMPLETE")
            print(f"{shell} completion installed in {path}\n"
                  "Completion will take effect once you restart the terminal")
        return 0
    return None


def _command_names() -> set[str]:
    return {c.name or c.callback.__name__ for c in app.registered_commands}


def _click_exception_types() -> tuple[type[Exception], ...]:
    """The ClickException classes typer may raise: newer typer vendors click as `typer._click`
    (while a separate click may still be installed), older typer uses click itself."""
    types = []
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            types.append(__import__(module, fromlist=["ClickException"]).ClickException)
        except ImportError:
            pass
    return tuple(types)


def _one_line(text: str) -> str:
    """Control characters (from names in a hostile file) escaped: the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _choices(name: str, values) -> type[Enum]:
    """An Enum typer shows as [a|b|c] in --help and checks (case-insensitively)."""
    return Enum(name, {v: v for v in values}, type=str)


Format = _choices("Format", ("sa8", "fx16", "fx8w16d", "fx8"))
MliVersion = _choices("MliVersion", MLI_VERSIONS)
Layout = _choices("Layout", LAYOUTS)
Target = _choices("Target", ("vpx", "em"))
Round = _choices("Round", ("up", "convergent"))
Accu = _choices("Accu", ("full", "reduced"))
Method = _choices("Method", ("minmax", "percentile"))
Mode = _choices("Mode", ("mli", "tflite", "float"))
Oracle = _choices("Oracle", ("litert",))


def _value(choice):
    return None if choice is None else choice.value


# Options shared by the commands: one definition each, one meaning everywhere.
ModelArg = Annotated[Path, typer.Argument(metavar="MODEL", help="The .tflite model file.",
                                          show_default=False)]
FormatOpt = Annotated[Optional[Format], typer.Option(
    "--format", "-f", case_sensitive=False, show_default=False,
    help="Element format [default: the config's, else sa8].")]
MliOpt = Annotated[Optional[MliVersion], typer.Option(
    "--mli", show_default=False, help="MLI version [default: the config's, else 2.0].")]
LayoutOpt = Annotated[Optional[Layout], typer.Option(
    "--layout", case_sensitive=False, show_default=False,
    help="MLI 1.x activation layout [default: chw].")]
ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", show_default=False, help="TOML settings and per-layer overrides [default: the "
    "nearest mlitool.toml, or pyproject.toml with [tool.mlitool], from here upward].")]
TargetOpt = Annotated[Optional[Target], typer.Option(
    "--target", case_sensitive=False, show_default=False,
    help="MLI build: em = ROUND_MODE=CONVERGENT, FULL_ACCU=ON (ARC EM/HS); vpx = ROUND_MODE=UP, "
    "FULL_ACCU=OFF [default: vpx].")]
RoundOpt = Annotated[Optional[Round], typer.Option(
    "--round", case_sensitive=False, show_default=False, help="ROUND_MODE (over --target).")]
AccuOpt = Annotated[Optional[Accu], typer.Option(
    "--accu", case_sensitive=False, show_default=False, help="FULL_ACCU on/off (over --target).")]
CalibrationOpt = Annotated[Optional[Path], typer.Option(
    "--calibration", show_default=False,
    help="Float models: .npy/.npz of real inputs to derive activation ranges from.")]
CalibrationMethodOpt = Annotated[Method, typer.Option(
    "--calibration-method", case_sensitive=False, help="How ranges are taken from them.")]
# The samples verify and report run.
SamplesFileOpt = Annotated[Optional[Path], typer.Option(
    "--input", "-i", show_default=False, help=".npy / .npz inputs (as for run) "
    "[default: random inputs].")]
SamplesOpt = Annotated[int, typer.Option("--samples", "-n", help="Random inputs: how many.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random inputs: the seed.")]
# Output: the same four options on every command.
JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Print one JSON document on stdout (and nothing else there).")]
JsonOutOpt = Annotated[Optional[Path], typer.Option(
    "--json-out", metavar="FILE", show_default=False, help="Also write the JSON document to FILE.")]
OutOpt = Annotated[Optional[Path], typer.Option(
    "--out", "-o", metavar="DIR", show_default=False,
    help="Directory the command's files are written into (created if missing).")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Nothing on stdout but --json; warnings and errors still on stderr.")]
# verify's thresholds (report takes them too): exit 3 when an output misses one.
MinSnrOpt = Annotated[Optional[float], typer.Option(
    "--min-snr", metavar="DB", show_default=False,
    help="Exit 3 when an output's SNR against float is below DB.")]
MaxLsbOpt = Annotated[Optional[int], typer.Option(
    "--max-lsb", metavar="N", show_default=False,
    help="Exit 3 when an output differs from tflite mode by more than N LSB.")]
JobsOpt = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", metavar="N", show_default=False,
    help="Processes over the samples [default: every core]; results equal --jobs 1.")]


def _model_options(fmt, config, calibration, calibration_method, target, round_mode, accu, *,
                   mli=None, layout=None, weights_only=False):
    """The pipeline's options from the shared command-line options (--target names the build)."""
    from mlitool.pipeline import ModelOptions

    return ModelOptions(format=_value(fmt), mli=_value(mli), layout=_value(layout), config=config,
                        weights_only=weights_only, calibration=calibration,
                        calibration_method=_value(calibration_method), build=_value(target),
                        round_mode=_value(round_mode), accu=_value(accu))


def _dumps(doc: dict, *, allow_nan: bool = True) -> str:
    import json

    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=allow_nan) + "\n"


def _out_dir(out: Path | None) -> Path | None:
    """`-o DIR`, checked and created (None when not given)."""
    if out is None:
        return None
    from mlitool.fsio import make_dirs

    if out.exists() and not out.is_dir():
        raise OptionError("--out is a directory (it exists and is not one)", str(out))
    return make_dirs(out)


def _finish(doc: dict, *, as_json: bool, json_out: Path | None, quiet: bool, render,
            files: tuple[Path, ...] = (), allow_nan: bool = True) -> None:
    """The one way every command ends: JSON files written (atomically), then stdout (JSON or
    the tables), then the warnings and the files written on stderr."""
    from mlitool.fsio import write_file_atomically

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
    """On stderr, one line per kind (`mlitool.notices`): the same on every command."""
    from mlitool.notices import warning_lines

    for line in warning_lines(warnings):
        print(f"warning: {_one_line(line)}", file=sys.stderr)


@app.command("inspect", epilog=EXIT_CODES)
def inspect_cmd(model: ModelArg, as_json: JsonOpt = False, json_out: JsonOutOpt = None,
                out: OutOpt = None, quiet: QuietOpt = False) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals.
    With -o DIR: DIR/STEM.inspect.json."""
    from mlitool.inspect.command import inspect_file

    summary = inspect_file(model)
    d = _out_dir(out)
    files = (d / f"{model.stem}.inspect.json",) if d else ()

    def render():
        from mlitool.inspect.render import render as render_summary

        render_summary(summary)
    _finish(summary, as_json=as_json, json_out=json_out, quiet=quiet, render=render, files=files,
            allow_nan=False)


@app.command("convert", epilog=EXIT_CODES)
def convert_cmd(
    model: ModelArg,
    out: OutOpt = None,
    name: Optional[str] = typer.Option(None, "--name", help="Base name of NAME.h/.c/.json "
                                       "[default: the model file's stem]."),
    fmt: FormatOpt = None,
    mli: MliOpt = None,
    layout: LayoutOpt = None,
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
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Requantize a model into MLI formats and write NAME.h, NAME.c and NAME.json into -o DIR
    [default: the working directory]."""
    from mlitool.convert import EmitOptions, convert
    from mlitool.progress import progress_for, wanted

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu, mli=mli, layout=layout, weights_only=weights_only)
    emit_opts = EmitOptions(out=out or Path("."), name=name, header=header, align=align,
                            section=section, single_header=single_header, runtime=not no_runtime)
    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        result = convert(model, model_opts, emit_opts, progress)
    _finish(result, as_json=as_json, json_out=json_out, quiet=quiet,
            render=lambda: _render_convert(result))


def _render_convert(result: dict) -> None:
    from mlitool.console import stdout_console, table

    console = stdout_console()
    rows = [[str(layer["index"]), layer["op"], layer["kernel"] or "(view)", layer["output"],
             "; ".join(layer["notes"])] for layer in result["layers"]]
    console.print(table(f"{result['model']} → MLI {result['target']} ({result['format']})",
                        ("#", "op", "MLI kernel", "output", "notes"), rows, width=console.width))
    console.print(f"constant data: {result['constant_bytes']:,} bytes", markup=False)
    console.print(f"config: {result['config'] or 'none'}", markup=False)


@app.command("run", epilog=EXIT_CODES)
def run_cmd(
    model: ModelArg,
    input_file: Path = typer.Option(..., "--input", "-i", help=".npy / .npz batch (leading "
                                    "dimension = samples; .npz keyed by input name). Float arrays "
                                    "are real values, arrays of the input's dtype quantized values.",
                                    show_default=False),
    mode: Mode = typer.Option("mli", "--mode", "-m", case_sensitive=False,
                              help="Arithmetic: MLI kernels, TFLite reference, or float."),
    fmt: FormatOpt = None,
    config: ConfigOpt = None,
    calibration: CalibrationOpt = None,
    calibration_method: CalibrationMethodOpt = "minmax",
    target: TargetOpt = None,
    round_mode: RoundOpt = None,
    accu: AccuOpt = None,
    out: OutOpt = None,
    npz: Optional[Path] = typer.Option(None, "--npz", metavar="FILE", show_default=False,
                                       help="The output .npz [default: DIR/STEM.MODE.npz]."),
    dump_layers: bool = typer.Option(False, "--dump-layers", help="Also write every "
                                     "intermediate tensor (mli mode: raw MLI tensors as mli/NAME)."),
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
    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu)
    if npz is None and out is not None:
        npz = _out_dir(out) / default_output(model, mode.value).name
    from mlitool.progress import progress_for, wanted

    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        summary = run(model, model_opts, RunOptions(input=input_file, mode=mode.value, output=npz,
                                                    dump_layers=dump_layers, jobs=jobs,
                                                    progress=progress))

    def render():
        extra = f", {summary['format']}, {summary['build']}" if summary["mode"] == "mli" else ""
        print(f"{summary['model']}: {summary['samples']} sample(s) in {summary['mode']} mode{extra}")
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
    oracle: Optional[Oracle] = typer.Option(None, "--oracle", case_sensitive=False,
                                            show_default=False, help="Also compare with the "
                                            "TFLite interpreter's reference kernels."),
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
    from mlitool.errors import ThresholdError
    from mlitool.progress import progress_for, wanted
    from mlitool.verify.command import VerifyOptions, verify

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu)
    d = _out_dir(out)
    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        doc = verify(model, model_opts, VerifyOptions(
            input=input_file, samples=samples, seed=seed, oracle=_value(oracle), min_snr=min_snr,
            max_lsb=max_lsb, jobs=jobs, progress=progress))

    def render():
        from mlitool.verify.render import render as render_doc

        render_doc(doc)
    _finish(doc, as_json=as_json, json_out=json_out, quiet=quiet, render=render, allow_nan=False,
            files=(d / f"{model.stem}.verify.json",) if d else ())
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
    min_snr_flag: float = typer.Option(30.0, "--min-snr-flag", metavar="DB",
                                       help="Flag tensors whose weight SNR is below DB."),
    min_snr: MinSnrOpt = None,
    max_lsb: MaxLsbOpt = None,
    no_accuracy: bool = typer.Option(False, "--no-accuracy", help="Skip the executed sections "
                                     "(accuracy, sensitivity): memory and quantization only; "
                                     "MLI 1.x reports have only these."),
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
    json_out: JsonOutOpt = None,
    out: OutOpt = None,
    csv_dir: Optional[Path] = typer.Option(None, "--csv", metavar="DIR", show_default=False,
                                           help="Write one CSV file per table into DIR."),
    markdown: Optional[Path] = typer.Option(None, "--md", "--markdown", metavar="FILE",
                                            show_default=False, help="Write the report as Markdown."),
    html: Optional[Path] = typer.Option(None, "--html", metavar="FILE", show_default=False,
                                        help="Write a self-contained HTML report with charts."),
    quiet: QuietOpt = False,
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files.
    With -o DIR: DIR/STEM.report.json, .md, .html and the CSV files in DIR/STEM.csv/."""
    from mlitool.report.command import Outputs, ReportOptions, run
    from mlitool.report.render import render_json, render_terminal

    model_opts = _model_options(fmt, config, calibration, calibration_method, target, round_mode,
                                accu, mli=mli, layout=layout)
    opts = ReportOptions(input=input_file, samples=samples, seed=seed, min_snr_flag=min_snr_flag,
                         accuracy=not no_accuracy, min_snr=min_snr, max_lsb=max_lsb, jobs=jobs)
    d = _out_dir(out)
    def in_out(suffix: str) -> Path | None:
        return d / f"{model.stem}{suffix}" if d else None
    jsons = tuple(p for p in (json_out, in_out(".report.json")) if p is not None)
    outs = Outputs(json=jsons, csv=csv_dir or in_out(".csv"),
                   markdown=markdown or in_out(".report.md"), html=html or in_out(".report.html"))
    from mlitool.progress import wanted

    report, written = run(model, model_opts, opts, outs,
                          show_progress=wanted(as_json=as_json, quiet=quiet))
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
