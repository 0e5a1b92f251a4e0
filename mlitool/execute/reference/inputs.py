"""The samples verify and report run: an inputs file, else seeded random inputs spanning each
input's quantized (or float) range."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from mlitool import ir
from mlitool.datafile import fed_inputs, load_inputs
from mlitool.errors import OptionError


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
    terms the full range the quantization covers); float inputs are uniform over [-1, 1), or over
    the range of a QUANTIZE op that consumes them when there is one. Deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    consumers = graph.consumers()
    out: dict[int, np.ndarray] = {}
    for idx in graph.inputs:
        t = graph.tensors[idx]
        kind = np.dtype(t.dtype).kind
        shape = tuple(t.shape)
        if kind in "iu":
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
