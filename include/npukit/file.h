/* File access: read-only mapping of inputs and atomic output.
 *
 * Inputs are mapped read-only (or read into memory when they cannot be
 * mapped, e.g. pipes). Every mapped input is remembered while it is open, and
 * npk_out_open() refuses to replace a file that is currently an input.
 *
 * Outputs go to a temporary file in the destination directory and appear
 * under their final name only on npk_out_commit() (fsync + rename), so a
 * failure never leaves a partial or truncated file behind. */
#ifndef NPUKIT_FILE_H
#define NPUKIT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hard upper bound on an input file; larger files are refused (NPK_E_LIMIT). */
#define NPK_MAX_INPUT_SIZE ((uint64_t)1 << 32)

typedef struct npk_mapped {
    const uint8_t *data; /* never NULL after a successful map, even for empty files */
    size_t size;
    /* private */
    void *map_base;
    size_t map_len;
    void *heap;
    uint64_t dev, ino;
    int registered;
} npk_mapped;

/* Map `path` read-only. "-" reads standard input into memory. */
npk_status npk_map_file(const char *path, npk_mapped *m, npk_error *err);
void npk_unmap_file(npk_mapped *m);

/* Keep every file mapped from now on protected even after it is unmapped, for
 * the rest of the process (the CLI turns this on: an input is never replaced). */
void npk_protect_inputs_until_exit(bool on);

/* Also refuse outputs onto this path (for inputs read without npk_map_file). */
npk_status npk_protect_path(const char *path, npk_error *err);

typedef struct npk_out npk_out;

npk_status npk_out_open(npk_out **out, const char *path, npk_error *err);
npk_status npk_out_write(npk_out *out, const void *data, size_t n, npk_error *err);
/* Flush, fsync, rename into place and free `out` (also on failure). */
npk_status npk_out_commit(npk_out *out, npk_error *err);
/* Remove the temporary file and free `out`. Safe with NULL. */
void npk_out_abort(npk_out *out);

/* Convenience: write a whole buffer atomically. */
npk_status npk_write_file(const char *path, const void *data, size_t n, npk_error *err);

/* Create a directory if it does not exist yet (one level). */
npk_status npk_make_dir(const char *path, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
