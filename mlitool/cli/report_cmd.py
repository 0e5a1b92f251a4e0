"""`mlitool report`: memory, quantization, accuracy and sensitivity as tables and files; exit 3
when a check fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import model_options, out_dir, path_option, show, shows_progress
from mlitool.cli.groups import grouped


@app.command("report", epilog=EXIT_CODES)
@grouped
def report_cmd(
    model: opt.ModelArg,
    quantization=opt.QUANTIZATION,
    mli: opt.MliOpt = None,
    layout: opt.LayoutOpt = None,
    sampling=opt.SAMPLES,
    build=opt.BUILD,
    fast_memory: opt.FastMemoryOpt = None,
    min_snr_flag: float = typer.Option(
        30.0, "--min-snr-flag", metavar="DB", help="Flag tensors whose weight SNR is below DB."
    ),
    thresholds=opt.THRESHOLDS,
    no_accuracy: bool = typer.Option(
        False,
        "--no-accuracy",
        help="Skip the executed sections "
        "(accuracy, sensitivity): memory and quantization only; "
        "MLI 1.x reports have only these.",
    ),
    jobs: opt.JobsOpt = None,
    output=opt.OUTPUT,
    csv_dir: Optional[Path] = path_option(
        "--csv", metavar="DIR", help="Write one CSV file per table into DIR."
    ),
    markdown: Optional[Path] = path_option(
        "--md", "--markdown", metavar="FILE", help="Write the report as Markdown."
    ),
    html: Optional[Path] = path_option(
        "--html", metavar="FILE", help="Write a self-contained HTML report with charts."
    ),
) -> None:
    """Memory, quantization, accuracy and per-layer sensitivity of a model, as tables and files.
    With -o DIR: DIR/STEM.report.json, .md, .html and the CSV files in DIR/STEM.csv/."""
    model_opts = model_options(quantization, build, mli=mli, layout=layout, fast_memory=fast_memory)
    from mlitool.report.command import Outputs, ReportOptions, run
    from mlitool.report.render import render_json, render_terminal

    opts = ReportOptions(
        input=sampling.input_file,
        samples=sampling.samples,
        seed=sampling.seed,
        min_snr_flag=min_snr_flag,
        accuracy=not no_accuracy,
        **vars(thresholds),
        jobs=jobs,
    )
    d = out_dir(output.out)

    def in_out(suffix: str) -> Path | None:
        return d / f"{model.stem}{suffix}" if d else None

    jsons = tuple(p for p in (output.json_out, in_out(".report.json")) if p is not None)
    outs = Outputs(
        json=jsons,
        csv=csv_dir or in_out(".csv"),
        markdown=markdown or in_out(".report.md"),
        html=html or in_out(".report.html"),
    )
    report, written = run(
        model,
        model_opts,
        opts,
        outs,
        show_progress=shows_progress(output),
    )
    show(
        lambda: render_json(report),
        lambda: render_terminal(report),
        report.warnings,
        written,
        output,
    )
    checks = dict(report.meta)
    if checks["verdict"] == "FAIL":
        from mlitool.errors import ThresholdError

        raise ThresholdError(checks["checks"])
