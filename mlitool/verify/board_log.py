"""`mlitool verify --board-log FILE`: a board's per-layer CRCs (the log of `mlitool.crclog`, as
NAME_selftest or `run --dump-crc` print it) against what the `mli` executor computes in each of
the four MLI builds: the first sample and layer that differ from the expected build, and the
builds whose CRCs the board's equal (the library was built with other flags)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mlitool.errors import InputDataError
from mlitool.execute.mli.kernels.intops import CONVERGENT, UP, Arith
from mlitool.pipeline import ModelOptions

BUILDS = [Arith(r, a) for r in (UP, CONVERGENT) for a in (False, True)]


def compare_board_log(
    model_path: str | Path,
    model_opts: ModelOptions,
    log_path: Path,
    input_file: Path | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """A JSON-ready document: the log's expected build (else the options' build), the first
    difference from it, and per build whether every CRC of the log matches and where not.
    The inputs are those of the self-test: the first samples of `input_file`, else the seeded
    random inputs of `convert --selftest` (seed 0 unless `seed`)."""
    from mlitool.crclog import expected_crcs, parse_log
    from mlitool.execute.mli.bridge import model_inputs
    from mlitool.execute.mli.presets import describe
    from mlitool.execute.reference.inputs import random_inputs
    from mlitool.pipeline import load, settle

    try:
        text = Path(log_path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputDataError(f"cannot read the board log: {exc.strerror}", str(log_path)) from None
    log = parse_log(text, str(log_path))
    s = settle(model_opts)
    graph, mli = load(Path(model_path), s)
    layers = mli.layers
    if log.layers is not None and log.layers != len(layers):
        raise InputDataError(
            f"the log is of {log.layers} layers, this conversion has {len(layers)}: give "
            "verify the convert options (--format, --config) the board's sources were made with",
            str(log_path),
        )
    bad = sorted(k for k in log.crcs if k[1] >= len(layers))
    if bad:
        raise InputDataError(f"layer {bad[0][1]} in the log: the model has {len(layers)}")
    n = log.samples or max(s for s, _ in log.crcs) + 1
    if input_file is not None:
        from mlitool.datafile import load_inputs

        given = {k: v[:n] for k, v in load_inputs(input_file, graph).items()}
    else:
        given = random_inputs(graph, n, seed=seed)
    inputs = model_inputs(graph, mli, given)
    keys = sorted(log.crcs)  # (sample, layer): the order the board ran them
    board = np.array([log.crcs[k][1] for k in keys], dtype=np.uint32)
    expected = log.build or describe(s.arith)

    def layer_doc(k: tuple[int, int]) -> dict[str, Any]:
        la = layers[k[1]]
        return {
            "sample": k[0],
            "layer": k[1],
            "op": la.index,
            "op_type": la.op_type,
            "kernel": la.kernel,
            "kind": la.kind,
        }

    builds = []
    for arith in BUILDS:
        crcs = expected_crcs(mli, inputs, arith)
        mine = np.array([crcs[s, pos] for s, pos in keys], dtype=np.uint32)
        differ = np.flatnonzero(mine != board)
        builds.append(
            {
                "build": describe(arith),
                "matches": not differ.size,
                "differing": int(differ.size),
                "first_difference": layer_doc(keys[differ[0]]) if differ.size else None,
            }
        )
    own = next((b for b in builds if b["build"] == expected), None)
    if own is None:
        raise InputDataError(f"unknown build {expected!r} in the log", str(log_path))
    matching = [b["build"] for b in builds if b["matches"]]
    return {
        "model": str(model_path),
        "board_log": str(log_path),
        "expected_build": expected,
        "records": len(keys),
        "samples": n,
        "agrees": own["matches"],
        "first_difference": own["first_difference"],
        "matching_builds": matching,
        "builds": builds,
        "causes": _causes(own, matching, layers),
        "warnings": list(mli.warnings),
    }


def _causes(own: dict, matching: list[str], layers) -> list[str]:
    """The likely causes, most likely first."""
    if own["matches"]:
        return []
    if matching:
        return [
            f"the MLI library was built with {' or '.join(matching)}, not "
            f"{own['build']}: rebuild it with the flags the header names (NAME_MLI_BUILD), "
            f"or convert with the board's --round/--accu"
        ]
    first = own["first_difference"]
    la = layers[first["layer"]]
    reads = [n for n in (la.weights, la.bias) if n] + list(la.params.values())
    where = f"layer {first['layer']} ({first['op_type']}, op {first['op']})"
    causes = [
        f"no build gives these CRCs and every layer before {where} agrees: look at what "
        "it reads and writes"
    ]
    if reads:
        causes.append(
            f"corrupted constants: its {', '.join(_role(la, n) for n in reads)} in flash "
            "(a linker section, a flash write, an overwritten constant)"
        )
    causes.append(
        "memory placement: the arena (alignment, overlap with other data, a region the "
        "kernel cannot reach, a stale cache)"
    )
    return causes


def _role(layer, name: str) -> str:
    if name == layer.weights:
        return "weights"
    if name == layer.bias:
        return "bias"
    return next(role for role, n in layer.params.items() if n == name)
