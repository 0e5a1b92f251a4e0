"""Calibration: value ranges of a float model's activations, from the `float` executor.

`collect_ranges` runs the float executor over the calibration data in fixed-size batches and
keeps, per activation tensor (graph inputs included), the range `lower(..., ranges=...)` turns
into SA8 (scale, zero point) or FX frac bits:
* "minmax": the smallest and largest value seen.
* "percentile": the 0.01th and 99.99th percentiles of all values seen (outliers clipped),
  computed exactly over a deterministic subsample of at most `PERCENTILE_SAMPLES` values per
  tensor (every k-th value in sample order).
Both are deterministic: the same data gives the same ranges.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError, OptionError, UnsupportedError
from mlitool.plumbing.progress import Progress

METHODS = ("minmax", "percentile")
PERCENTILES = (0.01, 99.99)
PERCENTILE_SAMPLES = 1 << 20


def _as_inputs(graph: ir.Graph, data) -> dict:
    if isinstance(data, dict):
        return data
    inputs = [i for i in graph.inputs if not graph.tensors[i].is_constant]
    if len(inputs) != 1:
        raise InputDataError(
            f"the model has {len(inputs)} inputs: give calibration data as {{input name: array}}"
        )
    return {inputs[0]: data}


def collect_ranges(
    graph: ir.Graph,
    data,
    method: str = "minmax",
    batch: int | None = None,
    advance: Callable[[int], None] | None = None,
) -> dict[int, tuple[float, float]]:
    """{tensor index: (min, max)} of every non-constant float tensor over the calibration data
    (`data`: a batch array for a single-input model, or {input name/position/index: batch})."""
    from mlitool.execute.reference.graph import run_graph, unsupported_ops
    from mlitool.plumbing.parallel import batch_size

    if method not in METHODS:
        raise OptionError(f"calibration method {method!r}: choose {' or '.join(METHODS)}")
    cannot = unsupported_ops(graph, "float")
    if cannot:
        raise UnsupportedError(
            "calibration runs the float model on the data, and mlitool's float "
            f"executor cannot run {', '.join(cannot)}"
        )
    data = _as_inputs(graph, data)
    n = {np.asarray(a).shape[0] for a in data.values()}
    if len(n) != 1 or 0 in n:
        raise InputDataError(f"calibration inputs have sample counts {sorted(n)}")
    n = n.pop()
    batch = batch_size(graph, batch)
    # A PADV2 of -inf before a max pool becomes the pool's padding (passes.pool_padding): its
    # output's values that reach MLI are its input's.
    from mlitool.passes.pool_padding import fills_lowest

    padded_from = {op.outputs[0]: op.input("input") for op in graph.ops if fills_lowest(graph, op)}
    lows: dict[int, float] = {}
    highs: dict[int, float] = {}
    kept: dict[int, list[np.ndarray]] = {}
    for start in range(0, n, batch):
        chunk = {k: np.asarray(a)[start : start + batch] for k, a in data.items()}
        values = run_graph(graph, chunk, "float", keep=True)
        if advance:
            advance(len(next(iter(chunk.values()))))
        for idx, v in values.items():
            t = graph.tensors[idx]
            if t.is_constant or np.asarray(v).dtype.kind != "f":
                continue
            v = np.asarray(values.get(padded_from.get(idx), v), dtype=np.float64)
            if method == "minmax":
                lows[idx] = float(np.minimum(lows.get(idx, np.inf), v.min()))  # NaN stays
                highs[idx] = float(np.maximum(highs.get(idx, -np.inf), v.max()))
            else:
                kept.setdefault(idx, []).append(v.reshape(-1))
    if method == "minmax":
        return _finite_ranges(graph, {idx: (lows[idx], highs[idx]) for idx in sorted(lows)})
    out = {}
    for idx in sorted(kept):
        v = np.concatenate(kept[idx])
        step = -(-v.size // PERCENTILE_SAMPLES)
        lo, hi = np.percentile(v[::step], PERCENTILES)
        out[idx] = (float(lo), float(hi))
    return _finite_ranges(graph, out)


def _finite_ranges(
    graph: ir.Graph, ranges: dict[int, tuple[float, float]]
) -> dict[int, tuple[float, float]]:
    """Refuse ranges no format can encode: NaN or inf in the data or reached on the way."""
    for idx, (lo, hi) in ranges.items():
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise InputDataError(
                f"calibration: tensor {graph.tensors[idx].name!r} reaches "
                f"non-finite values (range [{lo}, {hi}]); the calibration "
                "data holds NaN or inf, or values the model overflows on"
            )
    return ranges


def calibration_ranges(
    graph: ir.Graph, path: str | Path, method: str = "minmax", progress: Progress | None = None
) -> dict[int, tuple[float, float]]:
    """`collect_ranges` over the inputs of a .npy/.npz file (see mlitool.datafile), as a
    progress stage "calibration" over the samples."""
    from mlitool.datafile import load_inputs

    if method not in METHODS:
        raise OptionError(f"--calibration-method {method!r}: choose {' or '.join(METHODS)}")
    data = load_inputs(path, graph)
    n = next(iter(data.values())).shape[0]
    advance = (progress or Progress()).stage("calibration (samples)", n)
    return collect_ranges(graph, data, method, advance=advance)
