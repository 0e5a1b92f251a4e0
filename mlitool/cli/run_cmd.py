"""`mlitool run`: run a model on a batch of inputs and write the outputs as .npz."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import finish, model_options, out_dir, path_option, progress_of
from mlitool.cli.groups import grouped
from mlitool.errors import OptionError


@app.command("run", epilog=EXIT_CODES)
@grouped
def run_cmd(
    model: opt.ModelArg,
    input_file: Path = typer.Option(
        ...,
        "--input",
        "-i",
        help=".npy / .npz batch (leading "
        "dimension = samples; .npz keyed by input name). Float arrays "
        "are real values, arrays of the input's dtype quantized values.",
        show_default=False,
    ),
    mode: opt.Mode = typer.Option(
        "mli",
        "--mode",
        "-m",
        case_sensitive=False,
        help="Arithmetic: MLI kernels, TFLite reference, or float.",
    ),
    quantization=opt.QUANTIZATION,
    build=opt.BUILD,
    npz: Optional[Path] = path_option(
        "--npz", metavar="FILE", help="The output .npz [default: DIR/STEM.MODE.npz]."
    ),
    dump_layers: bool = typer.Option(
        False,
        "--dump-layers",
        help="Also write every intermediate tensor (mli mode: raw MLI tensors as mli/NAME).",
    ),
    dump_crc: bool = typer.Option(
        False,
        "--dump-crc",
        help="mli mode: print the CRC-32 of every layer's output per sample, the log format "
        "NAME_selftest prints and verify --board-log reads (in --json: 'crc').",
    ),
    jobs: opt.JobsOpt = None,
    output=opt.OUTPUT,
) -> None:
    """Run a model on a batch of inputs (float, tflite or mli arithmetic) and write the outputs
    as .npz into -o DIR [default: the working directory]."""
    model_opts = model_options(quantization, build)
    from mlitool.run import RunOptions, default_output, run

    out = output.out
    if out is not None and out.suffix == ".npz":
        raise OptionError(f"-o/--out {out} names a directory; give the file with --npz {out}")
    if npz is None and out is not None:
        npz = out_dir(out) / default_output(model, mode.value).name
    with progress_of(output) as progress:
        summary = run(
            model,
            model_opts,
            RunOptions(
                input=input_file,
                mode=mode.value,
                output=npz,
                dump_layers=dump_layers,
                dump_crc=dump_crc,
                jobs=jobs,
                progress=progress,
            ),
        )

    def render():
        if dump_crc:  # the log alone, so that stdout can go to a file as it is
            from mlitool.crclog import log_lines

            crc = summary["crc"]
            ops = [layer["op"] for layer in crc["layers"]]
            rows = [[int(h, 16) for h in row] for row in crc["samples"]]
            print("\n".join(log_lines(ops, rows, crc["build"])))
            return
        extra = f", {summary['format']}, {summary['build']}" if summary["mode"] == "mli" else ""
        print(
            f"{summary['model']}: {summary['samples']} sample(s) in {summary['mode']} mode{extra}"
        )
        for o in summary["outputs"]:
            top = f"; top-1 of the first samples: {o['top1']}" if "top1" in o else ""
            print(f"  {o['name']}: {o['dtype']} {o['shape']}{top}")
        if summary["mode"] == "mli":
            print(f"config: {summary['config'] or 'none'}")

    finish(summary, output, render=render)
