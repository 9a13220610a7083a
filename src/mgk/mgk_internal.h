/* Private helpers shared by the MGK parser, codec and writers. */
#ifndef NPK_MGK_INTERNAL_H
#define NPK_MGK_INTERNAL_H

#include "npukit/cursor.h"
#include "npukit/mgk.h"

/* Known record kinds (the kernel-id prefix), from mgk_table.c. */
typedef struct mgk_kind_info {
    const char *kind;
    const char *note;
} mgk_kind_info;
const mgk_kind_info *mgk_kind_lookup(npk_mgk_str kind);

/* Blob primitives: u32-length strings and counted vectors, capped. */
npk_status mgk_read_str(npk_cursor *c, npk_mgk_str *s, npk_error *err);
npk_status mgk_read_count(npk_cursor *c, uint32_t *n, size_t item_min, npk_error *err);
/* A vector<int> of at most `cap` items kept (more items are an error). */
npk_status mgk_read_ivec(npk_cursor *c, int32_t *v, uint32_t cap, uint32_t *n, npk_error *err);

/* Add a warning to the model (never fails; extra warnings are counted). */
void mgk_warn(npk_mgk_model *m, uint64_t offset, const char *fmt, ...) NPK_PRINTF(3, 4);

npk_status mgk_parse_elf(const uint8_t *buf, size_t len, npk_mgk_elf *e, npk_error *err);
void mgk_free_elf(npk_mgk_elf *e);
npk_status mgk_parse_container(npk_mgk_model *m, npk_error *err);
npk_status mgk_parse_blob(npk_mgk_model *m, npk_error *err);
npk_status mgk_find_unassigned(npk_mgk_model *m, npk_error *err);

/* The fast 8-bit row kernels of the codec (mgk_codec.c). */
#endif
