"""`mlitool inspect`: the model summary (style, inputs/outputs, one row per op, totals)."""

from __future__ import annotations

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import finish, out_dir
from mlitool.cli.groups import grouped


@app.command("inspect", epilog=EXIT_CODES)
@grouped
def inspect_cmd(model: opt.ModelArg, output=opt.OUTPUT) -> None:
    """Summarise a .tflite model: style, inputs/outputs, one row per op, totals.
    With -o DIR: DIR/STEM.inspect.json."""
    from mlitool import op_families
    from mlitool.inspect.command import inspect_file

    op_families.load()
    summary = inspect_file(model)
    d = out_dir(output.out)
    files = (d / f"{model.stem}.inspect.json",) if d else ()

    def render():
        from mlitool.inspect.render import render as render_summary

        render_summary(summary)

    finish(summary, output, render=render, files=files, allow_nan=False)
