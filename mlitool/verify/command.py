"""`mlitool verify`: run a model's `float`, `tflite` (int8 models) and `mli` modes side by side.

Per IR op (its output tensor) and for the model outputs:
* vs float (the accuracy reference): SNR dB, max abs error, RMSE, cosine of the real values the
  MLI tensor holds (decoded with its own encoded parameters).
* vs tflite (int8 tensors only): share of differing elements and the largest difference in LSB of
  the MLI result expressed in the model's dtype.
* vs the TFLite interpreter with `oracle="litert"` (when installed): the same LSB figures.
* classifiers (outputs of SOFTMAX, or score vectors: `classifier_outputs`): top-1 agreement;
  float outputs behind a final DEQUANTIZE get their LSB figures in its int8 input's units.
Each per-op figure comes twice: *chained* (the whole mli run; errors accumulate) and *isolated*
(the op's MLI layers alone, fed the reference input: the float reference quantized to the layer's
input parameters for the SNR figures, the `tflite` activations for the LSB figures).

Reduced-accumulator analysis (issue 6 item 3): for every op whose layers include an SA8 MAC
kernel, the isolated layer is run with FULL_ACCU ON and OFF (the chosen ROUND_MODE) on the same
input; ops where OFF costs more than `ACCU_LIMIT_LSB` are named with the cost and a remedy
(`mlitool.verify.document` writes the document).
Every checked op's entry in "layers" carries its cost as "reduced_accumulator".

Samples are processed in batches and statistics accumulated, so memory stays bounded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from mlitool import ir, op_families
from mlitool.errors import OptionError
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.ops import MAC_KINDS
from mlitool.mli.types import MliModel
from mlitool.pipeline import ModelOptions, Settings, load, settle
from mlitool.plumbing.parallel import batch_size, check_jobs, context, map_batches
from mlitool.plumbing.progress import Progress
from mlitool.verify.classes import classifier_outputs
from mlitool.verify.document import build_document
from mlitool.verify.stats import LabelStats, LsbStats, RealStats, Top1Stats


@dataclass(frozen=True)
class VerifyOptions:
    """What verify runs and checks (the model options are the pipeline's `ModelOptions`)."""

    input: Path | None = None
    samples: int = 100
    seed: int = 0
    oracle: str | None = None
    min_snr: float | None = None
    max_lsb: int | None = None
    labels: Path | None = None  # class index per sample: accuracy of every mode against them
    min_accuracy: float | None = None  # percent, mli mode's top-1 against the labels
    ram_budget: int | str | None = None  # bytes, or "48K" (settled by `verify`)
    rom_budget: int | str | None = None
    batch: int | None = None  # samples per step (None: by the model's size)
    progress: Progress | None = None  # shows a stage "verify" over the samples
    jobs: int | None = 1  # processes (None: every core)


@dataclass
class _Row:
    """Accumulated figures of one op output tensor."""

    chained: RealStats = field(default_factory=RealStats)
    isolated: RealStats = field(default_factory=RealStats)
    chained_lsb: LsbStats = field(default_factory=LsbStats)
    isolated_lsb: LsbStats = field(default_factory=LsbStats)
    litert_lsb: LsbStats = field(default_factory=LsbStats)
    accu: LsbStats = field(default_factory=LsbStats)

    def merge(self, other: "_Row") -> None:
        for f in fields(self):
            getattr(self, f.name).merge(getattr(other, f.name))


def _is_int(t: ir.Tensor) -> bool:
    """A quantized integer tensor (int8; int16 in 16x8 models): LSB figures against tflite mode."""
    return t.dtype in ("int8", "int16") and t.quant is not None


def _lsb_tensor(t: ir.Tensor) -> ir.Tensor | None:
    """The integer tensor LSB figures of `t` are in: `t` itself, or for a QDQ file's float
    tensor (passes.qdq) the int8 tensor its pair makes of it; None for other float tensors."""
    if _is_int(t):
        return t
    if t.dtype == "float32" and t.qdq is not None and not t.qdq.per_axis:
        return dataclasses.replace(t, dtype="int8", quant=t.qdq, qdq=None)
    return None


def _lsb_values(t: ir.Tensor, lsb_t: ir.Tensor, values):
    """tflite mode's `values` of `t` as `lsb_t`'s integers (as the pair's QUANTIZE rounds them)."""
    from mlitool.execute.reference.params import affine_quantize

    return values if lsb_t is t else affine_quantize(values, lsb_t)


def verify(model_path: str | Path, model_opts: ModelOptions, opts: VerifyOptions) -> dict[str, Any]:
    """Read, lower and compare; returns a JSON-ready document (see `mlitool.verify.render`)."""
    model_path = Path(model_path)
    s = settle(model_opts)
    opts = settled(opts, s)
    graph, mli = load(model_path, s, executed_by="verify", progress=opts.progress)
    return compare(model_path, graph, mli, s.arith, opts)


def settled(opts, s: Settings):
    """`opts` (VerifyOptions or ReportOptions) with its thresholds settled: the given ones over
    the config file's, sizes in bytes (`mlitool.verdict.settle`)."""
    from dataclasses import asdict, replace

    from mlitool.verdict import Thresholds
    from mlitool.verdict import settle as settle_thresholds

    given = {f.name: getattr(opts, f.name) for f in fields(Thresholds)}
    th = settle_thresholds(**given, labels=opts.labels, config=s.file)
    return replace(opts, **asdict(th))


def compare(
    model_path: Path, graph: ir.Graph, mli: MliModel, arith: Arith, opts: VerifyOptions
) -> dict[str, Any]:
    """Run the comparison of an already lowered model with `arith`."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.mli.walker import check_mli_version
    from mlitool.execute.reference.graph import cannot_run
    from mlitool.execute.reference.inputs import sample_inputs

    check_mli_version(mli)
    data = sample_inputs(graph, opts.input, opts.samples, opts.seed)
    n = next(iter(data.values())).shape[0]

    int_model = any(_is_int(t) for t in graph.tensors if not t.is_constant)
    tflite_refusal = (
        cannot_run(graph, "tflite", {k: v[:1] for k, v in data.items()}) if int_model else None
    )
    use_tflite = int_model and tflite_refusal is None
    oracle_info = None
    if opts.oracle is not None:
        from mlitool import oracle as O

        if opts.oracle not in O.ORACLES:
            raise OptionError(f"--oracle {opts.oracle!r}: choose {', '.join(O.ORACLES)}")
        ok, message = O.available()
        refusal = O.cannot_load(model_path) if ok else None
        if refusal is not None:  # the other references still run
            ok, message = False, refusal
        oracle_info = {"name": opts.oracle, "available": ok, "message": message}
    if opts.max_lsb is not None and not use_tflite:
        raise OptionError(
            "--max-lsb needs an integer reference: an int8 model that tflite mode "
            f"runs ({tflite_refusal or 'this model has no integer activations'})"
        )

    classifier = classifier_outputs(graph)
    labels = None
    if opts.labels is not None:
        from mlitool.datafile import load_labels

        if opts.input is None:
            raise OptionError("--labels: give the samples they label with --input")
        if not classifier:
            raise OptionError("--labels: the model has no classifier output (SOFTMAX or scores)")
        labels = load_labels(opts.labels, n)
    primary = B.primary_tensors(graph, mli)
    groups = B.layers_by_op(mli)
    ops = [op for op in graph.ops if op.index in groups and op.outputs[0] in primary]
    accu_ops = [
        op.index
        for op in ops
        if any(
            layer.kind in MAC_KINDS and mli.tensor(layer.outputs[0]).el_type.name == "SA8"
            for layer in groups[op.index]
        )
    ]
    other_accu = Arith(arith.round_mode, not arith.full_accu)
    # Float outputs behind a final DEQUANTIZE: LSB figures in the units of its int8 input.
    units = {
        i: op.inputs[0]
        for op in graph.ops
        if op.type == "DEQUANTIZE"
        for i in op.outputs
        if i in graph.outputs and _is_int(graph.tensors[op.inputs[0]]) and op.inputs[0] in primary
    }
    rows = {op.index: _Row() for op in ops}
    outs = {i: _out_stats() for i in graph.outputs if i in primary}
    job = {
        "setup": op_families.load,
        "model_path": model_path,
        "graph": graph,
        "mli": mli,
        "arith": arith,
        "other_accu": other_accu,
        # the labels travel with the samples: workers get each batch's slice of both
        "data": data if labels is None else {**data, "labels": labels},
        "use_tflite": use_tflite,
        "litert": bool(oracle_info and oracle_info["available"]),
        "ops": ops,
        "accu_ops": set(accu_ops),
        "classifier": classifier,
        "labelled": min((i for i in graph.outputs if i in classifier), default=None),
        "units": units,
        "primary": primary,
        "groups": groups,
        "outs": list(outs),
    }
    advance, done = (opts.progress or Progress()).stage("verify (samples)", n), 0
    size = batch_size(graph, opts.batch)
    for batch_rows, batch_outs in map_batches(
        _compare_batch, n, size, check_jobs(opts.jobs), job, samples_key="data"
    ):
        for k, row in batch_rows.items():  # in batch order: the sums --jobs 1 makes
            rows[k].merge(row)
        for i, stats in batch_outs.items():
            for key, st in stats.items():
                outs[i][key].merge(st)
        advance(min(size, n - done))
        done += size

    references = {
        "float": True,
        "tflite": use_tflite,
        "tflite_refusal": tflite_refusal,
        "oracle": oracle_info,
    }
    return build_document(job, opts, n, rows, outs, references)


def _out_stats() -> dict[str, Any]:
    return {
        "float": RealStats(),
        "tflite": LsbStats(),
        "litert": LsbStats(),
        "top1_float": Top1Stats(),
        "top1_tflite": Top1Stats(),
        "top1_litert": Top1Stats(),
        **{f"labels_{mode}": LabelStats() for mode in ("float", "tflite", "mli")},
    }


def _compare_batch(start: int, stop: int) -> tuple[dict[int, _Row], dict[int, dict]]:
    """The figures of samples start..stop alone (in a worker process with --jobs > 1)."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.reference.graph import prepare_input, run_graph

    c = context()
    graph, mli, arith, primary, groups = c["graph"], c["mli"], c["arith"], c["primary"], c["groups"]
    ops, units, classifier = c["ops"], c["units"], c["classifier"]
    batch = {k: v[start:stop] for k, v in c["data"].items()}
    labels = batch.pop("labels", None)
    rows = {op.index: _Row() for op in ops}
    outs = {i: _out_stats() for i in c["outs"]}
    fl = run_graph(graph, batch, "float", keep=True)
    tf = run_graph(graph, batch, "tflite", keep=True) if c["use_tflite"] else {}
    _, raw = B.run_mli(graph, mli, batch, arith, keep=True)
    iso_float = dict(fl)  # what isolated runs are fed (as before: a copy)
    lit = {}
    if c["litert"]:
        from mlitool.oracle import run_litert

        native = {k: prepare_input(graph.tensors[k], v, "tflite") for k, v in batch.items()}
        wanted = [i for op in ops for i in op.outputs[:1]] + list(outs) + list(units.values())
        lit = run_litert(c["model_path"], graph, native, sorted(set(wanted)))
    for op in ops:
        i = op.outputs[0]
        t, m = graph.tensors[i], mli.tensor(primary[i])
        row = rows[op.index]
        mq = raw[m.name]
        row.chained.add(fl[i], B.decode(m, mq).reshape(fl[i].shape))
        iso = B.run_op(graph, mli, op.index, iso_float, arith, groups, primary)[i]
        row.isolated.add(fl[i], B.decode(m, iso).reshape(fl[i].shape))
        lsb_t = _lsb_tensor(t)
        if lsb_t is not None and i in tf:
            ref = _lsb_values(t, lsb_t, tf[i])
            row.chained_lsb.add(ref, B.to_model(lsb_t, m, mq))
            iso_q = B.run_op(graph, mli, op.index, tf, arith, groups, primary)[i]
            row.isolated_lsb.add(ref, B.to_model(lsb_t, m, iso_q))
            if i in lit:
                row.litert_lsb.add(_lsb_values(t, lsb_t, lit[i]), B.to_model(lsb_t, m, mq))
        else:
            iso_q = iso
        if op.index in c["accu_ops"]:
            feed = tf if (_is_int(t) and i in tf) else iso_float
            other = B.run_op(graph, mli, op.index, feed, c["other_accu"], groups, primary)[i]
            full, reduced = (iso_q, other) if arith.full_accu else (other, iso_q)
            row.accu.add(full, reduced)
    for i, st in outs.items():
        t, m = graph.tensors[i], mli.tensor(primary[i])
        real = B.decode(m, raw[m.name]).reshape(fl[i].shape)
        st["float"].add(fl[i], real)
        if labels is not None and i == c["labelled"]:
            st["labels_float"].add(fl[i], labels)
            st["labels_mli"].add(real, labels)
        if i in classifier:
            st["top1_float"].add(fl[i], real)
        j = i if _lsb_tensor(t) is not None else units.get(i)
        if j is not None and j in tf:
            mj = mli.tensor(primary[j])
            tj = graph.tensors[j]
            lsb_t = _lsb_tensor(tj)
            q = B.to_model(lsb_t, mj, raw[mj.name])
            ref = _lsb_values(tj, lsb_t, tf[j])
            st["tflite"].add(ref, q)
            if i in classifier:
                st["top1_tflite"].add(ref, q)
            if labels is not None and i == c["labelled"]:
                st["labels_tflite"].add(ref, labels)
            if j in lit:
                lit_ref = _lsb_values(tj, lsb_t, lit[j])
                st["litert"].add(lit_ref, q)
                if i in classifier:
                    st["top1_litert"].add(lit_ref, q)
    return rows, outs
