/* Internal: the DarwiNN readers, used by the custom-op reader. */
#ifndef NPK_ETPU_DARWINN_H
#define NPK_ETPU_DARWINN_H

#include "npukit/edgetpu.h"
#include "flatbuf/fb_copy.h"

npk_status npk_etpu_parse_package(npk_fbc_rd *r, const npk_fb_buf *b, npk_etpu_package *p);
npk_status npk_etpu_parse_executable(npk_fbc_rd *r, const npk_fb_buf *b, npk_etpu_executable *e);

#endif
