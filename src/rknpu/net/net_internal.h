/* Internals of the whole-network compiler (src/rknpu/net/). */
#ifndef NPK_RKNPU_NET_INTERNAL_H
#define NPK_RKNPU_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/rknpu_net.h"

enum { SIDE_CPU = 0, SIDE_NPU = 1, SIDE_FREE = 2 };

/* State while compiling. */
typedef struct net_build {
    npk_rk_net *net;
    uint8_t *side;   /* per operator */
    int32_t *npu_of; /* per operator: its index in net->ops, or -1 */
    bool *dev_made;  /* per tensor: written on the device (by a layer or a free reshape) */
} net_build;

bool net_is_const(const npk_tfl_model *m, const npk_tfl_tensor *t);
npk_status net_partition(net_build *b, npk_error *err);

#endif
