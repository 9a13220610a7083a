/* Per-thread memo tables (memo.h). */
#include "memo.h"

#include <string.h>

static uint64_t key_hash(const void *key, size_t n)
{
    const unsigned char *p = key;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
    }
    return h;
}

void *rk_memo_slot(const rk_memo *m, const void *key, bool *hit)
{
    const size_t set = (size_t)(key_hash(key, m->key_size) >> 40) % m->nsets;
    const size_t base = set * RK_MEMO_WAYS;
    unsigned char *e = m->entries;
    size_t free_way = RK_MEMO_WAYS;
    for (size_t w = 0; w < RK_MEMO_WAYS; w++) {
        if (!m->used[base + w]) {
            if (free_way == RK_MEMO_WAYS) free_way = w;
        } else if (!memcmp(e + (base + w) * m->entry_size, key, m->key_size)) {
            *hit = true;
            return e + (base + w) * m->entry_size;
        }
    }
    if (free_way == RK_MEMO_WAYS) free_way = m->clock[set]++ % RK_MEMO_WAYS;
    unsigned char *s = e + (base + free_way) * m->entry_size;
    memcpy(s, key, m->key_size);
    m->used[base + free_way] = true;
    *hit = false;
    return s;
}
