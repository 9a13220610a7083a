#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "npukit/error.h"

static npk_status vfail(npk_error *err, npk_status status, bool has_off, uint64_t off,
                        const char *fmt, va_list ap)
{
    if (!err || err->status != NPK_OK) return status; /* keep the first error */
    err->status = status;
    err->has_offset = has_off;
    err->offset = off;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    /* Messages are one line: fold any newline a caller let through. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return status;
}

npk_status npk_fail(npk_error *err, npk_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, status, false, 0, fmt, ap);
    va_end(ap);
    return status;
}

npk_status npk_fail_at(npk_error *err, npk_status status, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, status, true, offset, fmt, ap);
    va_end(ap);
    return status;
}

npk_status npk_error_about(npk_error *err, int k, npk_status status)
{
    if (err) err->input = k;
    return status;
}

void npk_error_clear(npk_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
}

const char *npk_status_name(npk_status status)
{
    switch (status) {
    case NPK_OK: return "ok";
    case NPK_E_FORMAT: return "malformed input";
    case NPK_E_UNSUPPORTED: return "unsupported";
    case NPK_E_LIMIT: return "limit exceeded";
    case NPK_E_ARG: return "invalid argument";
    case NPK_E_IO: return "i/o error";
    case NPK_E_NOMEM: return "out of memory";
    case NPK_E_DEVICE: return "device error";
    case NPK_E_NOTFOUND: return "not found";
    case NPK_E_TIMEOUT: return "timeout";
    case NPK_E_CANCELLED: return "cancelled";
    }
    return "unknown error";
}
