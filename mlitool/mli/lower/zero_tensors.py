"""All-zero tensors in FX formats: any frac bits represent them exactly, but their scale may ask
for more than C holds (a 16x8 GRU's zero state of scale 3.6e-43: 141 frac bits). A base of
`Builder` (its graph `g`, `ranges`, `value_range` and the lazily built producer / consumer maps)."""

from __future__ import annotations

import numpy as np

from mlitool.mli import quant as Q
from mlitool.mli.lower.facts import all_zero, layer_kind
from mlitool.mli.lower.params import real as real_values
from mlitool.mli.types import ElType, MliTensor


class ZeroTensors:
    def zero_frac_bits(self, m: MliTensor, el: ElType) -> bool:
        """Set FX frac bits on `m` when its TFLite tensor holds only zeros (returns whether it
        does): any frac bits represent it, but its scale may ask for 141 (a GRU's zero state of
        scale 3.6e-43), which C cannot hold. Read by an element-wise kernel, it takes the frac
        bits of the other operand (else of the output), so the kernel shifts nothing more than
        for that operand alone; otherwise those of a zero range."""
        idx = m.source_index
        if idx is None or not self._all_zero(idx):
            return False
        m.frac_bits, why = el.bits - 1, "those of a zero range"
        for op in self._consumers.get(idx, [])[:1]:  # set by _all_zero
            if not layer_kind(self.g, op).startswith("eltwise_"):
                continue
            others = [i for i in op.inputs[:2] if i != idx] + list(op.outputs[:1])
            for j in others:
                f = self._plain_frac_bits(j, el)
                if f is not None and not self._all_zero(j):
                    role = "output" if j in op.outputs else "other operand"
                    m.frac_bits, why = f, f"those of the {role} of {op.label}"
                    break
        m.notes.append(f"all values are zero: any frac bits are exact; {m.frac_bits}, {why}")
        return True

    def _all_zero(self, idx: int) -> bool:
        if self._producers is None:
            self._producers, self._consumers = self.g.producers(), self.g.consumers()
        return all_zero(self.g, idx, self.ranges, self._producers, self._zeros)

    def _plain_frac_bits(self, idx: int, el: ElType) -> int | None:
        """The frac bits TFLite tensor `idx` takes from its values or range (None: unknown)."""
        t = self.g.tensors[idx]
        if t.data is not None:
            return Q.fx_frac_bits(np.max(np.abs(real_values(t)), initial=0.0), el.bits)
        r = self.value_range(idx)
        return None if r is None else Q.fx_frac_bits(max(abs(r[0]), abs(r[1])), el.bits)
