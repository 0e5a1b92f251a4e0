/* Test stand-in for the embARC MLI 2.x API header: the types the emitted code uses, written
 * from the documented structures (shared/docs/mli-arithmetic.md section 1, real field order). */
#ifndef MLITOOL_TEST_MLI2_API_H
#define MLITOOL_TEST_MLI2_API_H

#include <stdint.h>

#define MLI_MAX_RANK (4)

typedef enum {
    MLI_EL_FX_4 = 0x004, MLI_EL_FX_8 = 0x008, MLI_EL_FX_16 = 0x010,
    MLI_EL_SA_8 = 0x108, MLI_EL_SA_32 = 0x120,
    MLI_EL_FP_16 = 0x210, MLI_EL_FP_32 = 0x220,
    MLI_EL_LARGE_ENUM = 0x02000000
} mli_element_type;

typedef enum {
    MLI_EL_PARAM_SC16_ZP16 = 0,
    MLI_EL_PARAM_LARGE_ENUM = 0x02000000
} mli_el_param_type;

typedef struct _mli_data_container {
    uint32_t capacity;
    union {
        int32_t *pi32;
        int16_t *pi16;
        int8_t *pi8;
        float *pf32;
        int32_t i32;
        int16_t i16;
        int8_t i8;
        float f32;
    } mem;
} mli_data_container;

typedef union _mli_element_params {
    struct {
        int8_t frac_bits;
    } fx;
    struct {
        mli_el_param_type type;
        mli_data_container zero_point;
        mli_data_container scale;
        int32_t dim;
        mli_data_container scale_frac_bits;
    } sa;
} mli_element_params;

typedef struct _mli_tensor {
    mli_data_container data;
    int32_t mem_stride[MLI_MAX_RANK];
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
typedef struct { int32_t axis; } mli_prelu_cfg;
typedef mli_prelu_cfg mli_softmax_cfg;
typedef mli_prelu_cfg mli_l2_normalize_cfg;
typedef struct { mli_relu_cfg relu; } mli_fully_connected_cfg;

typedef struct {
    mli_relu_cfg relu;
    uint8_t stride_width;
    uint8_t stride_height;
    uint8_t padding_left;
    uint8_t padding_right;
    uint8_t padding_top;
    uint8_t padding_bottom;
    uint8_t dilation_width;
    uint8_t dilation_height;
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

typedef struct { uint8_t inputs_num; } mli_rnn_dense_cfg;
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

typedef struct {
    int32_t axis;
    int32_t topk;
} mli_argmax_cfg;

/* mli_mov_tensor_sync's config (data movement: copy, slice, concatenation, padding). */
typedef struct _mli_mov_cfg {
    uint32_t offset[MLI_MAX_RANK];
    uint32_t size[MLI_MAX_RANK];
    uint32_t sub_sample_step[MLI_MAX_RANK];
    uint32_t dst_offset[MLI_MAX_RANK];
    int32_t dst_mem_stride[MLI_MAX_RANK];
    uint8_t perm_dim[MLI_MAX_RANK];
    uint8_t padding_pre[MLI_MAX_RANK];
    uint8_t padding_post[MLI_MAX_RANK];
} mli_mov_cfg_t;

#endif
