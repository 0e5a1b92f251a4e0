"""`mlitool verify`: compare mli mode with the float and tflite modes; exit 3 when a threshold
fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import finish, model_options, out_dir, path_option, progress_of
from mlitool.cli.groups import grouped


@app.command("verify", epilog=EXIT_CODES)
@grouped
def verify_cmd(
    model: opt.ModelArg,
    quantization=opt.QUANTIZATION,
    sampling=opt.SAMPLES.with_defaults(samples=100),
    oracle: Optional[opt.Oracle] = typer.Option(
        None,
        "--oracle",
        case_sensitive=False,
        show_default=False,
        help="Also compare with the TFLite interpreter's reference kernels.",
    ),
    build=opt.BUILD,
    thresholds=opt.THRESHOLDS,
    board_log: Optional[Path] = path_option(
        "--board-log",
        metavar="FILE",
        help="Compare a board's per-layer CRC log (NAME_selftest, run --dump-crc) with every "
        "MLI build: the first differing layer and the build the CRCs match (exit 3 if it "
        "differs).",
    ),
    jobs: opt.JobsOpt = None,
    output=opt.OUTPUT,
) -> None:
    """Compare mli mode with float and tflite modes, per layer and at the outputs.
    With -o DIR: DIR/STEM.verify.json."""
    model_opts = model_options(quantization, build)
    from mlitool.errors import ThresholdError
    from mlitool.verify.command import VerifyOptions, verify

    d = out_dir(output.out)
    if board_log is not None:
        _board_log(model, model_opts, board_log, sampling, output)
        return
    with progress_of(output) as progress:
        doc = verify(
            model,
            model_opts,
            VerifyOptions(
                input=sampling.input_file,
                samples=sampling.samples,
                seed=sampling.seed,
                oracle=opt.value_of(oracle),
                **vars(thresholds),
                jobs=jobs,
                progress=progress,
            ),
        )

    def render():
        from mlitool.verify.render import render as render_doc

        render_doc(doc)

    files = (d / f"{model.stem}.verify.json",) if d else ()
    finish(doc, output, render=render, allow_nan=False, files=files)
    failed = doc["thresholds"]["failed"]
    if failed:
        raise ThresholdError("; ".join(failed))


def _board_log(model, model_opts, log, sampling, output) -> None:
    from mlitool.errors import ThresholdError
    from mlitool.verify.board_log import compare_board_log

    doc = compare_board_log(model, model_opts, log, sampling.input_file, sampling.seed)

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

    finish(doc, output, render=render)
    if not doc["agrees"]:
        f = doc["first_difference"]
        raise ThresholdError(
            f"the board differs from {doc['expected_build']} at sample {f['sample']}, "
            f"layer {f['layer']} ({f['op_type']}, op {f['op']})"
        )
