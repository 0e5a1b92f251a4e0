"""Numbers as C initializer text, fast: tens of MB of weights must not take longer than `xxd -i`.

Integers are written in fixed-width, right-aligned columns ("  -5,"), 16 per line, built entirely
with numpy byte arrays: for 8- and 16-bit values a precomputed table of every value's text is
indexed with the data; wider values are formatted digit by digit with vector arithmetic.
Output is streamed in chunks so memory stays bounded whatever the array size.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np

PER_LINE = 16
INDENT = b"    "
_CHUNK_LINES = 1 << 14  # 262144 values per chunk
_SPACE, _COMMA, _MINUS, _ZERO, _NL = 0x20, 0x2C, 0x2D, 0x30, 0x0A


_SMALL = 4096  # below this many values Python's own formatting is quicker


def _fixed_width(values: np.ndarray, width: int) -> np.ndarray:
    """uint8[(n, width)]: each integer right-aligned in `width - 1` columns, then a comma."""
    if values.size < _SMALL and (values.dtype.kind == "i" or values.dtype.itemsize < 8):
        # one printf-style call for the whole array: far cheaper than a format per value
        text = (f"%{width - 1}d," * values.size) % tuple(values.reshape(-1).tolist())
        if len(text) == values.size * width:  # every value fits its column
            return np.frombuffer(text.encode("ascii"), dtype=np.uint8).reshape(-1, width)
    v = values.astype(np.int64, copy=False)
    neg = v < 0
    mag = np.abs(v).astype(np.uint64)  # |INT64_MIN| fits in uint64
    out = np.full((v.size, width), _SPACE, dtype=np.uint8)
    out[:, -1] = _COMMA
    ndigits = np.ones(v.size, dtype=np.int64)
    for k in range(1, 20):
        ndigits += mag >= np.uint64(10) ** np.uint64(k)
    rest = mag.copy()
    for k in range(width - 1):
        col = width - 2 - k
        digit = (rest % np.uint64(10)).astype(np.uint8) + np.uint8(_ZERO)
        rest //= np.uint64(10)
        out[:, col] = np.where(k < ndigits, digit, np.where(neg & (ndigits == k), _MINUS, _SPACE))
    return out


def _width(bits: int) -> int:
    return len(str(-(1 << (bits - 1)))) + 1


@lru_cache(maxsize=None)
def _table(kind: str) -> np.ndarray:
    """Text of every 8/16-bit value as fixed-width byte strings, indexed by the value's
    unsigned bit pattern (so the data is used as an index without conversion)."""
    if kind == "u1":
        values = np.arange(256, dtype=np.int64)
    else:
        bits = 8 if kind == "i1" else 16
        values = np.arange(1 << bits, dtype=np.int64)
        values[values >= 1 << (bits - 1)] -= 1 << bits  # two's complement
    width = _width(16) if kind == "i2" else _width(8)
    return _fixed_width(values, width).view(f"S{width}").reshape(-1)


_UNSIGNED_VIEW = {"i1": np.uint8, "u1": np.uint8, "i2": np.uint16}


def _cells(values: np.ndarray) -> np.ndarray:
    """uint8[(n, width)]: each value right-aligned, then a comma; width from the dtype."""
    kind = f"{values.dtype.kind}{values.dtype.itemsize}"
    if kind in _UNSIGNED_VIEW:
        table = _table(kind)
        index = (
            values.view(_UNSIGNED_VIEW[kind])
            if values.dtype.isnative
            else values.astype(values.dtype.newbyteorder("=")).view(_UNSIGNED_VIEW[kind])
        )
        return table.take(index).view(np.uint8).reshape(-1, table.itemsize)
    if values.dtype.kind in "iu":
        return _fixed_width(values, _width(64) if values.dtype.itemsize == 8 else _width(32))
    raise TypeError(f"cannot format {values.dtype} as C integers")


def int_cells(values: np.ndarray) -> np.ndarray:
    """uint8[(n, width)]: integers right-aligned in space-padded columns, each followed by a
    comma, formatted in the narrowest table that holds them (any integer dtype)."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype.kind not in "iu":
        raise TypeError(f"cannot format {flat.dtype} as integers")
    if flat.size and flat.dtype.itemsize > 1:
        lo, hi = int(flat.min()), int(flat.max())
        if -128 <= lo and hi <= 127:
            flat = flat.astype(np.int8)
        elif -32768 <= lo and hi <= 32767:
            flat = flat.astype(np.int16)
    return _cells(flat)


@lru_cache(maxsize=None)
def _pair_table(kind: str) -> np.ndarray:
    """uint8[(65536, 2 * width)]: the text of two consecutive 8-bit values, indexed by the two
    bytes read as one little-endian uint16 (half as many lookups as one value at a time)."""
    single = _table(kind).view(np.uint8).reshape(256, -1)
    width = single.shape[1]
    pairs = np.empty((256, 256, 2 * width), dtype=np.uint8)  # [second byte, first byte]
    pairs[:, :, :width] = single[None, :, :]
    pairs[:, :, width:] = single[:, None, :]
    return pairs.reshape(65536, 2 * width)


_PAIRS_FROM = 1 << 16  # 8-bit arrays at least this long use the pair table


def _line_cells(values: np.ndarray, lines: int) -> np.ndarray:
    """uint8[(lines, PER_LINE * width)]: the cells of the first `lines` full lines."""
    head = values[: lines * PER_LINE]
    if head.dtype.kind in "iu" and head.dtype.itemsize == 1 and head.size >= _PAIRS_FROM:
        pairs = _pair_table(f"{head.dtype.kind}1")
        return pairs.take(head.view("<u2"), axis=0).reshape(lines, -1)
    return _cells(head).reshape(lines, -1)


def _lines(values: np.ndarray) -> Iterator[bytes | np.ndarray]:
    """Rows of PER_LINE cells (the last row may be shorter), indented, newline-terminated."""
    full = values.size // PER_LINE
    if full:
        cells = _line_cells(values, full)
        rows = np.empty((full, len(INDENT) + cells.shape[1] + 1), dtype=np.uint8)
        rows[:, : len(INDENT)] = np.frombuffer(INDENT, dtype=np.uint8)
        rows[:, len(INDENT) : -1] = cells
        rows[:, -1] = _NL
        yield rows  # written as is: no copy into bytes
    if values.size % PER_LINE:
        yield INDENT + _cells(values[full * PER_LINE :]).tobytes() + b"\n"


def int_lines(data: np.ndarray) -> Iterator[bytes | np.ndarray]:
    """The elements of `data` (C order) as initializer lines, in chunks of bytes or of uint8
    arrays (both go to `file.write` and `bytes.join` as they are)."""
    flat = np.ascontiguousarray(data).reshape(-1)
    step = _CHUNK_LINES * PER_LINE
    for start in range(0, flat.size, step):
        yield from _lines(flat[start : start + step])


def float_lines(data: np.ndarray) -> Iterator[bytes]:
    """float32 elements as shortest round-trip literals (rare: small float parameter tensors)."""
    flat = np.ascontiguousarray(data, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("non-finite float value")
    text = [np.format_float_scientific(x, unique=True, trim="0") + "f," for x in flat]
    for start in range(0, len(text), PER_LINE):
        yield (INDENT.decode() + " ".join(text[start : start + PER_LINE]) + "\n").encode()


def int_texts(arrays: list[np.ndarray]) -> list[str]:
    """Each array's integers as decimal text separated by bare commas ("1,-2,3"), all arrays
    formatted in one numpy pass: many small arrays (per-axis parameters) would otherwise cost
    one Python `str` per value. Non-integer values are truncated, as `int()` would."""
    flats = [np.asarray(a).reshape(-1) for a in arrays]
    if any(f.dtype == np.uint64 for f in flats):  # may not fit the int64 formatted
        return [",".join(map(str, f.tolist())) for f in flats]
    sizes = [f.size for f in flats]
    if not sum(sizes):
        return [""] * len(flats)
    cells = int_cells(np.concatenate([f.astype(np.int64, copy=False) for f in flats]))
    chars = cells[cells != _SPACE]  # "v,v,...,v,"
    text = chars.tobytes().decode("ascii")
    value_starts = np.concatenate([[0], np.flatnonzero(chars == _COMMA) + 1])
    starts = value_starts[np.cumsum([0] + sizes)].tolist()  # text offset of each array
    return [text[a : b - 1] if n else "" for a, b, n in zip(starts, starts[1:], sizes)]


def int_list(values: np.ndarray | list[int]) -> str:
    """A short list on one line: "1, 2, 3" (shapes, strides, small parameter arrays)."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype.kind in "iu":  # tolist() gives Python ints already
        return ", ".join(map(str, flat.tolist()))
    return ", ".join(str(int(v)) for v in flat.tolist())
