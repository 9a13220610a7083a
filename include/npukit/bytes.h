/* Unchecked little/big-endian loads and stores, independent of the host's
 * byte order. Use only after a bounds check (see cursor.h for checked reads). */
#ifndef NPUKIT_BYTES_H
#define NPUKIT_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t npk_ld16le(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t npk_ld32le(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static inline uint64_t npk_ld64le(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint64_t)npk_ld32le(b) | ((uint64_t)npk_ld32le(b + 4) << 32);
}
static inline uint16_t npk_ld16be(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint16_t)((b[0] << 8) | b[1]);
}
static inline uint32_t npk_ld32be(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}
static inline uint64_t npk_ld64be(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return ((uint64_t)npk_ld32be(b) << 32) | (uint64_t)npk_ld32be(b + 4);
}
static inline float npk_ldf32le(const void *p)
{
    uint32_t u = npk_ld32le(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline double npk_ldf64le(const void *p)
{
    uint64_t u = npk_ld64le(p);
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline void npk_st16le(void *p, uint16_t v)
{
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}
static inline void npk_st32le(void *p, uint32_t v)
{
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}
static inline void npk_st64le(void *p, uint64_t v)
{
    npk_st32le(p, (uint32_t)v);
    npk_st32le((uint8_t *)p + 4, (uint32_t)(v >> 32));
}
static inline void npk_st32be(void *p, uint32_t v)
{
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}
static inline void npk_stf32le(void *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    npk_st32le(p, u);
}

/* 1 when the host stores integers little-endian (decided at run time so the
 * same code is correct on big-endian MIPS). */
static inline int npk_host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

#endif
