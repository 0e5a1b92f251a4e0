"""Sub-tensor views read through real C `mli_tensor` structs.

The test writes a C99 program against a minimal hand-written MLI 2.x declaration header (the
`mli_tensor` layout of the MLI 2.x documentation; no library code), lays out each root buffer
once, declares one `mli_tensor` per view with the data pointer, capacity, shape, mem_stride and
per-axis parameter pointers our API computes, and prints what a generic strided walk reads
through each struct. The values must equal numpy slicing of the dense parent values.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mlitool.mli.subtensor import create_subtensor, point_to_subtensor
from mlitool.mli.types import ElType, MliTensor, Role

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

MLI_HEADER = r"""
#include <stdint.h>
#define MLI_MAX_RANK (4)
typedef enum {
    MLI_EL_FX_4 = 0x004, MLI_EL_FX_8 = 0x008, MLI_EL_FX_16 = 0x010,
    MLI_EL_SA_8 = 0x108, MLI_EL_SA_32 = 0x120, MLI_EL_FP_16 = 0x210, MLI_EL_FP_32 = 0x220
} mli_element_type;
typedef enum { MLI_EL_PARAM_SC16_ZP16 = 0 } mli_el_param_type;
typedef struct _mli_data_container {
    uint32_t capacity;
    union {
        int32_t *pi32; int16_t *pi16; int8_t *pi8; float *pf32;
        int32_t i32; int16_t i16; int8_t i8; float f32;
    } mem;
} mli_data_container;
typedef union _mli_element_params {
    struct { uint32_t frac_bits; } fx;
    struct {
        mli_el_param_type type;
        mli_data_container zero_point;
        mli_data_container scale;
        mli_data_container scale_frac_bits;
        int32_t dim;
    } sa;
} mli_element_params;
typedef struct mli_tensor {
    mli_data_container data;
    uint32_t shape[MLI_MAX_RANK];
    int32_t mem_stride[MLI_MAX_RANK];
    uint32_t rank;
    mli_element_type el_type;
    mli_element_params el_params;
} mli_tensor;
"""

# Reads every element of a tensor in logical (row-major) order through shape and mem_stride,
# after checking that the last addressed byte lies within the capacity.
WALKER = r"""
#include <stdio.h>
static int dump(const char *name, const mli_tensor *t, unsigned elsize) {
    uint32_t shape[MLI_MAX_RANK] = {1, 1, 1, 1};
    int32_t stride[MLI_MAX_RANK] = {0, 0, 0, 0};
    uint32_t i, a, b, c, d;
    long span = 1;
    unsigned pad = MLI_MAX_RANK - t->rank;
    for (i = 0; i < t->rank; i++) {
        shape[pad + i] = t->shape[i];
        stride[pad + i] = t->mem_stride[i];
        span += (long)(t->shape[i] - 1) * t->mem_stride[i];
    }
    if (span * (long)elsize > (long)t->data.capacity) {
        printf("%s capacity %lu < %ld\n", name, (unsigned long)t->data.capacity, span * (long)elsize);
        return 1;
    }
    printf("%s", name);
    for (a = 0; a < shape[0]; a++)
    for (b = 0; b < shape[1]; b++)
    for (c = 0; c < shape[2]; c++)
    for (d = 0; d < shape[3]; d++) {
        long at = (long)a * stride[0] + (long)b * stride[1] + (long)c * stride[2] + (long)d * stride[3];
        long v = elsize == 1 ? t->data.mem.pi8[at] : elsize == 2 ? t->data.mem.pi16[at] : t->data.mem.pi32[at];
        printf(" %ld", v);
    }
    printf("\n");
    return 0;
}
static void dump_params(const char *name, const mli_tensor *t) {
    uint32_t i;
    printf("%s.dim %ld\n", name, (long)t->el_params.sa.dim);
    printf("%s.params", name);
    for (i = 0; i < t->shape[t->el_params.sa.dim]; i++)
        printf(" %d %d %d", t->el_params.sa.zero_point.mem.pi16[i], t->el_params.sa.scale.mem.pi16[i],
               t->el_params.sa.scale_frac_bits.mem.pi8[i]);
    printf("\n");
}
"""

PTR = {1: "pi8", 2: "pi16", 4: "pi32"}


def c_array(name: str, arr: np.ndarray, c_type: str) -> str:
    return (
        f"static {c_type} {name}[{arr.size}] = {{{', '.join(str(int(v)) for v in arr.ravel())}}};\n"
    )


def c_tensor(cname: str, v: MliTensor, root_c: str) -> str:
    """A static mli_tensor struct for a view, from the fields our API computed."""
    ptr = PTR[v.el_type.dtype.itemsize]
    dims = ", ".join(str(d) for d in v.shape)
    strides = ", ".join(str(s) for s in v.mem_stride)
    text = (
        f"static mli_tensor {cname} = {{\n"
        f"    {{{v.capacity}u, {{ .{ptr} = {root_c} + {v.offset} }}}},\n"
        f"    {{{dims}}}, {{{strides}}}, {v.rank}u, {v.el_type.mli2_name},\n"
    )
    if v.per_axis:
        n = len(v.scale)
        text += (
            f"    {{ .sa = {{ MLI_EL_PARAM_SC16_ZP16,\n"
            f"        {{{2 * n}u, {{ .pi16 = {root_c}_zp + {v.param_offset} }}}},\n"
            f"        {{{2 * n}u, {{ .pi16 = {root_c}_scale + {v.param_offset} }}}},\n"
            f"        {{{n}u, {{ .pi8 = {root_c}_sfb + {v.param_offset} }}}},\n"
            f"        {v.dim} }} }}\n"
        )
    else:
        text += f"    {{ .fx = {{ {v.frac_bits or 0}u }} }}\n"
    return text + "};\n"


def run_c(
    tmp_path, roots: dict[str, MliTensor], views: dict[str, MliTensor]
) -> dict[str, list[int]]:
    src = [MLI_HEADER, WALKER]
    for cname, root in roots.items():
        src.append(c_array(cname, root.data, root.el_type.c_type))
        if root.per_axis:
            src.append(c_array(f"{cname}_zp", root.zero_point, "int16_t"))
            src.append(c_array(f"{cname}_scale", root.scale, "int16_t"))
            src.append(c_array(f"{cname}_sfb", root.scale_frac_bits, "int8_t"))
    for cname, v in views.items():
        src.append(c_tensor(cname, v, v.buffer))
    body = []
    for cname, v in views.items():
        body.append(f'    fails += dump("{cname}", &{cname}, {v.el_type.dtype.itemsize}u);')
        if v.per_axis:
            body.append(f'    dump_params("{cname}", &{cname});')
    src.append(
        "int main(void) {\n    int fails = 0;\n" + "\n".join(body) + "\n    return fails;\n}\n"
    )
    c_file, exe = tmp_path / "views.c", tmp_path / "views"
    c_file.write_text("".join(src))
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-o",
            str(exe),
            str(c_file),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stdout
    lines = {}
    for line in run.stdout.splitlines():
        key, *vals = line.split()
        lines[key] = [int(v) for v in vals]
    return lines


def test_views_read_through_c_structs(tmp_path):
    # Root buffers named as the C arrays, so `view.buffer` is the C symbol.
    x = MliTensor(
        "x",
        Role.WEIGHTS,
        (8, 4, 16),
        ElType.FX16,
        frac_bits=5,
        data=(np.arange(512) * 37 % 2001 - 1000).astype(np.int16).reshape(8, 4, 16),
    )
    r = MliTensor(
        "r",
        Role.WEIGHTS,
        (6, 5, 7),
        ElType.FX8,
        frac_bits=2,
        data=(np.arange(210) % 256 - 128).astype(np.int8).reshape(6, 5, 7),
    )
    w = MliTensor(
        "w",
        Role.WEIGHTS,
        (3, 3, 4, 8),
        ElType.SA8,
        dim=3,
        data=(np.arange(288) * 5 % 255 - 127).astype(np.int8).reshape(3, 3, 4, 8),
        zero_point=np.arange(8, dtype=np.int16) - 4,
        scale=np.arange(8, dtype=np.int16) * 9 + 50,
        scale_frac_bits=np.arange(8, dtype=np.int8) + 14,
    )
    b = MliTensor(
        "b",
        Role.BIAS,
        (2, 10),
        ElType.SA32,
        dim=1,
        data=(np.arange(20, dtype=np.int32) - 10) * 100003,
        zero_point=np.zeros(10, np.int16),
        scale=np.arange(10, dtype=np.int16) + 1,
        scale_frac_bits=np.full(10, 20, np.int8),
    )
    b.data = b.data.reshape(2, 10)
    holes = create_subtensor(r, [1, 1, 2], [4, 3, 4], 3)
    ch = point_to_subtensor(x, [2], 1, 2)
    b_view = create_subtensor(b, [0, 3], [2, 6], 2)
    views = {
        "v_channels": (ch, x.data[2:4]),
        "v_row": (point_to_subtensor(x, [3, 2], 2, 1), x.data[3][2:3]),
        "v_row_of_view": (point_to_subtensor(ch, [1, 2], 2, 1), x.data[3][2:3]),
        "v_col": (create_subtensor(x, [5, 0, 9], [1, 4, 1], 1), x.data[5, :, 9]),
        "v_box": (create_subtensor(ch, [0, 1, 3], [2, 2, 5], 3), x.data[2:4, 1:3, 3:8]),
        "v_holes": (holes, r.data[1:5, 1:4, 2:6]),
        "v_holes_sub": (create_subtensor(holes, [2, 0, 1], [1, 3, 2], 2), r.data[3, 1:4, 3:5]),
        "v_w": (create_subtensor(w, [1, 0, 0, 2], [1, 3, 4, 3], 3), w.data[1, :, :, 2:5]),
        "v_b": (create_subtensor(b_view, [1, 2], [1, 3], 1), b.data[1, 5:8]),
    }
    got = run_c(tmp_path, {"x": x, "r": r, "w": w, "b": b}, {k: v for k, (v, _) in views.items()})
    for cname, (_, want) in views.items():
        assert got[cname] == want.ravel().tolist(), cname
    # Per-axis parameters seen through the C pointers: the sliced output channels 2..4 / 5..7.
    assert got["v_w.dim"] == [2]
    want_w = np.stack([w.zero_point[2:5], w.scale[2:5], w.scale_frac_bits[2:5]], axis=1)
    assert got["v_w.params"] == want_w.ravel().tolist()
    assert got["v_b.dim"] == [0]
    want_b = np.stack([b.zero_point[5:8], b.scale[5:8], b.scale_frac_bits[5:8]], axis=1)
    assert got["v_b.params"] == want_b.ravel().tolist()
