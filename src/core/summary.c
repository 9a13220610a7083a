#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "npukit/detect.h"

static npk_kv *slot(npk_summary *s, const char *key, npk_kv_type type)
{
    if (s->count >= NPK_SUMMARY_MAX) return NULL;
    npk_kv *kv = &s->kv[s->count++];
    memset(kv, 0, sizeof *kv);
    snprintf(kv->key, sizeof kv->key, "%s", key);
    kv->type = type;
    return kv;
}

void npk_sum_title(npk_summary *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->title, sizeof s->title, fmt, ap);
    va_end(ap);
}

void npk_sum_str(npk_summary *s, const char *key, const char *fmt, ...)
{
    npk_kv *kv = slot(s, key, NPK_KV_STR);
    if (!kv) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kv->s, sizeof kv->s, fmt, ap);
    va_end(ap);
}

void npk_sum_int(npk_summary *s, const char *key, int64_t v)
{
    npk_kv *kv = slot(s, key, NPK_KV_INT);
    if (kv) kv->v.i = v;
}
void npk_sum_uint(npk_summary *s, const char *key, uint64_t v)
{
    npk_kv *kv = slot(s, key, NPK_KV_UINT);
    if (kv) kv->v.u = v;
}
void npk_sum_hex(npk_summary *s, const char *key, uint64_t v)
{
    npk_kv *kv = slot(s, key, NPK_KV_HEX);
    if (kv) kv->v.u = v;
}
void npk_sum_float(npk_summary *s, const char *key, double v)
{
    npk_kv *kv = slot(s, key, NPK_KV_FLOAT);
    if (kv) kv->v.f = v;
}
void npk_sum_bool(npk_summary *s, const char *key, bool v)
{
    npk_kv *kv = slot(s, key, NPK_KV_BOOL);
    if (kv) kv->v.b = v;
}
