"""`mlitool verify`: compare mli mode with the float and tflite modes; exit 3 when a threshold
fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.commands.common import finish, model_options, out_dir


@app.command("verify", epilog=EXIT_CODES)
def verify_cmd(
    model: opt.ModelArg,
    fmt: opt.FormatOpt = None,
    config: opt.ConfigOpt = None,
    calibration: opt.CalibrationOpt = None,
    calibration_method: opt.CalibrationMethodOpt = "minmax",
    input_file: opt.SamplesFileOpt = None,
    samples: opt.SamplesOpt = 100,
    seed: opt.SeedOpt = 0,
    oracle: Optional[opt.Oracle] = typer.Option(
        None,
        "--oracle",
        case_sensitive=False,
        show_default=False,
        help="Also compare with the TFLite interpreter's reference kernels.",
    ),
    target: opt.TargetOpt = None,
    round_mode: opt.RoundOpt = None,
    accu: opt.AccuOpt = None,
    min_snr: opt.MinSnrOpt = None,
    max_lsb: opt.MaxLsbOpt = None,
    labels: opt.LabelsOpt = None,
    min_accuracy: opt.MinAccuracyOpt = None,
    ram_budget: opt.RamBudgetOpt = None,
    rom_budget: opt.RomBudgetOpt = None,
    board_log: Optional[Path] = typer.Option(
        None,
        "--board-log",
        metavar="FILE",
        show_default=False,
        help="Compare a board's per-layer CRC log (NAME_selftest, run --dump-crc) with every "
        "MLI build: the first differing layer and the build the CRCs match (exit 3 if it "
        "differs).",
    ),
    jobs: opt.JobsOpt = None,
    as_json: opt.JsonOpt = False,
    json_out: opt.JsonOutOpt = None,
    out: opt.OutOpt = None,
    quiet: opt.QuietOpt = False,
) -> None:
    """Compare mli mode with float and tflite modes, per layer and at the outputs.
    With -o DIR: DIR/STEM.verify.json."""
    model_opts = model_options(locals())  # first: its locals are the parameters
    from mlitool.errors import ThresholdError
    from mlitool.plumbing.progress import progress_for, wanted
    from mlitool.verify.command import VerifyOptions, verify

    d = out_dir(out)
    if board_log is not None:
        _board_log(model, model_opts, board_log, input_file, seed, as_json, json_out, quiet)
        return
    with progress_for(wanted(as_json=as_json, quiet=quiet)) as progress:
        doc = verify(
            model,
            model_opts,
            VerifyOptions(
                input=input_file,
                samples=samples,
                seed=seed,
                oracle=opt.value_of(oracle),
                min_snr=min_snr,
                max_lsb=max_lsb,
                labels=labels,
                min_accuracy=min_accuracy,
                ram_budget=ram_budget,
                rom_budget=rom_budget,
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


def _board_log(model, model_opts, log, input_file, seed, as_json, json_out, quiet) -> None:
    from mlitool.errors import ThresholdError
    from mlitool.verify.board_log import compare_board_log

    doc = compare_board_log(model, model_opts, log, input_file, seed)

    def render():
        print(
            f"{doc['board_log']}: {doc['records']} layer CRCs of {doc['samples']} sample(s), "
            f"expected build {doc['expected_build']}"
        )
        if doc["agrees"]:
            print("the board agrees: every layer's CRC matches")
        else:
            f = doc["first_difference"]
            print(
                f"first difference: sample {f['sample']}, layer {f['layer']} "
                f"({f['op_type']}, TFLite op {f['op']}, {f['kernel'] or f['kind']})"
            )
            others = doc["matching_builds"]
            print(f"the CRCs match: {', '.join(others) if others else 'no MLI build'}")
            for cause in doc["causes"]:
                print(f"  likely: {cause}")

    finish(doc, as_json=as_json, json_out=json_out, quiet=quiet, render=render)
    if not doc["agrees"]:
        f = doc["first_difference"]
        raise ThresholdError(
            f"the board differs from {doc['expected_build']} at sample {f['sample']}, "
            f"layer {f['layer']} ({f['op_type']}, op {f['op']})"
        )
