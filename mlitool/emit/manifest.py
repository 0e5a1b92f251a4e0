"""NAME.json: what the emitted C contains, for build pipelines and tests.

Sorted keys, two-space indent, ASCII only, no timestamps or absolute paths; floats are Python's
shortest round-trip repr, so the file is identical across runs and machines.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any

import numpy as np

from mlitool import __version__
from mlitool.emit.analysis import TensorInfo
from mlitool.emit.cdata import int_texts
from mlitool.emit.symbols import Symbols
from mlitool.mli.types import MliModel, MliTensor

MANIFEST_VERSION = 1


def _ints(a) -> np.ndarray:
    """A 1-D integer array (written as a JSON list by `dumps`)."""
    flat = np.asarray(a).reshape(-1)
    return flat if flat.dtype.kind in "iu" else flat.astype(np.int64)


def data_sha256(t: MliTensor) -> str | None:
    """sha256 of the tensor's data bytes as emitted: dense, little-endian, in MLI layout."""
    if t.data is None:
        return None
    le = np.ascontiguousarray(t.data, dtype=t.data.dtype.newbyteorder("<"))
    return hashlib.sha256(memoryview(le).cast("B")).hexdigest()


def _params(t: MliTensor) -> dict[str, Any]:
    if t.el_type.is_fx:
        return {"frac_bits": int(t.frac_bits)}
    if t.el_type.is_sa:
        return {
            "dim": int(t.dim) if t.per_axis else -1,
            "zero_point": _ints(t.zero_point),
            "scale": _ints(t.scale),
            "scale_frac_bits": _ints(t.scale_frac_bits),
            "real_scale": np.asarray(t.real_scale(), dtype=np.float64).reshape(-1),
        }
    return {}


def _tensor(model: MliModel, i: TensorInfo, by_key: dict[str, TensorInfo]) -> dict[str, Any]:
    t = i.tensor
    return {
        "c_name": i.sym.name,
        "name": i.key,
        "source": t.source,
        "source_index": t.source_index,
        "role": t.role.value,
        "constant": i.is_const,
        "is_input": i.key in model.inputs,
        "is_output": i.key in model.outputs,
        "layout": t.layout,
        "shape": list(t.shape),
        "rank": t.rank,
        "mem_stride": [int(s) for s in t.mem_stride],
        "el_type": t.el_type.name,
        "params": _params(t),
        "elements": t.size,
        "bytes": i.capacity,
        "data_symbol": i.sym.data if i.has_own_data else None,
        "sha256": data_sha256(t) if (i.is_const and not i.is_view) else None,
        "view_of": by_key[i.root].sym.name if i.is_view else None,
        "view_offset": i.offset if i.is_view else None,
        "macros": {"bytes": i.sym.bytes_macro, "elements": i.sym.elems_macro},
        "notes": list(t.notes),
    }


def manifest_text(
    model: MliModel,
    infos: list[TensorInfo],
    syms: Symbols,
    name: str,
    header: str,
    totals: dict[str, int],
    cfg_items: list,
    runtime: dict | None = None,
    footprint: dict | None = None,
    calls: list[int] | None = None,
) -> str:
    """`calls`: kernel calls per inference of each layer (`mlitool.mli.calls`), with a runtime."""
    by_key = {i.key: i for i in infos}

    def c(n: str) -> str:
        return by_key[n].sym.name

    layers = []
    for pos, layer in enumerate(model.layers):
        layers.append(
            {
                "position": pos,
                "index": layer.index,
                "op_type": layer.op_type,
                "kind": layer.kind,
                "kernel": layer.kernel,
                "cfg_type": layer.cfg_type,
                "cfg_symbol": syms.cfgs[pos],
                "cfg": {str(k): _jsonable(v) for k, v in layer.cfg.items()},
                "inputs": [c(n) for n in layer.inputs],
                "outputs": [c(n) for n in layer.outputs],
                "weights": c(layer.weights) if layer.weights else None,
                "bias": c(layer.bias) if layer.bias else None,
                "params": {k: c(v) for k, v in layer.params.items()},
                "notes": list(layer.notes),
                **({"kernel_calls": calls[pos]} if calls is not None else {}),
                **(
                    {
                        "fallback": {
                            "function": syms.call(layer.kernel),
                            "constant_bytes": sum(
                                model.tensor(n).nbytes for n in layer.params.values()
                            ),
                            "elements": model.tensor(layer.outputs[0]).size,
                        }
                    }
                    if layer.kind == "fallback"
                    else {}
                ),
                **(
                    {
                        "slice_calls": {
                            "loop_dims": len(layer.calls.loops),
                            "looped": list(layer.calls.loops),
                            "calls": layer.calls.count(model.tensor(layer.outputs[0]).shape),
                            "views": [c(n) for n in layer.calls.views],
                        }
                    }
                    if layer.calls
                    else {}
                ),
            }
        )
    doc = {
        "manifest_version": MANIFEST_VERSION,
        "generator": f"mlitool {__version__}",
        "model": {
            "name": name,
            "source": os.path.basename(model.source),
            "target": model.mli_version,
            "format": model.format,
            "layout": model.layout,
            "header": header,
            "c_prefix": syms.prefix,
            "bind_views": syms.bind_views,
            "config": model.config,
            # MLI runs one sample: a dynamic batch is fixed to 1 and shape arithmetic folded
            "batch_fixed_to_1": list(model.batch_fixed),
            "folded_ops": list(model.folded_ops),
            "removed_ops": list(model.removed_ops),
        },
        "inputs": [c(n) for n in model.inputs],
        "outputs": [c(n) for n in model.outputs],
        "tensors": [_tensor(model, i, by_key) for i in infos],
        "layers": layers,
        "totals": {k.lower(): v for k, v in totals.items()},
        "total_macros": {k.lower(): v for k, v in syms.totals.items()},
        "warnings": list(model.warnings),
    }
    if runtime is not None:
        doc["runtime"] = runtime
    if footprint is not None:
        doc["footprint"] = footprint
    if calls is not None:
        doc["kernel_calls_per_inference"] = sum(calls)
    return dumps(doc) + "\n"


def dumps(doc: Any) -> str:
    """`json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False,
    default=_tolist)`, same text; 1-D numpy integer and float arrays stand for lists of numbers.

    With an indent, `json` encodes in pure Python, one call per number; the per-axis parameter
    arrays would make that most of a convert's time. This encoder walks the document once,
    leaving a slot for each numeric array, and then fills the slots in bulk: the integers of all
    arrays formatted at once with numpy, the floats as Python's shortest repr of each list.
    Anything it does not handle (other types, non-string keys, non-finite floats) goes to `json`
    unchanged, which formats or rejects it exactly as before.
    """
    enc = _Encoder()
    try:
        enc.value(doc, "\n")
    except _Fallback:
        return _plain_dumps(doc)
    return enc.text()


def _plain_dumps(doc: Any) -> str:
    return json.dumps(
        doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False, default=_tolist
    )


def _tolist(v: Any) -> Any:
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


class _Fallback(Exception):
    """Internal: the document holds something the fast path leaves to `json`."""


_CONSTANTS = {None: "null", True: "true", False: "false"}
# Array dtypes the fast path formats (uint64 may exceed the int64 it formats integers as).
_ARRAY_TYPES = {np.dtype(c) for c in "bhilqBHIefd"} - {np.dtype(np.uint64)}
_str = json.encoder.encode_basestring_ascii


class _Encoder:
    """Indented JSON text as a list of parts; numeric arrays become slots filled by `text`."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.int_slots: list[tuple[int, np.ndarray, str]] = []  # (part index, values, sep)
        self.float_slots: list[tuple[int, np.ndarray, str]] = []
        self.sorted_keys: dict[tuple, list[tuple[str, str]]] = {}  # dict keys -> (key, '"key": ')

    def value(self, v: Any, nl: str, prefix: str = "") -> None:
        """Append `prefix` and `v`; `nl` is a newline plus the indentation of the line `v` starts
        on. (Scalars join their prefix in one part: most values of a manifest are scalars.)"""
        t = type(v)
        if t is str:
            self.parts.append(prefix + _str(v))
            return
        if t is int:
            self.parts.append(prefix + int.__repr__(v))
            return
        if t is float:
            if not math.isfinite(v):
                raise _Fallback
            self.parts.append(prefix + float.__repr__(v))
            return
        if v is None or t is bool:
            self.parts.append(prefix + _CONSTANTS[v])
            return
        if prefix:
            self.parts.append(prefix)
        if t is dict:
            self._dict(v, nl)
        elif t is list or t is tuple:
            self._list(v, nl)
        elif t is np.ndarray and v.ndim == 1 and v.dtype in _ARRAY_TYPES:
            self._array(v, nl)
        else:
            raise _Fallback

    def _dict(self, d: dict, nl: str) -> None:
        if not d:
            self.parts.append("{}")
            return
        names = tuple(d)
        keys = self.sorted_keys.get(names)  # many dicts share their keys (one per tensor)
        if keys is None:
            try:
                keys = [(k, _str(k) + ": ") for k in sorted(d)]
            except TypeError:  # keys json would convert, or cannot sort
                raise _Fallback from None
            self.sorted_keys[names] = keys
        inner = nl + "  "
        opener = "{" + inner
        for k, text in keys:
            self.value(d[k], inner, opener + text)
            opener = "," + inner
        self.parts.append(nl + "}")

    def _list(self, items: list | tuple, nl: str) -> None:
        if not items:
            self.parts.append("[]")
            return
        inner = nl + "  "
        opener = "[" + inner
        for x in items:
            self.value(x, inner, opener)
            opener = "," + inner
        self.parts.append(nl + "]")

    def _array(self, a: np.ndarray, nl: str) -> None:
        if a.size == 0:
            self.parts.append("[]")
            return
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise _Fallback
        inner = nl + "  "
        self.parts.append("[" + inner)
        slots = self.float_slots if a.dtype.kind == "f" else self.int_slots
        slots.append((len(self.parts), a, "," + inner))
        self.parts.append("")  # the slot
        self.parts.append(nl + "]")

    def text(self) -> str:
        parts = self.parts
        for slot, a, sep in self.float_slots:
            parts[slot] = sep.join(map(float.__repr__, a.astype(np.float64).tolist()))
        texts = int_texts([a for _, a, _ in self.int_slots])
        for (slot, _, sep), text in zip(self.int_slots, texts):
            parts[slot] = text.replace(",", sep)
        return "".join(parts)


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "value") and hasattr(v, "name"):  # enums
        return v.name
    return v
