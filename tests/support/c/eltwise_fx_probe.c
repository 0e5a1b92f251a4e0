/* Runs the real MLI 2.x fixed-point element-wise kernels on given operands.
 * stdin, per case: "<op> <bits> <frac1> <frac2> <frac_out> <n>", then n values of in1, n of in2
 * (op: add sub mul max min; bits: 8 or 16). stdout, per case: "<status> <n outputs>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mli_api.h"

typedef mli_status (*kernel_fn)(const mli_tensor *, const mli_tensor *, mli_tensor *);

static const struct { const char *op; kernel_fn fx8, fx16; } KERNELS[] = {
    {"add", mli_krn_eltwise_add_fx8, mli_krn_eltwise_add_fx16},
    {"sub", mli_krn_eltwise_sub_fx8, mli_krn_eltwise_sub_fx16},
    {"mul", mli_krn_eltwise_mul_fx8, mli_krn_eltwise_mul_fx16},
    {"max", mli_krn_eltwise_max_fx8, mli_krn_eltwise_max_fx16},
    {"min", mli_krn_eltwise_min_fx8, mli_krn_eltwise_min_fx16},
};

static mli_tensor fx(void *mem, unsigned n, int bits, int frac_bits) {
    mli_tensor t;
    memset(&t, 0, sizeof t);
    t.data.capacity = n * (unsigned)(bits / 8);
    t.data.mem.pi8 = (int8_t *)mem;
    t.shape[0] = n;
    t.mem_stride[0] = 1;
    t.rank = 1;
    t.el_type = bits == 8 ? MLI_EL_FX_8 : MLI_EL_FX_16;
    t.el_params.fx.frac_bits = (int8_t)frac_bits;
    return t;
}

static int read_values(void *mem, unsigned n, int bits) {
    unsigned i;
    long v;
    for (i = 0; i < n; i++) {
        if (scanf("%ld", &v) != 1) return 0;
        if (bits == 8) ((int8_t *)mem)[i] = (int8_t)v;
        else ((int16_t *)mem)[i] = (int16_t)v;
    }
    return 1;
}

int main(void) {
    char op[8];
    int bits, f1, f2, fo;
    unsigned n, i, k;
    while (scanf("%7s %d %d %d %d %u", op, &bits, &f1, &f2, &fo, &n) == 6) {
        size_t size = (size_t)n * 2;
        void *a = malloc(size), *b = malloc(size), *y = calloc(n, 2);
        kernel_fn fn = NULL;
        mli_tensor in1, in2, out;
        mli_status status;
        if (!a || !b || !y || !read_values(a, n, bits) || !read_values(b, n, bits)) return 2;
        for (k = 0; k < sizeof KERNELS / sizeof KERNELS[0]; k++)
            if (strcmp(op, KERNELS[k].op) == 0) fn = bits == 8 ? KERNELS[k].fx8 : KERNELS[k].fx16;
        if (!fn) return 3;
        in1 = fx(a, n, bits, f1);
        in2 = fx(b, n, bits, f2);
        out = fx(y, n, bits, fo);
        status = fn(&in1, &in2, &out);
        printf("%d", (int)status);
        for (i = 0; i < n; i++)
            printf(" %d", bits == 8 ? (int)((int8_t *)y)[i] : (int)((int16_t *)y)[i]);
        printf("\n");
        free(a);
        free(b);
        free(y);
    }
    return 0;
}
