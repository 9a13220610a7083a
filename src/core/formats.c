/* The format table: the single place that lists every format npukit knows.
 * Order matters: formats with a strong magic come first, heuristic text
 * formats last. Each target provides its probe/summarize pair. */
#include <string.h>

#include "npukit/detect.h"
#include "formats.h"

static const npk_format formats[] = {
    {"mgk", "Ingenic MGK model (MIPS ELF + IMGK payload)", npk_mgk_probe, npk_mgk_summarize},
    {"tflite", "TensorFlow Lite model", npk_tflite_probe, npk_tflite_summarize},
    {"cnn2", "CNN v2 weight file", npk_cnn2_probe, npk_cnn2_summarize},
    {"npy", "NumPy array (.npy)", npk_npy_probe, npk_npy_summarize},
    {"safetensors", "safetensors tensor file", npk_st_probe, npk_st_summarize},
    {"rknpu-stream", "RKNPU register-command stream", npk_rknpu_stream_probe,
     npk_rknpu_stream_summarize},
    {"rknpu-regdb", "RKNPU register database (TSV)", npk_rknpu_regdb_probe,
     npk_rknpu_regdb_summarize},
    {"edgetpu-sidecar", "Edge TPU template sidecar (JSON)", npk_edgetpu_sidecar_probe,
     npk_edgetpu_sidecar_summarize},
    {"json", "JSON document", npk_json_probe, npk_text_summarize},
    {"csv", "CSV table", npk_csv_probe, npk_text_summarize},
    {"text", "text file", npk_text_probe, npk_text_summarize},
};

const npk_format *npk_formats(size_t *count)
{
    *count = sizeof formats / sizeof formats[0];
    return formats;
}

const npk_format *npk_detect(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].probe(buf, len)) return &formats[i];
    return NULL;
}

const npk_format *npk_format_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

bool npk_format_prefix_ok(const npk_format *f)
{
    return f && (f->probe == npk_text_probe || f->probe == npk_csv_probe);
}
