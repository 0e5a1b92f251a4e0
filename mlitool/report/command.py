"""`mlitool report`: build the whole report of a model and write it in the requested forms.

Steps: read, (calibrate,) lower exactly as `convert` does (`mlitool.pipeline`); summary,
memory and quantization from the MLI model (`build.build_report`); then, for MLI 2.x targets
(the executor reproduces MLI 2.0.2), accuracy from `verify` and the per-layer sensitivity, both
on the same inputs (`--input`, else `--samples` seeded random inputs as verify draws them) and
the same MLI model. MLI 1.x targets get the static sections only (the report says so).

Every file is rendered from the one report document and all of them are written together,
atomically (`mlitool.plumbing.fsio`): the same model and inputs give byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from mlitool.errors import OptionError
from mlitool.mli.memory.placement import plan_model
from mlitool.pipeline import ModelOptions, load, settle
from mlitool.plumbing.parallel import batch_size
from mlitool.plumbing.progress import Progress, RichProgress, progress_for
from mlitool.report.document import Report, Section
from mlitool.report.quant_stats import DEFAULT_SNR_THRESHOLD_DB
from mlitool.verdict import Measured, judge, measured
from mlitool.verify.document import thresholds_of

DEFAULT_SAMPLES = 32


@dataclass(frozen=True)
class ReportOptions:
    """What the report runs (the model options are the pipeline's `ModelOptions`)."""

    input: Path | None = None
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    min_snr_flag: float = DEFAULT_SNR_THRESHOLD_DB
    accuracy: bool = True  # False: static sections only (no execution)
    batch: int | None = None  # samples per step (None: by the model's size)
    # the verdict's thresholds (`mlitool.verdict`): the verdict fails below / above
    min_snr: float | None = None
    max_lsb: int | None = None
    min_accuracy: float | None = None  # percent, mli mode's top-1 against `labels`
    ram_budget: int | str | None = None  # bytes, or "48K"
    rom_budget: int | str | None = None
    labels: Path | None = None  # class index per --input sample
    jobs: int | None = 1  # processes for the accuracy runs (None: every core)


def _check(opts: ReportOptions) -> None:
    if opts.samples < 1:
        raise OptionError(f"--samples {opts.samples}: give at least 1")
    if opts.batch is not None and opts.batch < 1:
        raise OptionError(f"batch {opts.batch}: give at least 1")


# --- the report --------------------------------------------------------------------------------


def make_report(
    model_path: str | Path,
    model_opts: ModelOptions,
    opts: ReportOptions,
    progress: Progress | None = None,
) -> Report:
    from mlitool.report.build import build_report
    from mlitool.verify.command import settled

    model_path = Path(model_path)
    progress = progress or Progress()
    _check(opts)
    s = settle(model_opts)  # bad build names fail before any work
    opts = settled(opts, s)
    graph, mli = load(model_path, s, calibrated_by="report", progress=progress)
    budget = s.fast_memory
    fast = None if budget is None else plan_model(mli, budget)  # exit 4 when it cannot fit
    note = extra_meta = accuracy = doc = None
    extra: list[Section] = []
    activations = None
    if not opts.accuracy:
        note = "Accuracy and sensitivity not evaluated (--no-accuracy)."
    elif not mli.target.executable:
        note = (
            f"Accuracy and sensitivity are not evaluated for MLI {mli.mli_version}: the executor "
            "reproduces MLI 2.0.2 arithmetic only."
        )
    else:
        extra_meta, extra, activations, doc, accuracy = _executed(
            model_path, graph, mli, s.arith, opts, progress
        )
    report = build_report(
        mli,
        graph,
        snr_threshold_db=opts.min_snr_flag,
        activations=activations,
        random_inputs=opts.input is None,
        fast=fast,
    )
    sections = list(report.sections)
    if note:
        sections[0] = _with_text(sections[0], note)
    config = (("config", mli.config or "none"),)
    if budget is not None:
        config += (("fast_memory", budget),)
    report = Report(
        report.title,
        (*report.meta, *config, *(extra_meta or ())),
        (*sections, *extra),
        report.warnings,
    )
    from mlitool.convert import default_name
    from mlitool.footprint.summary import footprint, footprint_text
    from mlitool.report.layer_names import layer_symbols, with_symbols

    report = with_symbols(report, layer_symbols(mli, default_name(model_path), budget is not None))
    fp = footprint(graph, mli, budget) if budget is not None or not doc else doc["footprint"]
    checked, reasons = verdict(report, opts, measured(doc, fp), executed=note is None)
    word = checked[0][1]
    line = f"{word}: " + (f"{'; '.join(reasons)}. " if word == "FAIL" else "")
    line += footprint_text(fp) + (f"; {accuracy}" if accuracy else "")
    return Report(
        report.title,
        (("summary", line), *checked, *report.meta),
        report.sections,
        report.warnings,
    )


def verdict(
    report: Report, opts: ReportOptions, figures: Measured, *, executed: bool
) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """The headline: FAIL when a threshold the user set fails (`mlitool.verdict.judge`),
    REVIEW when a finding changes what the deployed C computes (`mlitool.report.findings`),
    else PASS; with the checks that decided it. Also returns the thresholds missed."""
    th = thresholds_of(opts)
    word, reasons = judge(figures, th)
    table = report.table("findings")
    findings = list(zip(table.column("c_symbol"), table.column("tensor")))
    notes = len(report.table("notes").rows)
    checks = []
    if th.given():
        checks.append(f"thresholds {', '.join(th.given())}")
    checks += [f"FAILED {r}" for r in reasons] if word == "FAIL" else reasons
    if findings:
        named = ", ".join(f"{sym} ({name!r})" for sym, name in findings[:3])
        more = f" and {len(findings) - 3} more" if len(findings) > 3 else ""
        checks.append(f"{len(findings)} finding(s) that change the deployed results: {named}{more}")
    else:
        checks.append("no finding that changes the deployed results")
    if notes:
        checks.append(f"{notes} note(s), informational")
    if not executed:
        checks.append("accuracy not evaluated")
    head = "FAIL" if word == "FAIL" else "REVIEW" if findings else "PASS"
    return (("verdict", head), ("checks", "; ".join(checks))), reasons if word == "FAIL" else []


def _with_text(section: Section, text: str) -> Section:
    return Section(section.id, section.title, (*section.text, text), section.tables, section.charts)


def _random_note(graph, seed: int) -> str:
    """ "random, seed 3", and the inputs drawn as indices in the range they index."""
    from mlitool.execute.reference.inputs import index_note

    ranges = [f"{name!r} in [{lo}, {hi}]" for name, (lo, hi) in index_note(graph).items()]
    return f"random, seed {seed}" + (f"; indices {', '.join(ranges)}" if ranges else "")


def _executed(
    model_path: Path, graph, mli, arith, opts: ReportOptions, progress: Progress
) -> tuple[list, list[Section], dict]:
    from mlitool.execute.mli.presets import describe
    from mlitool.execute.reference.inputs import sample_inputs
    from mlitool.footprint.summary import accuracy_text
    from mlitool.report.accuracy import accuracy_from_verify, sensitivity_section
    from mlitool.report.activations import observe_activations
    from mlitool.report.sensitivity import layer_sensitivity, steps
    from mlitool.verify.command import VerifyOptions, compare

    data = sample_inputs(graph, opts.input, opts.samples, opts.seed)
    n = next(iter(data.values())).shape[0]
    size = batch_size(graph, opts.batch)
    batches = -(-n // size)
    # verify gets every option of the report's that it has too (inputs, thresholds, labels, jobs)
    takes = {f.name for f in fields(VerifyOptions)}
    common = {f.name: getattr(opts, f.name) for f in fields(opts) if f.name in takes}
    vopts = VerifyOptions(**common | {"batch": size, "progress": progress})
    doc = compare(model_path, graph, mli, arith, vopts)
    activations = observe_activations(
        graph, mli, data, batch=size, progress=progress.stage("activation ranges", batches)
    )
    sens = layer_sensitivity(
        graph,
        mli,
        data,
        arith,
        batch=size,
        progress=progress.stage("sensitivity", steps(graph, mli, n, size)),
    )
    meta = [
        ("arithmetic", describe(arith)),
        ("samples", n),
        ("inputs", str(opts.input) if opts.input is not None else _random_note(graph, opts.seed)),
    ]
    return (
        meta,
        [accuracy_from_verify(doc, mli, opts.min_snr_flag), sensitivity_section(sens, doc)],
        activations,
        doc,
        accuracy_text(doc),
    )


# --- output ----------------------------------------------------------------------------------


@dataclass
class Outputs:
    json: tuple[Path, ...] = ()
    csv: Path | None = None
    markdown: Path | None = None
    html: Path | None = None


def output_files(report: Report, out: Outputs) -> dict[Path, str]:
    """Path -> text of every requested file."""
    from mlitool.report.html import render_html
    from mlitool.report.render import csv_files, render_json, render_markdown

    files: dict[Path, str] = {}
    for path in out.json:
        files[Path(path)] = render_json(report)
    if out.markdown is not None:
        files[Path(out.markdown)] = render_markdown(report)
    if out.html is not None:
        files[Path(out.html)] = render_html(report)
    if out.csv is not None:
        files.update({Path(out.csv) / name: text for name, text in csv_files(report).items()})
    return files


def write_outputs(report: Report, out: Outputs) -> list[Path]:
    """Write every requested file at once (atomically, all or none)."""
    from mlitool.plumbing.fsio import make_dirs, write_files_atomically

    files = output_files(report, out)
    if out.csv is not None:
        d = Path(out.csv)
        if d.exists() and not d.is_dir():
            raise OptionError("--csv exists and is not a directory", str(d))
        make_dirs(d)
    for path in files:
        if not path.parent.is_dir():
            raise OptionError("the directory to write into does not exist", str(path))
    return write_files_atomically(files)


def run(
    model_path: str | Path,
    model_opts: ModelOptions,
    opts: ReportOptions,
    out: Outputs,
    *,
    show_progress: bool = False,
) -> tuple[Report, list[Path]]:
    """Build the report and write the requested files; returns the report and the paths."""
    with progress_for(show_progress) as progress:
        report = make_report(model_path, model_opts, opts, progress)
    return report, write_outputs(report, out)


__all__ = [
    "ReportOptions",
    "Outputs",
    "make_report",
    "output_files",
    "write_outputs",
    "run",
    "Progress",
    "RichProgress",
]
