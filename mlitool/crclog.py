"""Per-layer CRC-32 of what every layer writes, and the text log that carries them.

`mlitool run --dump-crc` prints the log on the host, `NAME_selftest` prints the same lines on the
board (`NAME_SELFTEST_PRINTF`) and `mlitool verify --board-log` reads either back. The log:

    mlitool-crc 1 layers=L samples=N ROUND_MODE=UP FULL_ACCU=OFF
    crc SAMPLE LAYER OP CRC32

The header names the layer and sample counts and the MLI build the CRCs were computed for (on
the board: the build the header's NAME_MLI_BUILD names, whose CRCs the self-test expects). One `crc` line per sample and layer: SAMPLE counts
from 0, LAYER is the layer's position in NAME_run (the header's layer list, the hook's `layer`),
OP its TFLite op index, CRC32 eight hex digits: the CRC-32 of zlib / zip / PNG over the bytes of
the layer's output tensors, each one's elements in row-major order, little-endian, one after
the other in output order. Other lines are ignored, so a UART log can be given as it is.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import numpy as np

from mlitool.errors import InputDataError
from mlitool.mli.types import MliModel

HEADER = "mlitool-crc 1"
_HEADER = re.compile(r"mlitool-crc 1 layers=(\d+) samples=(\d+) (ROUND_MODE=\w+ FULL_ACCU=\w+)")
_LINE = re.compile(r"crc (\d+) (\d+) (\d+) ([0-9a-fA-F]{8})")


def crc32_nibble_table() -> list[int]:
    """The 16-entry table of zlib's CRC-32 (reflected 0xEDB88320) taken four bits at a time:
    the self-test's C computes the same CRCs as `layer_crcs` with 64 bytes of table."""
    table = []
    for c in range(16):
        for _ in range(4):
            c = (c >> 1) ^ (0xEDB88320 if c & 1 else 0)
        table.append(c)
    return table


def layer_crcs(model: MliModel, values: dict[str, np.ndarray], n: int) -> np.ndarray:
    """(n, layers) uint32: the CRC of every layer's outputs per sample, from the executor's
    values ({MLI tensor name: (n,) + shape containers}, as `run_model(keep=True)` gives them)."""
    out = np.zeros((n, len(model.layers)), dtype=np.uint32)
    for pos, layer in enumerate(model.layers):
        rows = [
            np.ascontiguousarray(
                values[name], dtype=model.tensor(name).el_type.dtype.newbyteorder("<")
            ).reshape(n, -1)
            for name in layer.outputs
        ]
        for s in range(n):  # one zlib call per tensor and sample: no loop over elements
            crc = 0
            for row in rows:
                crc = zlib.crc32(row[s], crc)
            out[s, pos] = crc
    return out


def expected_crcs(model: MliModel, inputs: dict[str, np.ndarray], arith) -> np.ndarray:
    """`layer_crcs` of the `mli` executor on MLI input containers with the build's arithmetic."""
    from mlitool.execute.mli.walker import run_model

    n = next(iter(inputs.values())).shape[0]
    return layer_crcs(model, run_model(model, inputs, arith, keep=True), n)


def log_lines(ops: list[int], crcs, build: str) -> list[str]:
    """The log of `crcs` ((samples, layers) integers) of the layers of TFLite ops `ops` (in
    layer order) for `build` ("ROUND_MODE=UP FULL_ACCU=OFF")."""
    rows = np.asarray(crcs, dtype=np.uint32).reshape(-1, len(ops)).tolist()
    lines = [f"{HEADER} layers={len(ops)} samples={len(rows)} {build}"]
    for s, row in enumerate(rows):
        lines += [f"crc {s} {pos} {ops[pos]} {crc:08x}" for pos, crc in enumerate(row)]
    return lines


@dataclass
class BoardLog:
    """A log read back: its build, layer and sample counts (None without a header line) and
    the CRCs {(sample, layer): (op index, crc)}."""

    build: str | None
    layers: int | None
    samples: int | None
    crcs: dict[tuple[int, int], tuple[int, int]]


def parse_log(text: str, path: str | None = None) -> BoardLog:
    """The `crc` records of a log (other lines skipped); InputDataError when it has none or
    contradicts itself."""
    build = layers = samples = None
    crcs: dict[tuple[int, int], tuple[int, int]] = {}
    for line in text.splitlines():
        line = line.strip()
        head = _HEADER.fullmatch(line)
        if head:
            if build is not None and (int(head[1]), int(head[2]), head[3]) != (
                layers,
                samples,
                build,
            ):
                raise InputDataError("two different mlitool-crc header lines", path)
            layers, samples, build = int(head[1]), int(head[2]), head[3]
            continue
        m = _LINE.fullmatch(line)
        if m:
            key = (int(m[1]), int(m[2]))
            value = (int(m[3]), int(m[4], 16))
            if crcs.setdefault(key, value) != value:
                raise InputDataError(
                    f"sample {key[0]}, layer {key[1]} has two different crc lines", path
                )
    if not crcs:
        raise InputDataError(
            f"no 'crc SAMPLE LAYER OP CRC32' lines (the format of run --dump-crc); "
            f"expected a '{HEADER} layers=L samples=N ROUND_MODE=.. FULL_ACCU=..' log",
            path,
        )
    return BoardLog(build, layers, samples, crcs)
