/* Files held in memory written into one output directory as a single
 * transaction (npk_outdir): a staging directory renamed into place when
 * every write worked, nothing under DIR otherwise. */
#ifndef NPK_CLI_OUTDIR_H
#define NPK_CLI_OUTDIR_H

#include <stddef.h>

typedef struct cli_out_file {
    const char *name; /* a plain file name, no '/' */
    const void *data;
    size_t len;
} cli_out_file;

/* CLI_OK, or CLI_FAIL after one error line naming dir. */
int cli_write_dir(const char *dir, const cli_out_file *f, size_t n);

#endif
