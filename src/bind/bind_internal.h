/* Shared by the binding objects: the bytes an object was opened from. */
#ifndef NPK_BIND_INTERNAL_H
#define NPK_BIND_INTERNAL_H

#include "npukit/bind.h"
#include "npukit/file.h"

typedef struct bind_src {
    npk_mapped map; /* when opened from a path */
    uint8_t *heap;  /* when opened from bytes (a copy) */
    const uint8_t *data;
    size_t size;
} bind_src;

/* path (mapped), or a copy of buf/len when path is NULL. */
npk_status bind_src_open(bind_src *s, const char *path, const uint8_t *buf, size_t len,
                         npk_error *err);
/* Take ownership of a malloc'd buffer. */
void bind_src_adopt(bind_src *s, uint8_t *buf, size_t len);
void bind_src_close(bind_src *s);

#endif
