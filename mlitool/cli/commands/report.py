"""`mlitool report`: memory, quantization, accuracy and sensitivity as tables and files; exit 3
when a check fails."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.commands.common import model_options, out_dir, path_option, print_warnings
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
    ModelArg,
    OutOpt,
    QuietOpt,
    RoundOpt,
    SamplesFileOpt,
    SamplesOpt,
    SeedOpt,
    TargetOpt,
)


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
    csv_dir: Optional[Path] = path_option(
        "--csv", metavar="DIR", help="Write one CSV file per table into DIR."
    ),
    markdown: Optional[Path] = path_option(
        "--md", "--markdown", metavar="FILE", help="Write the report as Markdown."
    ),
    html: Optional[Path] = path_option(
        "--html", metavar="FILE", help="Write a self-contained HTML report with charts."
    ),
    quiet: QuietOpt = False,
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files.
    With -o DIR: DIR/STEM.report.json, .md, .html and the CSV files in DIR/STEM.csv/."""
    from mlitool.report.command import Outputs, ReportOptions, run
    from mlitool.report.render import render_json, render_terminal

    model_opts = model_options(
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
    d = out_dir(out)

    def in_out(suffix: str) -> Path | None:
        return d / f"{model.stem}{suffix}" if d else None

    jsons = tuple(p for p in (json_out, in_out(".report.json")) if p is not None)
    outs = Outputs(
        json=jsons,
        csv=csv_dir or in_out(".csv"),
        markdown=markdown or in_out(".report.md"),
        html=html or in_out(".report.html"),
    )
    from mlitool.plumbing.progress import wanted

    report, written = run(
        model, model_opts, opts, outs, show_progress=wanted(as_json=as_json, quiet=quiet)
    )
    if as_json:
        sys.stdout.write(render_json(report))
    elif not quiet:
        render_terminal(report)
    print_warnings(report.warnings)
    if not quiet:
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    checks = dict(report.meta)
    if checks["verdict"] == "FAIL":
        from mlitool.errors import ThresholdError

        raise ThresholdError(checks["checks"])
