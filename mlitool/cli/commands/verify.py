"""`mlitool verify`: compare mli mode with the float and tflite modes; exit 3 when a threshold
fails."""

from __future__ import annotations

from typing import Optional

import typer

from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.commands.common import finish, model_options, out_dir
from mlitool.cli.options import (
    AccuOpt,
    CalibrationMethodOpt,
    CalibrationOpt,
    ConfigOpt,
    FormatOpt,
    JobsOpt,
    JsonOpt,
    JsonOutOpt,
    MaxLsbOpt,
    MinSnrOpt,
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
    from mlitool.errors import ThresholdError
    from mlitool.plumbing.progress import progress_for, wanted
    from mlitool.verify.command import VerifyOptions, verify

    model_opts = model_options(
        fmt, config, calibration, calibration_method, target, round_mode, accu
    )
    d = out_dir(out)
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

    finish(
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
