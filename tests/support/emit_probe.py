"""A C probe program for emitted models, and the lines it must print computed from the Python
MliModel (independently of the emitter). The probe is valid C99 and C++11: it sets every
activation buffer, calls the bind-views function, then prints each tensor's fields and an
Adler-32 checksum of its data bytes."""

from __future__ import annotations

import zlib

import numpy as np

from mlitool.mli.types import ElType, MliModel, MliTensor

_MLI1_CODES = {ElType.FX8: 0, ElType.FX16: 1, ElType.SA8: 2, ElType.SA32: 3}

_COMMON = r"""
#include <stdio.h>
#include <stdint.h>
#include "%(header)s"

static uint32_t adler32(const void *p, uint32_t n) {
    const unsigned char *b = (const unsigned char *)p;
    uint32_t a = 1u, s = 0u, i;
    for (i = 0u; i < n; ++i) { a = (a + b[i]) %% 65521u; s = (s + a) %% 65521u; }
    return (s << 16) | a;
}
static int32_t arena[%(arena_words)d];
"""

_DUMP2 = r"""
static void dump(const char *name, const mli_tensor *t, int data_kind) {
    uint32_t i, n;
    printf("%s rank=%u shape=%u,%u,%u,%u stride=%d,%d,%d,%d type=%d cap=%u", name, (unsigned)t->rank,
           (unsigned)t->shape[0], (unsigned)t->shape[1], (unsigned)t->shape[2], (unsigned)t->shape[3],
           (int)t->mem_stride[0], (int)t->mem_stride[1], (int)t->mem_stride[2], (int)t->mem_stride[3],
           (int)t->el_type, (unsigned)t->data.capacity);
    if (t->el_type == MLI_EL_SA_8 || t->el_type == MLI_EL_SA_32) {
        int32_t dim = t->el_params.sa.dim;
        n = dim < 0 ? 1u : t->shape[dim];
        printf(" ptype=%d dim=%d caps=%u,%u,%u zp=", (int)t->el_params.sa.type, (int)dim,
               (unsigned)t->el_params.sa.zero_point.capacity, (unsigned)t->el_params.sa.scale.capacity,
               (unsigned)t->el_params.sa.scale_frac_bits.capacity);
        for (i = 0u; i < n; ++i) printf("%d,", dim < 0 ? (int)t->el_params.sa.zero_point.mem.i16
                                                     : (int)t->el_params.sa.zero_point.mem.pi16[i]);
        printf(" scale=");
        for (i = 0u; i < n; ++i) printf("%d,", dim < 0 ? (int)t->el_params.sa.scale.mem.i16
                                                     : (int)t->el_params.sa.scale.mem.pi16[i]);
        printf(" sfb=");
        for (i = 0u; i < n; ++i) printf("%d,", dim < 0 ? (int)t->el_params.sa.scale_frac_bits.mem.i8
                                                     : (int)t->el_params.sa.scale_frac_bits.mem.pi8[i]);
    } else {
        printf(" frac=%d", (int)t->el_params.fx.frac_bits);
    }
    if (data_kind == 1) printf(" adler=%u", (unsigned)adler32(t->data.mem.pi8, t->data.capacity));
    if (data_kind == 2) printf(" inline=%d", t->el_type == MLI_EL_SA_32 ? (int)t->data.mem.i32 :
                               t->el_type == MLI_EL_FX_16 ? (int)t->data.mem.i16 : (int)t->data.mem.i8);
    printf("\n");
}
#define DATA_PTR(t) ((const char *)(t).data.mem.pi8)
#define SET_DATA(t, p) ((t).data.mem.pi8 = (int8_t *)(p))
"""

_DUMP1 = r"""
static void dump(const char *name, const mli_tensor *t, int data_kind) {
    printf("%s rank=%u shape=%u,%u,%u,%u stride=%s type=%d cap=%u", name, (unsigned)t->rank,
           (unsigned)t->shape[0], (unsigned)t->shape[1], (unsigned)t->shape[2], (unsigned)t->shape[3],
           STRIDES(t), (int)t->el_type, (unsigned)t->capacity);
#ifdef HAS_ASYM
    if (t->el_type == MLI_EL_ASYM_I8 || t->el_type == MLI_EL_ASYM_I32) {
        uint32_t i, n;
        int32_t dim = t->el_params.asym.dim;
        n = dim < 0 ? 1u : t->shape[dim];
        printf(" dim=%d zp=", (int)dim);
        for (i = 0u; i < n; ++i) printf("%d,", dim < 0 ? (int)t->el_params.asym.zero_point.i16
                                                     : (int)t->el_params.asym.zero_point.pi16[i]);
        printf(" scale=");
        for (i = 0u; i < n; ++i) printf("%ld,", dim < 0 ? (long)t->el_params.asym.scale.i32
                                                      : (long)t->el_params.asym.scale.pi32[i]);
        printf(" sfb=%d", (int)t->el_params.asym.scale_frac_bits);
    } else
#endif
    {
        printf(" frac=%d", (int)t->el_params.fx.frac_bits);
    }
    if (data_kind == 1) printf(" adler=%u", (unsigned)adler32(t->data, t->capacity));
    printf("\n");
}
#define DATA_PTR(t) ((const char *)(t).data)
#define SET_DATA(t, p) ((t).data = (void *)(p))
"""


def probe_source(manifest: dict, header: str) -> str:
    """The probe for one emitted model, driven by its manifest (names, roles, views)."""
    target = manifest["model"]["target"]
    tensors = manifest["tensors"]
    owners = [t for t in tensors if not t["constant"] and t["view_of"] is None]
    words = sum((t["bytes"] + 3) // 4 for t in owners) + 1
    src = _COMMON % {"header": header, "arena_words": words}
    if target == "2.0":
        src += _DUMP2
    else:
        if target == "1.1":
            src += "#define HAS_ASYM 1\n"
            src += (
                "#define STRIDES(t) stride_text(t)\nstatic char stride_buf[64];\n"
                "static const char *stride_text(const mli_tensor *t) {\n"
                '    sprintf(stride_buf, "%d,%d,%d,%d", (int)t->mem_stride[0], '
                "(int)t->mem_stride[1], (int)t->mem_stride[2], (int)t->mem_stride[3]);\n"
                "    return stride_buf;\n}\n"
            )
        else:
            src += '#define STRIDES(t) "none"\n'
        src += _DUMP1
    body = ["int main(void) {", "    long off = 0;"]
    for t in owners:
        body.append(
            f"    SET_DATA({t['c_name']}, (char *)arena + off); off += ({t['c_name']}_BYTES + 3) / 4 * 4;"
        )
    body.append(f"    {manifest['model']['bind_views']}();")
    for t in tensors:
        kind = 2 if t["rank"] == 0 and t["constant"] else 1 if t["constant"] else 0
        body.append(f'    dump("{t["c_name"]}", &{t["c_name"]}, {kind});')
        if t["view_of"] and not t["constant"]:
            body.append(
                f'    printf("{t["c_name"]} viewoff=%ld\\n", (long)(DATA_PTR({t["c_name"]}) - '
                f"DATA_PTR({t['view_of']})));"
            )
    body += ["    return 0;", "}", ""]
    return src + "\n".join(body)


def _vals(a) -> str:
    return "".join(f"{int(v)}," for v in np.asarray(a).reshape(-1))


def expected_lines(model: MliModel, c_names: dict[str, str]) -> list[str]:
    """What the probe must print, from the MliModel's own arrays."""
    lines = []
    for key, t in model.tensors.items():
        name = c_names[key]
        shape = list(t.shape) + [0] * (4 - t.rank)
        stride = [int(s) for s in t.mem_stride] + [0] * (4 - t.rank)
        cap = 0 if t.rank == 0 else t.nbytes
        if model.mli_version == "2.0":
            code = t.el_type.value
            line = (
                f"{name} rank={t.rank} shape={','.join(map(str, shape))} "
                f"stride={','.join(map(str, stride))} type={code} cap={cap}"
            )
        else:
            code = _MLI1_CODES[t.el_type]
            st = ",".join(map(str, stride)) if model.mli_version == "1.1" else "none"
            line = (
                f"{name} rank={t.rank} shape={','.join(map(str, shape))} stride={st} "
                f"type={code} cap={cap}"
            )
        if t.el_type.is_sa:
            dim = t.dim if t.per_axis else -1
            if model.mli_version == "2.0":
                n = len(t.scale)
                caps = f"{2 * n},{2 * n},{n}" if t.per_axis else "0,0,0"
                line += (
                    f" ptype=0 dim={dim} caps={caps} zp={_vals(t.zero_point)} "
                    f"scale={_vals(t.scale)} sfb={_vals(t.scale_frac_bits)}"
                )
            else:
                line += (
                    f" dim={dim} zp={_vals(t.zero_point)} scale={_vals(t.scale)} "
                    f"sfb={int(np.asarray(t.scale_frac_bits).reshape(-1)[0])}"
                )
        else:
            line += f" frac={int(t.frac_bits)}"
        if t.role.is_constant:
            if t.rank == 0:
                line += f" inline={int(np.asarray(t.data).reshape(-1)[0])}"
            else:
                line += f" adler={zlib.adler32(_bytes_of(model, t, cap))}"
        lines.append(line)
        if t.buffer is not None and not t.role.is_constant:
            lines.append(f"{name} viewoff={_offset(model, t) * t.el_type.dtype.itemsize}")
    return lines


def _offset(model: MliModel, t: MliTensor) -> int:
    off = 0
    while t.buffer is not None:
        off += t.offset
        t = model.tensors[t.buffer]
    return off


def _bytes_of(model: MliModel, t: MliTensor, cap: int) -> bytes:
    root = t
    while root.buffer is not None:
        root = model.tensors[root.buffer]
    start = _offset(model, t) * t.el_type.dtype.itemsize
    return (
        np.ascontiguousarray(root.data)
        .astype(root.data.dtype.newbyteorder("<"))
        .tobytes()[start : start + cap]
    )
