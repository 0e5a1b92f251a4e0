"""`mlitool run`: execute a model on a batch of inputs in one mode and write the outputs (.npz).

Modes: `float` (real-valued reference), `tflite` (TFLite integer reference arithmetic),
`mli` (the MLI model `convert` produces, MLI 2.0.2 arithmetic of the chosen build).
Outputs are written in the model's own representation (its output dtype; float models: real
values), keyed by output tensor name. `dump_layers` adds every intermediate IR tensor (same
representation) and, in mli mode, every MLI tensor's raw containers under `mli/<tensor name>`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlitool import op_families
from mlitool.errors import OptionError
from mlitool.pipeline import ModelOptions
from mlitool.plumbing.parallel import batch_ranges, batch_size, check_jobs, context, map_batches
from mlitool.plumbing.progress import Progress

MODES = ("float", "tflite", "mli")


@dataclass(frozen=True)
class RunOptions:
    """What run executes and writes (the model options are the pipeline's `ModelOptions`)."""

    input: Path
    mode: str = "mli"
    output: Path | None = None
    dump_layers: bool = False
    dump_crc: bool = False  # mli mode: every layer's output CRC per sample (`mlitool.crclog`)
    batch: int | None = None  # samples per step (None: by the model's size)
    jobs: int | None = 1  # processes (None: every core)
    progress: Progress | None = None


def default_output(model_path: Path, mode: str) -> Path:
    return Path(f"{model_path.stem}.{mode}.npz")


def execute(
    model_path: str | Path, model_opts: ModelOptions, opts: RunOptions
) -> tuple[dict[str, np.ndarray], dict]:
    """Run; returns ({npz key: array}, a JSON-ready summary without the file)."""
    from mlitool.datafile import load_inputs
    from mlitool.pipeline import read

    model_path = Path(model_path)
    if opts.mode not in MODES:
        raise OptionError(f"--mode {opts.mode!r}: choose {', '.join(MODES)}")
    if opts.dump_crc and opts.mode != "mli":
        raise OptionError(
            f"--dump-crc: the CRCs are of MLI layers; use --mode mli, not {opts.mode}"
        )
    model = read(model_path)
    graph = model.main
    inputs = load_inputs(opts.input, graph)
    n = next(iter(inputs.values())).shape[0]
    summary: dict[str, Any] = {
        "model": str(model_path),
        "mode": opts.mode,
        "input": str(opts.input),
        "samples": n,
        "warnings": list(model.warnings),
    }
    job = {
        "setup": op_families.load,
        "graph": graph,
        "inputs": inputs,
        "mode": opts.mode,
        "keep": opts.dump_layers,
        "crc": opts.dump_crc,
    }
    if opts.mode == "mli":
        from mlitool.execute.mli.presets import describe
        from mlitool.pipeline import lower_model, settle

        s = settle(model_opts)  # an MLI model only: the other modes take no MLI option
        job["arith"] = s.arith
        job["mli"] = lower_model(
            model, model_path, s, executed_by="run --mode mli", progress=opts.progress
        )
        summary.update(
            format=job["mli"].format,
            mli=job["mli"].mli_version,
            build=describe(job["arith"]),
            config=job["mli"].config,
            warnings=list(job["mli"].warnings),
        )  # the reader's, then lowering's
    elif model_opts.calibration is not None:  # only an MLI model is calibrated
        summary["warnings"].append(f"--calibration ignored: --mode {opts.mode} runs no MLI model")
    advance = (opts.progress or Progress()).stage(f"run ({opts.mode})", n)
    size = batch_size(graph, opts.batch)
    parts: list[dict[str, np.ndarray]] = []
    # Batch sizes from the ranges: a graph without outputs (TFLite runs one) gives empty parts.
    for (start, stop), part in zip(
        batch_ranges(n, size),
        map_batches(_run_batch, n, size, check_jobs(opts.jobs), job, samples_key="inputs"),
    ):
        parts.append(part)
        advance(stop - start)
    # Batches in order: the arrays one run over every sample gives.
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    if opts.dump_crc:
        summary["crc"] = _crc_summary(job["mli"], arrays.pop(_CRC_KEY), summary["build"])
    values = {i: arrays[graph.tensors[i].name] for i in graph.outputs}
    outputs = []
    for i in graph.outputs:
        t = graph.tensors[i]
        v = np.asarray(values[i])
        entry = {"name": t.name, "dtype": str(v.dtype), "shape": list(v.shape)}
        if v.ndim >= 2 and v[0].size > 1:
            entry["top1"] = [int(k) for k in np.argmax(v.reshape(n, -1), axis=1)[:10]]
        outputs.append(entry)
    summary["outputs"] = outputs
    return arrays, summary


_CRC_KEY = "\0crc"  # not a name an npz entry can have: removed before the file is written


def _crc_summary(mli, crcs: np.ndarray, build: str) -> dict[str, Any]:
    """The CRCs for --json (the terminal shows them as the log of `mlitool.crclog`)."""
    from mlitool.crclog import HEADER

    layers = [
        {"position": pos, "op": la.index, "op_type": la.op_type, "kernel": la.kernel}
        for pos, la in enumerate(mli.layers)
    ]
    return {
        "format": HEADER,
        "build": build,
        "layers": layers,
        "samples": [[f"{c:08x}" for c in row] for row in crcs.tolist()],
    }


def _run_batch(start: int, stop: int) -> dict[str, np.ndarray]:
    """{npz key: array} of samples start..stop (in a worker process with --jobs > 1): the
    outputs, and with --dump-layers every tensor (mli mode: every MLI tensor as mli/NAME)."""
    c = context()
    graph = c["graph"]
    batch = {k: v[start:stop] for k, v in c["inputs"].items()}
    raw: dict = {}
    if c["mode"] in ("float", "tflite"):
        from mlitool.execute.reference.graph import run_graph

        values = run_graph(graph, batch, c["mode"], keep=c["keep"])
    else:
        from mlitool.execute.mli.bridge import run_mli

        values, raw = run_mli(graph, c["mli"], batch, c["arith"], keep=c["keep"] or c["crc"])
    out = {graph.tensors[i].name: np.asarray(values[i]) for i in graph.outputs}
    if c.get("crc"):
        from mlitool.crclog import layer_crcs

        out[_CRC_KEY] = layer_crcs(c["mli"], raw, stop - start)
    if c["keep"]:
        out.update({f"mli/{name}": np.asarray(v) for name, v in raw.items()})
        for i, v in values.items():
            out.setdefault(graph.tensors[i].name, np.asarray(v))
    return out


def run(model_path: str | Path, model_opts: ModelOptions, opts: RunOptions) -> dict[str, Any]:
    """Execute and write the .npz atomically; returns the summary (with the file written)."""
    from mlitool.plumbing.fsio import write_file_atomically

    model_path = Path(model_path)
    arrays, summary = execute(model_path, model_opts, opts)
    out = Path(opts.output) if opts.output is not None else default_output(model_path, opts.mode)
    if out.suffix != ".npz":
        raise OptionError(f"--output {out}: the file must end in .npz")
    if out.parent and not out.parent.exists():
        raise OptionError("--output: the directory does not exist", str(out.parent))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    write_file_atomically(out, buf.getvalue())
    summary["output"] = str(out)
    summary["arrays"] = len(arrays)
    return summary
