"""NAME.json: what the emitted C contains, for build pipelines and tests.

Sorted keys, two-space indent, ASCII only, no timestamps or absolute paths; floats are Python's
shortest round-trip repr, so the file is identical across runs and machines.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from typing import Any

import numpy as np

from mlitool import __version__
from mlitool.emit.analysis import TensorInfo
from mlitool.emit.symbols import Symbols
from mlitool.mli.types import MliModel, MliTensor

MANIFEST_VERSION = 1


def _ints(a) -> list[int]:
    flat = np.asarray(a).reshape(-1)
    if flat.dtype.kind in "iu":                  # tolist() gives Python ints already
        return flat.tolist()
    return [int(v) for v in flat.tolist()]


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
        return {"dim": int(t.dim) if t.per_axis else -1,
                "zero_point": _ints(t.zero_point),
                "scale": _ints(t.scale),
                "scale_frac_bits": _ints(t.scale_frac_bits),
                "real_scale": np.asarray(t.real_scale(), dtype=np.float64).tolist()}
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


def manifest_text(model: MliModel, infos: list[TensorInfo], syms: Symbols, name: str,
                  header: str, totals: dict[str, int], cfg_items: list) -> str:
    by_key = {i.key: i for i in infos}

    def c(n: str) -> str:
        return by_key[n].sym.name

    layers = []
    for pos, layer in enumerate(model.layers):
        layers.append({
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
        })
    doc = {
        "manifest_version": MANIFEST_VERSION,
        "generator": f"mlitool {__version__}",
        "model": {"name": name, "source": os.path.basename(model.source), "target": model.target,
                  "format": model.format, "layout": model.layout, "header": header,
                  "c_prefix": syms.prefix, "bind_views": syms.bind_views},
        "inputs": [c(n) for n in model.inputs],
        "outputs": [c(n) for n in model.outputs],
        "tensors": [_tensor(model, i, by_key) for i in infos],
        "layers": layers,
        "totals": {k.lower(): v for k, v in totals.items()},
        "total_macros": {k.lower(): v for k, v in syms.totals.items()},
        "warnings": list(model.warnings),
    }
    return dumps(doc) + "\n"


def dumps(doc: Any) -> str:
    """`json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False)`, same text.

    With an indent, `json` encodes in pure Python, one call per number; the per-axis parameter
    arrays make that most of a convert's time. Lists of plain numbers are therefore swapped for
    placeholders, the small rest is dumped by `json`, and the lists are joined in with their
    line indentation. Anything the fast path cannot vouch for goes to `json` unchanged.
    """
    lists: list[list] = []
    try:
        small = _placeholders(doc, lists)
    except _Fallback:
        return _plain_dumps(doc)
    text = _plain_dumps(small)

    def expand(m: re.Match) -> str:
        line_start = m.string.rfind("\n", 0, m.start()) + 1
        line = m.string[line_start:m.start()]
        indent = " " * (len(line) - len(line.lstrip(" ")))
        inner = indent + "  "
        return "[\n" + inner + (",\n" + inner).join(map(repr, lists[int(m.group(1))])) + \
            "\n" + indent + "]"

    return _PLACEHOLDER_RE.sub(expand, text)


def _plain_dumps(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False)


class _Fallback(Exception):
    """Internal: the document holds something the fast path leaves to `json`."""


_NUMBERS = {int, float}
_PLACEHOLDER = "\x00mlitool-list-{}\x00"
_PLACEHOLDER_RE = re.compile(r'"\\u0000mlitool-list-(\d+)\\u0000"')


def _placeholders(v: Any, lists: list[list]) -> Any:
    """A copy of `v` with every non-empty list of plain ints and finite floats replaced by a
    placeholder string (the list goes to `lists`). A NUL in any string could fake a placeholder:
    such documents take the plain path."""
    if isinstance(v, str):
        if "\x00" in v:
            raise _Fallback
        return v
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, str) and "\x00" in k:
                raise _Fallback
            out[k] = _placeholders(x, lists)
        return out
    if isinstance(v, (list, tuple)):
        types = set(map(type, v))
        if v and types <= _NUMBERS and (float not in types or all(map(math.isfinite, v))):
            lists.append(v)
            return _PLACEHOLDER.format(len(lists) - 1)
        return [_placeholders(x, lists) for x in v]
    return v


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "value") and hasattr(v, "name"):        # enums
        return v.name
    return v
