"""The samples verify and report run: an inputs file, else seeded random inputs spanning each
input's quantized (or float) range."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from mlitool import ir
from mlitool.datafile import fed_inputs, load_inputs
from mlitool.errors import OptionError
from mlitool.ops import spec as opspec


def input_range(t: ir.Tensor) -> tuple[float, float]:
    """Real-value range an input can represent: its quantized range, else [-1, 1] for floats."""
    kind = np.dtype(t.dtype).kind
    if kind in "iu":
        info = np.iinfo(np.dtype(t.dtype))
        if t.quant is None:
            return float(info.min), float(info.max)
        s, z = float(t.quant.scale[0]), int(t.quant.zero_point[0])
        return s * (info.min - z), s * (info.max - z)
    return -1.0, 1.0


_CHUNK = 64


def random_inputs(graph: ir.Graph, samples: int, seed: int = 0) -> dict[int, np.ndarray]:
    """{input tensor index: (samples,)+shape array} in each input's own dtype.

    Integer inputs are uniform over the whole dtype range (every quantized level, so in real
    terms the full range the quantization covers), except indices (`index_inputs`): uniform
    over [0, n) of what they index; float inputs are uniform over [-1, 1), or over
    the range of a QUANTIZE op that consumes them when there is one. Deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    consumers = graph.consumers()
    indices = index_inputs(graph)
    out: dict[int, np.ndarray] = {}
    for idx in graph.inputs:
        t = graph.tensors[idx]
        kind = np.dtype(t.dtype).kind
        shape = tuple(t.shape)
        if idx in indices:
            draw = partial(_draw_integers, rng, 0, indices[idx], shape)
        elif kind in "iu":
            info = np.iinfo(np.dtype(t.dtype))
            draw = partial(_draw_integers, rng, int(info.min), int(info.max) + 1, shape)
        elif kind == "b":
            draw = partial(_draw_integers, rng, 0, 2, shape)
        else:
            lo, hi = -1.0, 1.0
            for op in consumers.get(idx, []):
                if op.type == "QUANTIZE" and graph.tensors[op.outputs[0]].quant is not None:
                    lo, hi = input_range(graph.tensors[op.outputs[0]])
                    break
            draw = partial(_draw_uniform, rng, lo, hi, shape)
        out[idx] = np.empty((samples,) + tuple(t.shape), dtype=np.dtype(t.dtype))
        # In chunks: the same stream as one call, without a float64 / int64 copy of it all.
        for start in range(0, samples, _CHUNK):
            stop = min(start + _CHUNK, samples)
            out[idx][start:stop] = draw(stop - start)
    return out


# What an index may pass through on its way to an index slot: integer arithmetic and selection
# on unquantized int32 / int64 tensors and their bool conditions (Keras's Embedding wraps negative
# ids with LESS, ADD and SELECT before its GATHER).
_INDEX_TYPES = ("int32", "int64", "bool")


def index_inputs(graph: ir.Graph) -> dict[int, int]:
    """{graph input: n} for each unquantized integer input that feeds only index slots
    (`OpSpec.index_bounds`: GATHER positions, EMBEDDING_LOOKUP ids, ...), directly or through
    integer ops, and no graph output: valid in [0, n), n the smallest bound it reaches."""
    consumers = graph.consumers()
    out = {}
    for idx in graph.inputs:
        t = graph.tensors[idx]
        if np.dtype(t.dtype).kind in "iu" and t.quant is None:
            n = _index_bound(graph, idx, consumers)
            if n:
                out[idx] = n
    return out


def _index_bound(graph: ir.Graph, start: int, consumers: dict) -> int | None:
    """The smallest bound of the index slots `start` reaches; None when it reaches none, or
    anything but an index slot or an integer op (its values matter as they are)."""
    bounds, seen, todo = [], set(), [start]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        if i in graph.outputs:
            return None
        for op in consumers.get(i, []):
            spec = opspec.get(op.type)
            slots = spec.index_bounds(graph, op) if spec and spec.index_bounds else {}
            at = [k for k, j in enumerate(op.inputs) if j == i]
            if all(k in slots for k in at):
                bounds += [slots[k] for k in at]
            elif all(
                graph.tensors[o].dtype in _INDEX_TYPES and graph.tensors[o].quant is None
                for o in op.outputs
            ):
                todo += op.outputs
            else:
                return None
    return min(bounds) if bounds and min(bounds) > 0 else None


def index_note(graph: ir.Graph) -> dict[str, list[int]]:
    """{input name: [0, n - 1]} of `index_inputs`: what the documents say they drew."""
    return {graph.tensors[i].name: [0, n - 1] for i, n in index_inputs(graph).items()}


def sample_inputs(
    graph: ir.Graph, file: Path | None, samples: int, seed: int
) -> dict[int, np.ndarray]:
    """The arrays of `file` (.npy / .npz, as for run) when given, else `samples` random inputs."""
    if file is not None:
        return load_inputs(file, graph)
    if samples < 1:
        raise OptionError(f"--samples {samples}: give at least 1")
    fed_inputs(graph)
    return random_inputs(graph, samples, seed)


def _draw_integers(rng, lo: int, hi: int, shape: tuple, k: int) -> np.ndarray:
    return rng.integers(lo, hi, size=(k,) + shape, dtype=np.int64)


def _draw_uniform(rng, lo: float, hi: float, shape: tuple, k: int) -> np.ndarray:
    return rng.uniform(lo, hi, size=(k,) + shape)
