/* Shared between the input (file.c), output (output.c, outdir.c) and
 * temporary-file (temps.c) parts of the file layer. */
#ifndef NPK_FILE_INTERNAL_H
#define NPK_FILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/file.h"

/* Is (dev, ino) an open (or sticky-protected) input? */
bool npk_input_protected(uint64_t dev, uint64_t ino);

/* npk_temp_register / npk_temp_unregister (file.h): the token is a slot + 1. */

/* Write all of buf to fd (EINTR retried). */
npk_status npk_write_all(int fd, const void *buf, size_t n, npk_error *err);

/* An npk_out writing to an already open descriptor of a new file in a
 * staging directory (outdir.c): no temporary, commit = fsync + close. */
npk_status npk_out_from_fd(int fd, const char *path, npk_out **out, npk_error *err);

#endif
