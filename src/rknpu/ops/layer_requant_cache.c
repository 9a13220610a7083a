/* Caches around the exact requantisation's multiplier-pair search
 * (rk_best_pair_search, thousands of steps per distinct multiplier) and its
 * fitted BN offset (below): the
 * search is a pure function of (T, bh, window, target), so a result is
 * reused only for the same four values, bit for bit, and compiles give the
 * same bytes with or without it. Small tables per thread (no locks; a
 * compile runs on one thread), 4-way set-associative: the ~100 entries of
 * one compile of mobilenet_v2 all stay (a direct-mapped table lost a few
 * to collisions, searched again by every compile). */
#include <string.h>

#include "layer_internal.h"

#define SLOTS 512 /* more than the layers of the largest model here */
#define WAYS  4

/* The slot of a key (hash h) in a table of n slots: its way in the set,
 * or (used false) the way to fill: an empty one, else the set's next in
 * turn. match(slot) says whether a used slot holds the key. */
#define LOOKUP(table, clock, n, h, match, out)                                                     \
    do {                                                                                           \
        size_t set_ = (size_t)((h) >> 40) % ((n) / WAYS), free_ = WAYS;                            \
        (out) = NULL;                                                                              \
        for (size_t w_ = 0; w_ < WAYS; w_++) {                                                     \
            if (!(table)[set_ * WAYS + w_].used) {                                                 \
                if (free_ == WAYS) free_ = w_;                                                     \
            } else if (match(&(table)[set_ * WAYS + w_])) {                                        \
                (out) = &(table)[set_ * WAYS + w_];                                                \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        if (!(out)) {                                                                              \
            if (free_ == WAYS) free_ = (clock)[set_]++ % WAYS;                                     \
            (out) = &(table)[set_ * WAYS + free_];                                                 \
            (out)->used = false;                                                                   \
        }                                                                                          \
    } while (0)

typedef struct slot {
    uint64_t t, target; /* the doubles' bits */
    int64_t bh;
    int32_t window, b, a;
    bool used;
} slot;

static _Thread_local slot table[SLOTS];
static _Thread_local uint8_t table_clock[SLOTS / WAYS];

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

void rk_best_pair(double T, int64_t bh, int32_t window, double target, int32_t *ob, int32_t *oa)
{
    const uint64_t t = bits(T), g = bits(target);
    uint64_t h = (t ^ (g * 0x9E3779B97F4A7C15ull) ^ (uint64_t)bh * 0xC2B2AE3D27D4EB4Full ^
                  (uint64_t)(uint32_t)window) *
                 0xFF51AFD7ED558CCDull;
    slot *s;
#define PAIR_MATCH(x) ((x)->t == t && (x)->target == g && (x)->bh == bh && (x)->window == window)
    LOOKUP(table, table_clock, SLOTS, h, PAIR_MATCH, s);
#undef PAIR_MATCH
    if (s->used) {
        *ob = s->b;
        *oa = s->a;
        return;
    }
    rk_best_pair_search(T, bh, window, target, ob, oa);
    slot n = {t, g, bh, window, *ob, *oa, true};
    *s = n;
}

/* The exact mode's fitted BN offset (rk_exact_fit_k_search, a few thousand
 * steps of TFLite's arithmetic per distinct multiplier): likewise a pure
 * function of its arguments, kept per thread. Per-channel models have a
 * multiplier per channel: more slots. */
#define FIT_SLOTS 1024

typedef struct fit_slot {
    uint64_t m; /* the double's bits */
    int32_t b, a, k, n_lo, n_hi, out;
    uint8_t s1, f;
    bool used;
} fit_slot;

static _Thread_local fit_slot fits[FIT_SLOTS];
static _Thread_local uint8_t fits_clock[FIT_SLOTS / WAYS];

int32_t rk_exact_fit_k(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                       int32_t n_lo, int32_t n_hi)
{
    if (s1 > 255 || f > 255) return rk_exact_fit_k_search(m, b, a, k, s1, f, n_lo, n_hi);
    const uint64_t mb = bits(m);
    uint64_t h = (mb ^ (uint64_t)(uint32_t)b * 0x9E3779B97F4A7C15ull ^
                  (uint64_t)(uint32_t)a * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)(uint32_t)k ^
                  ((uint64_t)(uint32_t)n_lo << 32) ^ ((uint64_t)(uint32_t)n_hi << 12) ^
                  ((uint64_t)s1 << 48) ^ ((uint64_t)f << 56)) *
                 0xFF51AFD7ED558CCDull;
    fit_slot *s;
#define FIT_MATCH(x)                                                                               \
    ((x)->m == mb && (x)->b == b && (x)->a == a && (x)->k == k && (x)->n_lo == n_lo &&             \
     (x)->n_hi == n_hi && (x)->s1 == s1 && (x)->f == f)
    LOOKUP(fits, fits_clock, FIT_SLOTS, h, FIT_MATCH, s);
#undef FIT_MATCH
    if (s->used) return s->out;
    int32_t out = rk_exact_fit_k_search(m, b, a, k, s1, f, n_lo, n_hi);
    fit_slot n = {mb, b, a, k, n_lo, n_hi, out, (uint8_t)s1, (uint8_t)f, true};
    *s = n;
    return out;
}
