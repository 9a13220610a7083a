/* libFuzzer target for the MGK parser, codec, requant reader, extract,
 * replace, the graph and the ONNX export. Invariant: re-encoding the
 * extracted weights (convolutions and GRUs) of any file that parses
 * reproduces the file byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "npukit/mgk.h"
#include "npukit/mgk_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_mgk_model m;
    npk_error err = {0};
    if (npk_mgk_parse(data, size, &m, &err) != NPK_OK) return 0;
    for (size_t i = 0; i < m.nconvs; i++) {
        const npk_mgk_conv *c = &m.convs[i];
        npk_mgk_requant rq;
        if (npk_mgk_requant_read(&m, c, &rq, NULL) == NPK_OK) npk_mgk_requant_free(&rq);
        npk_mgk_wshape s;
        size_t count;
        if (npk_mgk_layer_wshape(c, NPK_MGK_ALL_LANES, &s, NULL) ||
            npk_mgk_wshape_check(&s, NULL, &count, NULL) || count > (64u << 20))
            continue;
        int8_t *w = malloc(count ? count : 1);
        if (w && npk_mgk_decode_layer(&m, c, NPK_MGK_ALL_LANES, w, NULL) == NPK_OK) {
            uint8_t *blk = malloc((size_t)c->weight_bytes);
            if (blk) {
                memcpy(blk, data + m.region_offset + c->weight_offset, (size_t)c->weight_bytes);
                if (npk_mgk_nmhw_encode(&s, w, blk, (size_t)c->weight_bytes, NULL) != NPK_OK ||
                    memcmp(blk, data + m.region_offset + c->weight_offset, (size_t)c->weight_bytes))
                    abort();
                free(blk);
            }
        }
        free(w);
    }
    npk_tensor_set set;
    if (npk_mgk_extract(&m, &set, NULL) == NPK_OK) {
        uint8_t *out;
        size_t len;
        if (npk_mgk_replace(&m, &set, &out, &len, NULL, NULL) == NPK_OK) {
            if (len != size || memcmp(out, data, size)) abort();
            free(out);
        }
        npk_set_free(&set);
    }
    npk_mgk_graph g;
    if (npk_mgk_graph_build(&m, &g, NULL) == NPK_OK) npk_mgk_graph_free(&g);
    for (int qdq = 0; qdq < 2; qdq++) {
        npk_mgk_onnx_opts o = {qdq == 1, true};
        uint8_t *onnx;
        size_t n;
        if (npk_mgk_export_onnx(&m, &o, &onnx, &n, NULL) == NPK_OK) free(onnx);
    }
    npk_mgk_free(&m);
    return 0;
}
