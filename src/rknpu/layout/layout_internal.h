/* Internals shared by the layout converters (layout.c, layout_kn.c). */
#ifndef NPK_RKNPU_LAYOUT_INTERNAL_H
#define NPK_RKNPU_LAYOUT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/rknpu_layout.h"

/* From this many bytes on, conversions write with streaming stores (the
 * destination would not stay in the caches anyway). */
#define RK_LAYOUT_STREAMED ((size_t)8 << 20)

/* B[K][N] <-> packed weights, for a shape npk_rk_weight_check accepted. */
void rk_weight_kn_convert(const npk_rk_weight_shape *s, uint8_t *plain, uint8_t *packed, bool pack);
/* The 128-bit vector paths are in use (npk_rk_layout_force did not turn
 * them off). */
bool rk_layout_vectors(void);

#endif
