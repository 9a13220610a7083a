/* ONNX export: placeholder until the protobuf-c writer is in. */
#include "npukit/mgk_graph.h"

bool npk_mgk_onnx_available(void)
{
    return false;
}

npk_status npk_mgk_export_onnx(const npk_mgk_model *m, const npk_mgk_onnx_opts *opts,
                               uint8_t **out, size_t *len, npk_error *err)
{
    (void)m;
    (void)opts;
    *out = NULL;
    *len = 0;
    return npk_fail(err, NPK_E_UNSUPPORTED, "ONNX export needs libprotobuf-c");
}
