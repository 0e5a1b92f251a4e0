"""`mlitool inspect`: the model summary (style, inputs/outputs, one row per op, totals)."""

from __future__ import annotations

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.commands.common import finish, out_dir


@app.command("inspect", epilog=EXIT_CODES)
def inspect_cmd(
    model: opt.ModelArg,
    as_json: opt.JsonOpt = False,
    json_out: opt.JsonOutOpt = None,
    out: opt.OutOpt = None,
    quiet: opt.QuietOpt = False,
) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals.
    With -o DIR: DIR/STEM.inspect.json."""
    from mlitool.inspect.command import inspect_file

    summary = inspect_file(model)
    d = out_dir(out)
    files = (d / f"{model.stem}.inspect.json",) if d else ()

    def render():
        from mlitool.inspect.render import render as render_summary

        render_summary(summary)

    finish(
        summary,
        as_json=as_json,
        json_out=json_out,
        quiet=quiet,
        render=render,
        files=files,
        allow_nan=False,
    )
