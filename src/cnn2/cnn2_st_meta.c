/* safetensors for CNN v2: the core codec writes the tensors; this file adds
 * (and reads back) the two header fields a tensor cannot carry, version and
 * mip_level, as "__metadata__" strings, so unpack + pack is byte-exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/cnn2.h"

#define META_VERSION "cnn2.version"
#define META_MIP     "cnn2.mip_level"

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>

npk_status npk_cnn2_st_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err)
{
    npk_tensor_set set;
    npk_status st = npk_cnn2_to_tensors(m, &set, err);
    if (st) return st;
    uint8_t *plain;
    size_t plain_len;
    st = npk_st_encode(set.items, set.count, &plain, &plain_len, err);
    npk_set_free(&set);
    if (st) return st;
    /* Re-emit the JSON header with the metadata; data offsets are relative
     * to the data buffer, so the tensor bytes move unchanged. */
    size_t hl = (size_t)npk_ld64le(plain);
    cJSON *root = cJSON_ParseWithLength((const char *)plain + 8, hl);
    cJSON *meta = cJSON_CreateObject();
    char v[16], mip[16];
    snprintf(v, sizeof v, "%u", m->version);
    snprintf(mip, sizeof mip, "%u", m->mip_level);
    char *json = NULL;
    if (root && meta && cJSON_AddStringToObject(meta, "format", "cnn2") &&
        cJSON_AddStringToObject(meta, META_VERSION, v) &&
        cJSON_AddStringToObject(meta, META_MIP, mip)) {
        cJSON_AddItemToObject(root, "__metadata__", meta);
        meta = NULL;
        json = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(meta);
    cJSON_Delete(root);
    if (!json) {
        free(plain);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    size_t jl = strlen(json), nhl = (jl + 7) & ~(size_t)7, dlen = plain_len - 8 - hl;
    uint8_t *b = malloc(8 + nhl + dlen);
    if (!b) {
        free(json);
        free(plain);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    npk_st64le(b, nhl);
    memcpy(b + 8, json, jl);
    memset(b + 8 + jl, ' ', nhl - jl);
    memcpy(b + 8 + nhl, plain + 8 + hl, dlen);
    free(json);
    free(plain);
    *out = b;
    *len = 8 + nhl + dlen;
    return NPK_OK;
}

/* A one-digit metadata value; -1 when malformed. */
static int meta_digit(const cJSON *j)
{
    const char *s = cJSON_IsString(j) ? j->valuestring : NULL;
    return s && s[0] >= '0' && s[0] <= '9' && !s[1] ? s[0] - '0' : -1;
}

npk_status npk_cnn2_st_decode(const uint8_t *buf, size_t len, npk_tensor_set *set,
                              uint32_t *version, uint32_t *mip_level, npk_error *err)
{
    *version = *mip_level = 0;
    npk_status st = npk_st_parse(buf, len, set, err);
    if (st) return st;
    /* npk_st_parse accepted the header, so it is a JSON object in bounds. */
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)npk_ld64le(buf));
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(meta, META_VERSION);
    const cJSON *jm = cJSON_GetObjectItemCaseSensitive(meta, META_MIP);
    int v = jv ? meta_digit(jv) : 0, mip = jm ? meta_digit(jm) : 0;
    if (jv && v != 1 && v != 2)
        st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: metadata %s is not 1 or 2",
                         META_VERSION);
    else if (mip < 0 || mip > (int)NPK_CNN2_MAX_MIP)
        st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: metadata %s is not 0..3", META_MIP);
    *version = (uint32_t)v;
    *mip_level = st ? 0 : (uint32_t)mip;
    cJSON_Delete(root);
    if (st) npk_set_free(set);
    return st;
}

#else /* !NPK_HAVE_CJSON */

npk_status npk_cnn2_st_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err)
{
    (void)m;
    (void)out;
    (void)len;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

npk_status npk_cnn2_st_decode(const uint8_t *buf, size_t len, npk_tensor_set *set,
                              uint32_t *version, uint32_t *mip_level, npk_error *err)
{
    (void)buf;
    (void)len;
    npk_set_init(set);
    *version = *mip_level = 0;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

#endif
