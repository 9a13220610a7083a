/* The MGK `model` blob reader on its own: the input is the blob (records
 * framed by trailing length words, tensor references, convolution fields,
 * weight and requantisation shapes), placed after a fixed weight region of
 * the fixture's size, so the fuzzer does not have to get through the ELF
 * and the container first. Everything the parser accepts is decoded,
 * re-encoded (byte-identical) and extracted. Seeds are the blobs cut out of
 * the fixture and of synthetic files (scripts/fuzz-smoke.sh). */
#include <stdlib.h>
#include <string.h>

#include "npukit/mgk.h"
#include "npukit/mgk_graph.h"
#include "mgk/mgk_internal.h"

#define REGION 0x20900u /* the fixture's weight region size */

static void exercise(const npk_mgk_model *m)
{
    for (size_t i = 0; i < m->nconvs; i++) {
        const npk_mgk_conv *c = &m->convs[i];
        npk_mgk_requant rq;
        if (npk_mgk_requant_read(m, c, &rq, NULL) == NPK_OK) npk_mgk_requant_free(&rq);
        npk_mgk_wshape s;
        size_t count;
        if (npk_mgk_layer_wshape(c, 0, &s, NULL) || npk_mgk_wshape_check(&s, NULL, &count, NULL) ||
            count > (16u << 20))
            continue;
        int8_t *w = malloc(count ? count : 1);
        uint8_t *blk = malloc(c->weight_bytes ? (size_t)c->weight_bytes : 1);
        const uint8_t *orig = m->data + m->region_offset + c->weight_offset;
        if (w && blk && npk_mgk_decode_layer(m, c, 0, w, NULL) == NPK_OK) {
            memcpy(blk, orig, (size_t)c->weight_bytes);
            if (npk_mgk_nmhw_encode(&s, w, blk, (size_t)c->weight_bytes, NULL) ||
                memcmp(blk, orig, (size_t)c->weight_bytes))
                abort(); /* decode + encode must be the identity */
        }
        free(blk);
        free(w);
    }
    npk_tensor_set set;
    if (npk_mgk_extract(m, &set, NULL) == NPK_OK) npk_set_free(&set);
    npk_mgk_graph g; /* record bodies, tensor ids and shapes */
    if (npk_mgk_graph_build(m, &g, NULL) == NPK_OK) npk_mgk_graph_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t region[REGION];
    static int ready;
    if (!ready) { /* a fixed, non-trivial weight region (xorshift32), made once */
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < REGION; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            region[i] = (uint8_t)x;
        }
        ready = 1;
    }
    uint8_t *buf = malloc(REGION + size);
    if (!buf) return 0;
    memcpy(buf, region, REGION);
    memcpy(buf + REGION, data, size);
    npk_mgk_model m;
    memset(&m, 0, sizeof m);
    m.data = buf;
    m.size = REGION + size;
    m.region_offset = 0;
    m.region_size = REGION;
    m.sections[0].offset = REGION;
    m.sections[0].size = size;
    m.nsections = 1;
    m.sec_model = 0;
    m.sec_strtab = m.sec_verstr = m.sec_version = -1;
    npk_error err = {0};
    if (mgk_parse_blob(&m, &err) == NPK_OK && mgk_find_unassigned(&m, &err) == NPK_OK) exercise(&m);
    npk_mgk_free(&m);
    free(buf);
    return 0;
}
