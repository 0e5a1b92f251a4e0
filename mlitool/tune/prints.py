"""Layer fingerprints: how far two lowered models compute the same values.

A layer's digest covers its call and every tensor it touches (parameters, encodings, data by
its bytes). Two models compute the same values up to their first differing digest. Digests are
computed only as far as a comparison reaches (a candidate differs from the current mix early
or late: the layers after its first change need none), and each tensor's once per model.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from typing import Any

import numpy as np

_SCALARS = (int, str, bool, type(None))  # exactly these types: none of the cases below


def _canon(v: Any) -> Any:
    """A comparable, hashable form of lowering's objects (arrays by their bytes)."""
    if type(v) in _SCALARS:  # most values: a fast path to the last line
        return repr(v)
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, hashlib.sha1(np.ascontiguousarray(v)).hexdigest())
    if isinstance(v, dict):
        return tuple((repr(k), _canon(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__,) + tuple(_canon(getattr(v, f)) for f in _fields(type(v)))
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return repr(v)


@functools.cache
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "notes")


class Prints:
    """The layer digests of one lowered model, computed as far as asked."""

    def __init__(self, mli):
        self.mli = mli
        self._layers: list[str] = []
        self._tensors: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.mli.layers)

    def tensor(self, name: str) -> Any:
        if name not in self._tensors:
            t = self.mli.tensor(name)
            own = _canon(t)
            shared = t.buffer is not None and t.buffer != name
            self._tensors[name] = (own, _canon(self.mli.tensor(t.buffer))) if shared else own
        return self._tensors[name]

    def layer(self, k: int) -> str:
        while len(self._layers) <= k:
            la = self.mli.layers[len(self._layers)]
            names = [*la.inputs, *la.outputs, *(n for n in (la.weights, la.bias) if n)]
            names += list(la.params.values()) + (list(la.calls.views) if la.calls else [])
            whole = (_canon(la), tuple(self.tensor(n) for n in names))
            self._layers.append(hashlib.sha1(repr(whole).encode()).hexdigest())
        return self._layers[k]

    def common(self, other: Prints) -> int:
        """How many leading layers compute what `other`'s do."""
        n = min(len(self), len(other))
        return next((k for k in range(n) if self.layer(k) != other.layer(k)), n)
