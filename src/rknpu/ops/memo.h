/* Per-thread memo tables for the planner's pure searches (the exact
 * requantisation's multiplier pairs and fitted offsets, the exact ADD's
 * encoding): a result is reused only for the same key bytes, so compiles
 * give the same bytes with or without them. 4-way set-associative. */
#ifndef NPK_RK_MEMO_H
#define NPK_RK_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RK_MEMO_WAYS 4

/* A table: nsets * RK_MEMO_WAYS entries of entry_size bytes, each starting
 * with its key (key_size bytes, padding zeroed by the caller), used[] and
 * clock[] beside it (all zero at first). */
typedef struct rk_memo {
    void *entries;
    bool *used;     /* nsets * RK_MEMO_WAYS */
    uint8_t *clock; /* nsets: the next way to evict */
    size_t nsets, entry_size, key_size;
} rk_memo;

/* The entry holding key (*hit true), or the one to fill (*hit false: its
 * key written and marked used; the caller writes the result after the key). */
void *rk_memo_slot(const rk_memo *m, const void *key, bool *hit);

#endif
