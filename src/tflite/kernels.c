/* The kernel table: builtin code (or custom code) -> prepare + eval. One
 * line per kernel; the kernels live in op_*.c (see kernel.h). */
#include <string.h>

#include "tflite/kernel.h"

extern const npk_tfl_kernel npk_tfl_k_add, npk_tfl_k_average_pool_2d, npk_tfl_k_concatenation,
    npk_tfl_k_conv_2d, npk_tfl_k_depthwise_conv_2d, npk_tfl_k_dequantize, npk_tfl_k_fully_connected,
    npk_tfl_k_max_pool_2d, npk_tfl_k_mean, npk_tfl_k_quantize, npk_tfl_k_reshape, npk_tfl_k_softmax,
    npk_tfl_k_squeeze;

static const npk_tfl_kernel *const kernels[] = {
    &npk_tfl_k_add,
    &npk_tfl_k_average_pool_2d,
    &npk_tfl_k_concatenation,
    &npk_tfl_k_conv_2d,
    &npk_tfl_k_depthwise_conv_2d,
    &npk_tfl_k_dequantize,
    &npk_tfl_k_fully_connected,
    &npk_tfl_k_max_pool_2d,
    &npk_tfl_k_mean,
    &npk_tfl_k_quantize,
    &npk_tfl_k_reshape,
    &npk_tfl_k_softmax,
    &npk_tfl_k_squeeze,
};

const npk_tfl_kernel *npk_tfl_kernel_find(int32_t builtin, const char *custom)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        const npk_tfl_kernel *k = kernels[i];
        if (k->builtin != builtin) continue;
        if (builtin != NPK_TFL_OP_CUSTOM) return k;
        if (custom && k->custom && !strcmp(custom, k->custom)) return k;
    }
    return NULL;
}
