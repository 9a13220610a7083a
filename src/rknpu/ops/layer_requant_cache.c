/* Caches around the exact requantisation's multiplier-pair search
 * (rk_best_pair_search, thousands of steps per distinct multiplier) and its
 * fitted BN offset (below), in per-thread memo tables (memo.h): both are
 * pure functions of their arguments, so a result is reused only for the
 * same values, bit for bit, and compiles give the same bytes with or
 * without them. ~100 entries per compile of mobilenet_v2 all stay. */
#include <string.h>

#include "layer_internal.h"
#include "memo.h"

#define SLOTS 512 /* more than the layers of the largest model here */

typedef struct pair_key {
    uint64_t t, target; /* the doubles' bits */
    int64_t bh;
    int64_t window;
} pair_key;

typedef struct pair_entry {
    pair_key key;
    int32_t b, a;
} pair_entry;

static _Thread_local pair_entry pairs[SLOTS];
static _Thread_local bool pairs_used[SLOTS];
static _Thread_local uint8_t pairs_clock[SLOTS / RK_MEMO_WAYS];

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

void rk_best_pair(double T, int64_t bh, int32_t window, double target, int32_t *ob, int32_t *oa)
{
    const pair_key key = {bits(T), bits(target), bh, window};
    const rk_memo m = {pairs,     pairs_used, pairs_clock, SLOTS / RK_MEMO_WAYS, sizeof(pair_entry),
                       sizeof key};
    bool hit;
    pair_entry *s = rk_memo_slot(&m, &key, &hit);
    if (!hit) rk_best_pair_search(T, bh, window, target, &s->b, &s->a);
    *ob = s->b;
    *oa = s->a;
}

/* The exact mode's fitted BN offset (rk_exact_fit_k_search, a few thousand
 * steps of TFLite's arithmetic per distinct multiplier): likewise a pure
 * function of its arguments, kept per thread. Per-channel models have a
 * multiplier per channel: more slots. */
#define FIT_SLOTS 1024

typedef struct fit_key {
    uint64_t m; /* the double's bits */
    int32_t b, a, k, n_lo, n_hi;
    uint32_t s1, f;
    uint32_t zero; /* no padding bytes: the key is compared as bytes */
} fit_key;

typedef struct fit_entry {
    fit_key key;
    int32_t out;
} fit_entry;

static _Thread_local fit_entry fits[FIT_SLOTS];
static _Thread_local bool fits_used[FIT_SLOTS];
static _Thread_local uint8_t fits_clock[FIT_SLOTS / RK_MEMO_WAYS];

int32_t rk_exact_fit_k(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                       int32_t n_lo, int32_t n_hi)
{
    const fit_key key = {bits(m), b, a, k, n_lo, n_hi, s1, f, 0};
    const rk_memo mt = {
        fits, fits_used, fits_clock, FIT_SLOTS / RK_MEMO_WAYS, sizeof(fit_entry), sizeof key};
    bool hit;
    fit_entry *s = rk_memo_slot(&mt, &key, &hit);
    if (!hit) s->out = rk_exact_fit_k_search(m, b, a, k, s1, f, n_lo, n_hi);
    return s->out;
}
