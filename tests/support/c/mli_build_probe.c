/* Proves a native MLI 2.x build is the configuration it claims: two kernel calls whose outputs
 * depend on ROUND_MODE and FULL_ACCU (values worked out by hand from docs/mli-arithmetic.md,
 * see tests/test_mli_build.py). Prints "<status> <outputs...>" per call. */
#include <stdio.h>
#include "mli_api.h"

static mli_tensor fx16(int16_t *mem, uint32_t n, int8_t frac_bits) {
    mli_tensor t = {0};
    t.data.capacity = n * sizeof *mem;
    t.data.mem.pi16 = mem;
    t.shape[0] = n;
    t.mem_stride[0] = 1;
    t.rank = 1;
    t.el_type = MLI_EL_FX_16;
    t.el_params.fx.frac_bits = frac_bits;
    return t;
}

/* Per-tensor SA tensor: one scale and zero point held inline (capacity 0), frac bits 0. */
static mli_tensor sa(mli_element_type type, void *mem, uint32_t bytes, const uint32_t *shape, uint32_t rank,
                     int16_t scale) {
    mli_tensor t = {0};
    uint32_t i;
    int32_t stride = 1;
    t.data.capacity = bytes;
    t.data.mem.pi8 = (int8_t *)mem;
    t.rank = rank;
    for (i = rank; i-- > 0;) {
        t.shape[i] = shape[i];
        t.mem_stride[i] = stride;
        stride *= (int32_t)shape[i];
    }
    t.el_type = type;
    t.el_params.sa.type = MLI_EL_PARAM_SC16_ZP16;
    t.el_params.sa.dim = -1;
    t.el_params.sa.zero_point.mem.i16 = 0;
    t.el_params.sa.scale.mem.i16 = scale;
    t.el_params.sa.scale_frac_bits.mem.i8 = 0;
    return t;
}

static void print16(mli_status status, const int16_t *v, unsigned n) {
    unsigned i;
    printf("%d", (int)status);
    for (i = 0; i < n; i++) printf(" %d", v[i]);
    printf("\n");
}

int main(void) {
    /* ROUND_MODE: (a * 1) >> 1 for a = 1, 3, 5, -1 (0.5, 1.5, 2.5, -0.5 halves). */
    int16_t a[4] = {1, 3, 5, -1}, one[4] = {1, 1, 1, 1}, prod[4] = {0};
    mli_tensor in1 = fx16(a, 4, 1), in2 = fx16(one, 4, 0), out = fx16(prod, 4, 0);
    mli_status status = mli_krn_eltwise_mul_fx16(&in1, &in2, &out);
    print16(status, prod, 4);

    /* FULL_ACCU: fully connected, input at its zero point, bias near 72.5 * 1024, output scale 1024. */
    {
        static const uint32_t in_shape[1] = {1}, w_shape[2] = {1, 3}, b_shape[1] = {3};
        int8_t x[1] = {0}, w[3] = {1, 1, 1}, y[3] = {0};
        int32_t b[3] = {74239, 74241, 74240};
        int16_t y16[3];
        unsigned i;
        mli_tensor in = sa(MLI_EL_SA_8, x, sizeof x, in_shape, 1, 1);
        mli_tensor weights = sa(MLI_EL_SA_8, w, sizeof w, w_shape, 2, 1);
        mli_tensor bias = sa(MLI_EL_SA_32, b, sizeof b, b_shape, 1, 1);
        mli_tensor fc_out = sa(MLI_EL_SA_8, y, sizeof y, b_shape, 1, 1024);
        mli_fully_connected_cfg cfg;
        cfg.relu.type = MLI_RELU_NONE;
        status = mli_krn_fully_connected_sa8_sa8_sa32(&in, &weights, &bias, &cfg, &fc_out);
        for (i = 0; i < 3; i++) y16[i] = y[i];
        print16(status, y16, 3);
    }
    return 0;
}
