/* The facts table of the MGK target: NMHWSOIB2 bit widths and the record
 * kinds seen in real files. Codec, parser and docs derive from it. */
#include <string.h>

#include "mgk_internal.h"

/* S_BIT2 = bits / 2 planes of 2-bit fields; value = code - 2^(bits-1).
 * 8-bit is verified on the fixture; 4-bit offset 8 is from the t41-pluto
 * manual; 6- and 2-bit offsets are the same rule extended (unverified). */
static const npk_mgk_bitwidth bitwidths[] = {
    {2, 1, 256, 2, false},
    {4, 2, 512, 8, false},
    {6, 3, 768, 32, false},
    {8, 4, 1024, 128, true},
};

const npk_mgk_bitwidth *npk_mgk_bitwidth_by_bits(int bits)
{
    for (size_t i = 0; i < sizeof bitwidths / sizeof bitwidths[0]; i++)
        if (bitwidths[i].bits == bits) return &bitwidths[i];
    return NULL;
}

const npk_mgk_bitwidth *npk_mgk_bitwidth_by_planes(int planes)
{
    for (size_t i = 0; i < sizeof bitwidths / sizeof bitwidths[0]; i++)
        if (bitwidths[i].planes == planes) return &bitwidths[i];
    return NULL;
}

/* Kernel-id prefixes present in the only public MGK (docs/mgk.md). Only
 * Convolution records are decoded; the others are listed with raw bodies. */
static const mgk_kind_info kinds[] = {
    {"Convolution", "decoded"},
    {"FormatConvert", "layout conversion (body not decoded)"},
    {"Reshape", "body not decoded"},
    {"Concat", "body not decoded"},
    {"Gru", "GRU; its weights are bound by the generated code, not by the blob"},
    {"Normalize", "body not decoded"},
    {"Add", "body not decoded"},
    {"UpSample", "body not decoded"},
    {"Permute", "body not decoded"},
};

const mgk_kind_info *mgk_kind_lookup(npk_mgk_str kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (npk_mgk_str_eq(kind, kinds[i].kind)) return &kinds[i];
    return NULL;
}

bool npk_mgk_str_eq(npk_mgk_str str, const char *lit)
{
    size_t n = strlen(lit);
    return str.len == n && (n == 0 || memcmp(str.s, lit, n) == 0);
}
