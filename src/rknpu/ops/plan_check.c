/* The buffer check shared by every task planner (matmul, conv, pool, add):
 * each buffer inside the 32-bit DMA address space, and no two sharing a
 * byte. Weights written over the output, or streams over the input, would
 * give a wrong result without any error. */
#include "ops_internal.h"

npk_status rk_check_buffers(const rk_buf *b, size_t n, npk_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].addr + b[i].bytes > ((uint64_t)1 << 32))
            return npk_fail(err, NPK_E_LIMIT,
                            "%s buffer 0x%08llx..0x%llx (%llu bytes) exceeds the 32-bit DMA "
                            "address space (ends past 0xffffffff)",
                            b[i].name, (unsigned long long)b[i].addr,
                            (unsigned long long)(b[i].addr + b[i].bytes - 1),
                            (unsigned long long)b[i].bytes);
    bool placed = false;
    for (size_t i = 0; i < n; i++) placed |= b[i].addr != 0;
    for (size_t i = 0; placed && i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const rk_buf *x = &b[i], *y = &b[j];
            if (!x->bytes || !y->bytes) continue;
            if (x->alias && x->alias == y->alias && x->addr == y->addr && x->bytes == y->bytes)
                continue; /* the same buffer, in place */
            if (x->addr < y->addr + y->bytes && y->addr < x->addr + x->bytes)
                return npk_fail(err, NPK_E_ARG,
                                "%s buffer 0x%08llx..0x%08llx (%llu bytes) overlaps %s buffer "
                                "0x%08llx..0x%08llx (%llu bytes): move one (--%s-addr)",
                                x->name, (unsigned long long)x->addr,
                                (unsigned long long)(x->addr + x->bytes - 1),
                                (unsigned long long)x->bytes, y->name, (unsigned long long)y->addr,
                                (unsigned long long)(y->addr + y->bytes - 1),
                                (unsigned long long)y->bytes, y->name);
        }
    return NPK_OK;
}
