"""Fast text paths of the emitter give exactly the text of the slow, obvious ones; atomic
writes stay atomic when a lazily made file or an fsync fails."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlitool.emit.writer as writer
import mlitool.plumbing.fsio as fsio
from mlitool.emit.cdata import int_lines, int_texts
from mlitool.emit.manifest import dumps
from mlitool.emit.names import comment_text
from mlitool.emit.writer import emit
from mlitool.errors import OutputError
from tests.support.emit_models import mli2_model

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _lists(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


def _plain(doc):
    return json.dumps(
        doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False, default=_lists
    )


def _random_array(rng, dtype, n):
    if dtype.startswith("float"):
        span = {"float16": 4, "float32": 30, "float64": 300}[dtype]
        return (rng.standard_normal(n) * 10.0 ** rng.integers(-span, span, n)).astype(dtype)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
    values[:2] = [info.min, info.max][: min(n, 2)]
    return values


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(INT_TYPES), st.integers(0, 40)), max_size=8),
    st.integers(0, 2**32 - 1),
)
def test_int_texts_match_str(specs, seed):
    rng = np.random.default_rng(seed)
    arrays = [_random_array(rng, dtype, n) for dtype, n in specs]
    assert int_texts(arrays) == [",".join(map(str, a.tolist())) for a in arrays]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("n", [16 * 4096, 16 * 4096 + 21, 16 * 16384 * 2 + 16 * 7 + 3])
def test_int_lines_of_large_arrays_match_python_formatting(dtype, n):
    values = _random_array(np.random.default_rng(n), dtype, n)
    width = 6 if dtype == "int16" else 4
    want = "".join(
        "    " + "".join(f"{v:>{width}}," for v in values[i : i + 16].tolist()) + "\n"
        for i in range(0, n, 16)
    )
    assert b"".join(int_lines(values)).decode() == want


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_arrays = st.tuples(
    st.sampled_from(INT_TYPES + ["float16", "float32", "float64"]),
    st.integers(0, 5),
    st.integers(0, 2**32 - 1),
).map(lambda s: _random_array(np.random.default_rng(s[2]), s[0], s[1]))
_docs = st.recursive(
    _scalars | _arrays,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(_docs)
def test_manifest_dumps_is_json_dumps(doc):
    assert dumps(doc) == _plain(doc)


@pytest.mark.parametrize(
    "doc",
    [
        {"a": float("nan")},
        {"a": [1.0, float("inf")]},
        {"a": np.array([0.5, np.nan])},
        {1: "int key"},
        {"a": object()},
        {"a": np.zeros((2, 2), np.int8)},
        {"s": "nul \x00 é \u2028"},
    ],
)
def test_manifest_dumps_odd_documents_as_json_does(doc):
    try:
        want = _plain(doc)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc), match=str(exc)[:20]):
            dumps(doc)
    else:
        assert dumps(doc) == want


def _old_outputs(directory):
    old = {f"m.{ext}": f"old {ext}\n".encode() for ext in ("h", "c", "json")}
    for name, data in old.items():
        (directory / name).write_bytes(data)
    return old


def test_manifest_failure_leaves_old_files(tmp_path, monkeypatch):
    old = _old_outputs(tmp_path)

    def broken(*args):
        raise RuntimeError("manifest bug")

    monkeypatch.setattr(writer, "manifest_text", broken)
    with pytest.raises(RuntimeError, match="manifest bug"):
        emit(mli2_model("sa8"), tmp_path, "m")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


def test_fsync_failure_replaces_nothing(tmp_path, monkeypatch):
    old = _old_outputs(tmp_path)
    real_fsync, calls = fsio.os.fsync, []

    def failing(fd):
        calls.append(fd)
        if len(calls) == 2:  # the second of the three files
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(fsio.os, "fsync", failing)
    with pytest.raises(OutputError) as exc:
        emit(mli2_model("sa8"), tmp_path, "m")
    assert str(exc.value) == f"{tmp_path / 'm.c'}: cannot write: Input/output error"
    assert exc.value.exit_code == 5
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_replaced_files_are_released(tmp_path):
    files = {tmp_path / f"f{i}": b"x" * 100_000 for i in range(3)}
    fsio.write_files_atomically(files)
    before = len(os.listdir("/proc/self/fd"))
    fsio.write_files_atomically({p: b"new" for p in files})
    deadline = time.monotonic() + 5
    while len(os.listdir("/proc/self/fd")) > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(os.listdir("/proc/self/fd")) <= before
    assert all(p.read_bytes() == b"new" for p in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0", "f1", "f2"]


def _unescape(s: str) -> str:
    """Every \\xNN back to its byte; the rest is ASCII as written."""
    out, i = bytearray(), 0
    while i < len(s):
        if s.startswith("\\x", i):
            out.append(int(s[i + 2 : i + 4], 16))
            i += 4
        else:
            out.append(ord(s[i]))
            i += 1
    return out.decode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
    | st.text(alphabet="*/?\\\na", max_size=30)
    | st.text(max_size=30),
    st.integers(1, 80),
)
def test_comment_text_is_safe_and_lossless(text, limit):
    s = comment_text(text, limit)
    assert all(" " <= c <= "~" for c in s)
    for bad in ("*/", "/*", "??"):
        assert bad not in s and bad not in f"/* {s} */"[3:-3]
    full = comment_text(text, 10_000)
    assert _unescape(full) == text  # nothing lost: every escape is ours
    assert full.count("\\") == full.count("\\x")
    if all(c.isalnum() or c in "/ _-.;:" for c in text) and text.isascii():
        assert full == text  # names read as written
    if len(full) > limit:
        assert s == full[:limit] + "..."
