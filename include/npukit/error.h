/* Error model: every fallible function returns an npk_status and, when given
 * an npk_error, fills in a one-line message and (for parse errors) the file
 * offset where the problem was found. The library never prints or exits. */
#ifndef NPUKIT_ERROR_H
#define NPUKIT_ERROR_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npk_status {
    NPK_OK = 0,
    NPK_E_FORMAT,      /* input bytes are malformed or truncated */
    NPK_E_UNSUPPORTED, /* well-formed but outside what npukit handles */
    NPK_E_LIMIT,       /* a count or size exceeds a hard limit */
    NPK_E_ARG,         /* the caller passed an invalid argument */
    NPK_E_IO,          /* operating-system I/O failure */
    NPK_E_NOMEM,       /* allocation failed */
    NPK_E_DEVICE,      /* a device or driver reported a failure */
    NPK_E_NOTFOUND,    /* a named item (tensor, layer, device) does not exist */
    NPK_E_TIMEOUT,     /* an operation did not finish in time */
    NPK_E_CANCELLED    /* the caller's progress callback asked to stop (progress.h) */
} npk_status;

#define NPK_ERROR_MSG_MAX 256

typedef struct npk_error {
    npk_status status;
    bool has_offset; /* offset is meaningful */
    uint64_t offset; /* absolute byte offset in the input file */
    char msg[NPK_ERROR_MSG_MAX];
    /* For operations on several inputs (a model and a weights file): which
     * one the error is about, 0 (the default) being the first the function
     * takes. Set with npk_error_about(); documented per function. */
    int input;
} npk_error;

#if defined(__GNUC__)
#define NPK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NPK_PRINTF(a, b)
#endif

/* Record an error (err may be NULL) and return status, so callers can write
 * `return npk_fail(err, NPK_E_ARG, "bad %s", x);`. The first error recorded
 * wins until npk_error_clear(). */
npk_status npk_fail(npk_error *err, npk_status status, const char *fmt, ...) NPK_PRINTF(3, 4);
npk_status npk_fail_at(npk_error *err, npk_status status, uint64_t offset, const char *fmt, ...)
    NPK_PRINTF(4, 5);
/* Mark the error just recorded as being about input k and return `status`
 * (the status of the failure just reported, whatever an earlier error left
 * in err): `npk_fail(err, NPK_E_ARG, ...); return npk_error_about(err, 1, NPK_E_ARG);` */
npk_status npk_error_about(npk_error *err, int k, npk_status status);
void npk_error_clear(npk_error *err);
const char *npk_status_name(npk_status status);

#ifdef __cplusplus
}
#endif
#endif
