/* Test stand-in for the embARC MLI 1.0 API header: the types the emitted code uses, written
 * from the documented structures (shared/docs/mli-arithmetic.md section 1). */
#ifndef MLITOOL_TEST_MLI10_API_H
#define MLITOOL_TEST_MLI10_API_H

#include <stdint.h>

#define MLI_MAX_RANK (4)

typedef enum {
    MLI_EL_FX_8 = 0, MLI_EL_FX_16,
    MLI_EL_LARGE_ENUM = 0x02000000
} mli_element_type;

typedef union _mli_element_params {
    struct {
        uint8_t frac_bits;
    } fx;
} mli_element_params;

typedef struct _mli_tensor {
    void *data;
    uint32_t capacity;
    uint32_t shape[MLI_MAX_RANK];
    uint32_t rank;
    mli_element_type el_type;
    mli_element_params el_params;
} mli_tensor;

typedef enum {
    MLI_RELU_NONE = 0, MLI_RELU_GEN, MLI_RELU_1, MLI_RELU_6,
    MLI_RELU_LARGE_ENUM = 0x02000000
} mli_relu_type;

typedef struct { mli_relu_type type; } mli_relu_cfg;

typedef struct {
    mli_relu_cfg relu;
    uint8_t stride_width;
    uint8_t stride_height;
    uint8_t padding_left;
    uint8_t padding_right;
    uint8_t padding_top;
    uint8_t padding_bottom;
} mli_conv2d_cfg;

typedef struct {
    uint8_t kernel_width;
    uint8_t kernel_height;
    uint8_t stride_width;
    uint8_t stride_height;
    uint8_t padding_left;
    uint8_t padding_right;
    uint8_t padding_top;
    uint8_t padding_bottom;
} mli_pool_cfg;

typedef struct { uint8_t perm_dim[MLI_MAX_RANK]; } mli_permute_cfg;

typedef struct {
    uint8_t padding_left;
    uint8_t padding_right;
    uint8_t padding_top;
    uint8_t padding_bottom;
} mli_padding2d_cfg;

typedef struct {
    uint8_t tensors_num;
    uint8_t axis;
} mli_concat_cfg;

#endif
