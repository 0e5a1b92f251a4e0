"""`mlitool tune`: choose each layer's format (sa8 / fx8w16d / fx16), the cheapest mix found that
meets the targets; exit 3 when none does (the closest is shown and written)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from mlitool.cli import options as opt
from mlitool.cli.app import EXIT_CODES, app
from mlitool.cli.common import finish, model_options, out_dir, path_option, progress_of
from mlitool.cli.groups import grouped


@app.command("tune", epilog=EXIT_CODES)
@grouped
def tune_cmd(
    model: opt.ModelArg,
    quantization=opt.QUANTIZATION.without("fmt"),  # the formats are what tune chooses
    mli: opt.MliOpt = None,
    sampling=opt.SAMPLES,
    build=opt.BUILD,
    thresholds=opt.THRESHOLDS,
    fast_memory: opt.FastMemoryOpt = None,
    write_config: Optional[Path] = path_option(
        "--write-config", metavar="FILE", help="Write the chosen mix as a mlitool.toml to FILE."
    ),
    html: Optional[Path] = path_option(
        "--html", metavar="FILE", help="Write an HTML page with the Pareto front as a chart."
    ),
    jobs: opt.JobsOpt = None,
    output=opt.OUTPUT,
) -> None:
    """Choose each layer's format: from all sa8, promote the layers that buy the most accuracy
    per byte (measured bit-exactly) until --min-snr / --max-lsb / --min-accuracy are met within
    --ram-budget / --rom-budget. With -o DIR: DIR/mlitool.toml and DIR/STEM.tune.json."""
    model_opts = model_options(quantization, build, mli=mli, fast_memory=fast_memory)
    import sys
    import time

    from mlitool.errors import ThresholdError
    from mlitool.mli.memory.placement import parse_size
    from mlitool.plumbing.fsio import write_file_atomically
    from mlitool.tune.render import config_toml, html_page, render
    from mlitool.tune.search import Targets, TuneOptions, tune

    th = thresholds
    targets = Targets(
        min_snr=th.min_snr,
        max_lsb=th.max_lsb,
        min_accuracy=th.min_accuracy,
        ram_budget=None if th.ram_budget is None else parse_size(th.ram_budget, "--ram-budget"),
        rom_budget=None if th.rom_budget is None else parse_size(th.rom_budget, "--rom-budget"),
    )
    d = out_dir(output.out)
    started = time.perf_counter()
    with progress_of(output) as progress:
        doc = tune(
            model,
            model_opts,
            TuneOptions(
                targets=targets,
                input=sampling.input_file,
                samples=sampling.samples,
                seed=sampling.seed,
                labels=th.labels,
                jobs=jobs,
                progress=progress,
            ),
        )
    seconds = time.perf_counter() - started
    toml = config_toml(doc)
    written = []
    for path in (write_config, d / "mlitool.toml" if d else None):
        if path is not None:
            written.append(str(write_file_atomically(path, toml)))
    if html is not None:
        written.append(str(write_file_atomically(html, html_page(doc))))
    doc["files"] = written

    def show_table():
        render(doc)
        s = doc["search"]
        print(
            f"search: {s['mixes_evaluated']} mixes in {seconds:.1f} s; "
            f"{s['layers_run']:,} of {s['layers_total']:,} layer runs (the rest reused)",
            file=sys.stderr,
        )

    files = (d / f"{model.stem}.tune.json",) if d else ()
    finish(doc, output, render=show_table, allow_nan=False, files=files)
    if not doc["met"]:
        raise ThresholdError("; ".join(doc["failed"]))
