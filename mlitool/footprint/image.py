"""The image a converted model links into on ARC HS, part by part: what the footprint adds to the
model's constants so that ROM and RAM are the linked image's (issue 36).

- MLI kernel code: the union of the library sections each MLI function the emitted C calls keeps
  in a --gc-sections link, from the table `mlitool/data/mli_code_arc_hs.json` that
  tools/measure_mli_code.py measures (Debian gcc-12-arc-linux-gnu, -mcpu=hs38 -O2
  -ffunction-sections -fdata-sections, MLI 2.0.2 DBG_MODE_RELEASE; the table names them). MLI 1.x
  has no table: its kernel code counts 0 and `mli_code_table` is None.
- The model's own code (NAME_init, NAME_run, NAME_bind_views, the accessors): a linear estimate
  from what the runtime emitter writes, `CODE_BYTES`, fitted by tools/fit_model_code.py to the
  same cross compiler's output on the shared and corpus int8 models; plus the fallback kernels'
  C, measured per kernel into the same table.
- Writable structs: one `mli_tensor` per activation tensor (NAME_init and views set their data
  pointers), in .data: the struct image is flash, the copy RAM.
- Look-up tables MLI 2.x kernels take: const data (int16 values + `mli_lut`) in ROM; with
  --fast-memory NAME_init creates them in the fast buffer, their `mli_lut` structs in .bss.
- .bss: recurrent scratch, the ready flag; with --fast-memory the buffer pointers, the tables'
  structs and the staging tensors.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from mlitool.mli.kernels import LUT_LENGTHS, luts_of
from mlitool.mli.types import MliModel

TABLE = "mli_code_arc_hs.json"
_MLI_CALL = re.compile(r"\b(mli_(?:krn|hlp|mov)_\w+)\s*\(")
LUT_STRUCT_BYTES = 32  # sizeof(mli_lut) on ARC: data container 8 + 6 x 4-byte fields
READY_FLAG_BYTES = 4  # static int NAME_ready
POINTER_BYTES = 4

# Bytes of ARC HS code per thing the runtime emitter writes: least squares over the 27 int8
# models of ../shared/models/mlperf_tiny and tests/corpus (tools/fit_model_code.py prints them and
# each model's error: within 12 %, 1.2 % on vww and 0.6 % on resnet8; the code is ~1 % of ROM).
# "lut" (a create_lut call in the fast-memory runtime's NAME_init) is from the fit before the
# default runtime's tables became const data, when NAME_init created them too.
CODE_BYTES = {
    "base": 87.7,  # the functions' prologues, the ready check, the accessors
    "arena_binding": 4.0,  # NAME_init: one tensor's data pointer = arena + offset
    "lut": 52.4,  # NAME_init: fill one look-up table (--fast-memory)
    "view_binding": 14.0,  # NAME_bind_views: one view's data pointer = its buffer's + offset
    "call": 11.9,  # NAME_run: a kernel call and its status check
    "argument": 6.8,  # NAME_run: one pointer argument of a call
    "loop": 62.7,  # a loop of slice calls
    "loop_binding": 1.7,  # a slice view moved in the loop
}
# The fast-memory runtime's code on top (and its tile tables, .rodata): least squares over vww,
# resnet8, kws, ad01 and four corpus models (mobilenet_v2, unet, transformer, kws_conv1d)
# at 16K-128K (tools/fit_model_code.py --fast-memory; within 660 B of each, ~1 % of ROM or less).
FAST_CODE_BYTES = {
    "fast_runtime": 258.4,  # the staging and operand-check helpers
    "staged_copy": 36.8,  # one constant or activation copied into the fast buffer
    "tiled_layer": 484.6,  # a layer run in row tiles: the tile loop and its table
    "channel_sliced_layer": 324.4,  # a layer run in slices of output channels
}


@lru_cache(maxsize=1)
def code_table() -> dict[str, Any]:
    """The measured table (package data)."""
    return json.loads(resources.files("mlitool").joinpath("data", TABLE).read_text())


def mli_functions(mli: MliModel, fast_plan=None, specialize: bool = True) -> list[str]:
    """The MLI library functions the emitted C calls: each layer's kernel (`specialize`: the
    kernel-size specialization convert picks, `mlitool.mli.specialize`), the LUT builders of
    the tables NAME_init fills, the moves of the fast-memory runtime (`fast_plan`: its plan,
    `mlitool.mli.placement.plan_model`), the helpers fallback C uses."""
    from mlitool.mli import fallback
    from mlitool.mli.specialize import specialized_kernel

    def kernel(la) -> str:
        return specialized_kernel(mli, la) if specialize else la.kernel

    names = {kernel(la) for la in mli.layers if la.kernel and la.kind != "fallback"}
    if mli.target.lut_kernels and fast_plan is not None:  # else the tables are const data
        names |= {f"mli_krn_{k}_create_lut" for k in _lut_kinds(mli)}
    if fast_plan is not None and _stage_slots(fast_plan):  # the staging copy (mli_mov)
        names |= {"mli_mov_tensor_sync", "mli_mov_cfg_for_copy"}
    if fast_plan is not None and any(s.chans for s in fast_plan.layers):  # channel slices
        names.add("mli_hlp_tensor_element_size")
    for k in fallback.used(mli):
        names |= set(_MLI_CALL.findall(k.c_source))
    return sorted(names)


def _lut_kinds(mli: MliModel) -> set[str]:
    return {k for la in mli.layers for k in luts_of(la.kind)}


def mli_code_bytes(functions: list[str]) -> int | None:
    """Bytes of MLI library code linked for `functions` (the union of their sections), None
    when one of them is not in the table (an MLI 1.x name)."""
    table = code_table()
    known = table["functions"]
    if any(f not in known for f in functions):
        return None
    sections = {s for f in functions for s in known[f]["sections"]}
    return sum(table["sections"][s] for s in sections)


def code_counts(mli: MliModel, fast_plan=None) -> dict[str, int]:
    """How many of each thing in `CODE_BYTES` (and with `fast_plan`, the --fast-memory plan,
    `FAST_CODE_BYTES`) the runtime emitter writes for `mli`."""
    from mlitool.mli.memory.arena import model_arena

    counts = dict.fromkeys(CODE_BYTES, 0)
    counts["base"] = 1
    if fast_plan is None:
        counts["arena_binding"] = len(model_arena(mli).placements)
    else:
        counts["arena_binding"] = sum(1 for t in mli.tensors.values() if _own_activation(t))
        layers = fast_plan.layers
        counts["fast_runtime"] = 1
        counts["staged_copy"] = sum(len(st.constants) + len(st.activations) for st in layers)
        counts["tiled_layer"] = sum(1 for st in layers if st.tiles)
        counts["channel_sliced_layer"] = sum(1 for st in layers if st.chans)
    # NAME_init creates the tables only in fast memory; else they are const data
    fast = fast_plan is not None
    counts["lut"] = len(_lut_kinds(mli)) if mli.target.lut_kernels and fast else 0
    counts["view_binding"] = sum(
        1 for t in mli.tensors.values() if not t.role.is_constant and t.buffer is not None
    )
    for la in mli.layers:
        if not la.kernel:
            continue
        counts["call"] += 1
        counts["argument"] += _arguments(mli, la)
        if la.calls is not None:
            out = mli.tensors[la.outputs[0]]
            loops = [d for d in la.calls.loops if out.shape[d] > 1]
            counts["loop"] += len(loops)
            for name in la.inputs + la.outputs:
                t = mli.tensors[name]
                steps = la.calls.steps(t.shape, t.mem_stride, out.shape)
                counts["loop_binding"] += any(steps[d] for d in loops)
    return counts


def _own_activation(t) -> bool:
    return not t.role.is_constant and t.buffer is None


def _arguments(mli: MliModel, la) -> int:
    """Pointer arguments of the layer's call, as the runtime emitter writes them."""
    if la.kind == "lstm_cell":
        return 10
    luts = len(luts_of(la.kind)) if mli.target.lut_kernels else 0
    return (
        len(la.inputs)
        + sum(1 for n in (la.weights, la.bias) if n)
        + len(la.params)
        + luts
        + (1 if la.cfg_type else 0)
        + len(la.outputs)
    )


def model_code_bytes(mli: MliModel, fast_plan=None) -> int:
    """The estimated code of the model's runtime functions and of its fallback kernels."""
    from mlitool.mli import fallback

    counts = code_counts(mli, fast_plan)
    per = {**CODE_BYTES, **FAST_CODE_BYTES}
    runtime = round(sum(per[k] * n for k, n in counts.items()))
    measured = code_table().get("fallback", {})
    used = fallback.used(mli)
    fb = sum(measured.get(k.kernel, 0) for k in used)
    shared = measured.get("fixedpoint_helpers", 0)
    fb -= shared * max(0, sum(1 for k in used if k.fixedpoint) - 1)  # the helpers once
    return runtime + fb


def lut_table_bytes(mli: MliModel, fast_memory: int | None = None) -> int:
    """The const look-up tables of the default runtime (int16 data + `mli_lut`): .rodata."""
    if fast_memory is not None or not mli.target.lut_kernels:
        return 0
    return sum(2 * LUT_LENGTHS[k] + LUT_STRUCT_BYTES for k in _lut_kinds(mli))


def writable_struct_bytes(mli: MliModel) -> int:
    """One `mli_tensor` per activation tensor (views too): .data."""
    from mlitool.footprint.cstructs import tensor_struct_bytes

    return tensor_struct_bytes(mli.target) * sum(
        1 for t in mli.tensors.values() if not t.role.is_constant
    )


def bss_bytes(mli: MliModel, fast_plan=None) -> int:
    """Zero-initialised statics of the emitted runtime: .bss (`fast_plan`: the --fast-memory
    plan, `mlitool.mli.placement.plan_model`)."""
    scratch = sum(la.cfg.get("scratch_bytes", 0) for la in mli.layers)
    total = READY_FLAG_BYTES + scratch
    if fast_plan is not None:  # the tables' structs (their data is in the fast buffer)
        luts = _lut_kinds(mli) if mli.target.lut_kernels else set()
        total += LUT_STRUCT_BYTES * len(luts)
        from mlitool.footprint.cstructs import tensor_struct_bytes

        # the fast and slow buffer pointers, and the staging tensors of the emitted runtime
        total += 2 * POINTER_BYTES + _stage_slots(fast_plan) * tensor_struct_bytes(mli.target)
    return total


def _stage_slots(fast_plan) -> int:
    """The staging tensors the fast-memory runtime defines (`FastRuntime.stage_slots`)."""
    return max((len(s.constants) + len(s.chan_slots) for s in fast_plan.layers), default=0)
