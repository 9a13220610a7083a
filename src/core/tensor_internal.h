/* Helpers shared by the .npy and safetensors codecs. */
#ifndef NPK_TENSOR_INTERNAL_H
#define NPK_TENSOR_INTERNAL_H

#include <stddef.h>

/* Copy nbytes of elements of size esz, reversing each element's bytes when
 * swap is set (file little-endian <-> big-endian host). */
void npk_swap_copy(void *dst, const void *src, size_t nbytes, size_t esz, int swap);

#endif
