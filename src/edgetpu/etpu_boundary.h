/* Internal: values crossing an Edge TPU op's boundary, between a TFLite
 * tensor (host order, the graph's type) and a layer's device bytes
 * (little-endian, signed types with the sign bit flipped, outputs tiled).
 * Used by the graph runtime (graph.c) and the emulator's CPU answers
 * (emu_cpu.c), so both directions are one definition. */
#ifndef NPK_ETPU_BOUNDARY_H
#define NPK_ETPU_BOUNDARY_H

#include "npukit/edgetpu.h"

#define ETPU_TFL_UINT16 16 /* TFLite's UINT16 (not in npukit's enum) */

/* The TFLite type a layer's data type stands for, or -1. */
int etpu_layer_tfl_type(int data_type);
/* Whether a tensor (type, shape) can cross as layer l: the layer's type and
 * y * x * z elements. Errors say "WHAT: ..." with both descriptions. */
npk_status etpu_check_boundary(const npk_etpu_layer *l, int8_t type, uint32_t ndim,
                               const int32_t *dims, const char *what, npk_error *err);
/* count elements: tensor values (host order) -> device bytes, and back. */
void etpu_to_device(const npk_etpu_layer *l, const void *host, size_t count, uint8_t *dev);
void etpu_from_device(const npk_etpu_layer *l, const uint8_t *dev, size_t count, void *host);
/* Device bytes in Y, X, Z order into the layer's tiled order (the inverse
 * of npk_etpu_relayout; untiled layers are copied). Positions outside
 * dev_size are skipped. */
void etpu_scatter(const npk_etpu_layer *l, const uint8_t *yxz, uint8_t *dev, size_t dev_size);

#endif
