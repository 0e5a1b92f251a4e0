"""`mlitool report`: memory, quantization, accuracy and sensitivity as tables and files; exit 3
when a check fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.commands.common import model_options, out_dir, path_option, show


@app.command("report", epilog=EXIT_CODES)
def report_cmd(
    model: opt.ModelArg,
    fmt: opt.FormatOpt = None,
    config: opt.ConfigOpt = None,
    mli: opt.MliOpt = None,
    layout: opt.LayoutOpt = None,
    calibration: opt.CalibrationOpt = None,
    calibration_method: opt.CalibrationMethodOpt = "minmax",
    input_file: opt.SamplesFileOpt = None,
    samples: opt.SamplesOpt = 32,
    seed: opt.SeedOpt = 0,
    target: opt.TargetOpt = None,
    round_mode: opt.RoundOpt = None,
    accu: opt.AccuOpt = None,
    fast_memory: opt.FastMemoryOpt = None,
    min_snr_flag: float = typer.Option(
        30.0, "--min-snr-flag", metavar="DB", help="Flag tensors whose weight SNR is below DB."
    ),
    min_snr: opt.MinSnrOpt = None,
    max_lsb: opt.MaxLsbOpt = None,
    labels: opt.LabelsOpt = None,
    min_accuracy: opt.MinAccuracyOpt = None,
    ram_budget: opt.RamBudgetOpt = None,
    rom_budget: opt.RomBudgetOpt = None,
    no_accuracy: bool = typer.Option(
        False,
        "--no-accuracy",
        help="Skip the executed sections "
        "(accuracy, sensitivity): memory and quantization only; "
        "MLI 1.x reports have only these.",
    ),
    jobs: opt.JobsOpt = None,
    as_json: opt.JsonOpt = False,
    json_out: opt.JsonOutOpt = None,
    out: opt.OutOpt = None,
    csv_dir: Optional[Path] = path_option(
        "--csv", metavar="DIR", help="Write one CSV file per table into DIR."
    ),
    markdown: Optional[Path] = path_option(
        "--md", "--markdown", metavar="FILE", help="Write the report as Markdown."
    ),
    html: Optional[Path] = path_option(
        "--html", metavar="FILE", help="Write a self-contained HTML report with charts."
    ),
    quiet: opt.QuietOpt = False,
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files.
    With -o DIR: DIR/STEM.report.json, .md, .html and the CSV files in DIR/STEM.csv/."""
    model_opts = model_options(locals())  # first: its locals are the parameters
    from mlitool.report.command import Outputs, ReportOptions, run
    from mlitool.report.render import render_json, render_terminal

    opts = ReportOptions(
        input=input_file,
        samples=samples,
        seed=seed,
        min_snr_flag=min_snr_flag,
        accuracy=not no_accuracy,
        min_snr=min_snr,
        max_lsb=max_lsb,
        min_accuracy=min_accuracy,
        ram_budget=ram_budget,
        rom_budget=rom_budget,
        labels=labels,
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
    show(
        lambda: render_json(report),
        lambda: render_terminal(report),
        report.warnings,
        written,
        as_json=as_json,
        quiet=quiet,
    )
    checks = dict(report.meta)
    if checks["verdict"] == "FAIL":
        from mlitool.errors import ThresholdError

        raise ThresholdError(checks["checks"])
