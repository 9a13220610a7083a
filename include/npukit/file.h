/* File access: read-only mapping of inputs, atomic single-file outputs and
 * all-or-nothing output directories.
 *
 * Inputs are mapped read-only (or read into memory when they cannot be
 * mapped, e.g. pipes). Every input is remembered while it is open (by device
 * and inode, standard input included when it is a file), and no output may
 * replace a file that is currently an input.
 *
 * Where an output goes (npk_out_open):
 *   - a new path or an existing regular file: a temporary file beside it
 *     (".NAME.XXXXXX", shortened to fit NAME_MAX) that replaces it only on
 *     npk_out_commit() (fsync + rename), so a failure never leaves a partial
 *     file. A replaced file keeps its permission bits (and, where allowed,
 *     owner and group);
 *   - a symbolic link: written through to the file it points to (the link
 *     stays a link); a link to a missing file is refused;
 *   - an existing character device or FIFO (/dev/null, a named pipe): written
 *     in place, never renamed over; block devices and sockets are refused;
 *   - "-": standard output (npk_set_stdout_fd() says which descriptor that
 *     is); one output per process.
 * Every output is limited to NPK_MAX_OUTPUT_SIZE bytes.
 *
 * Temporary files and directories are registered while they exist, so a
 * signal handler can remove them (npk_remove_temporaries()). */
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
/* Hard upper bound on one output file, so that every output can be read back. */
#define NPK_MAX_OUTPUT_SIZE NPK_MAX_INPUT_SIZE

typedef struct npk_mapped {
    const uint8_t *data; /* never NULL after a successful map, even for empty files */
    size_t size;
    bool complete; /* false: a stream read only up to a prefix (npk_map_prefix) */
    /* private */
    void *map_base;
    size_t map_len;
    void *heap;
    size_t heap_cap;
    uint64_t dev, ino;
    int registered;
    int map_slot;  /* slot in the fault table + 1, 0 if none */
    int stream_fd; /* stream left open by npk_map_prefix, + 1 (0: none) */
} npk_mapped;

/* Map `path` read-only. "-" reads standard input (mapped when it is a
 * regular file). Streams are read up to NPK_MAX_INPUT_SIZE. */
npk_status npk_map_file(const char *path, npk_mapped *m, npk_error *err);
/* For detection and summaries of inputs that may be endless (pipes, devices):
 * a regular file is mapped whole (m->complete); a stream is read only up to
 * `prefix` bytes, and m->complete says whether it ended there. */
npk_status npk_map_prefix(const char *path, npk_mapped *m, size_t prefix, npk_error *err);
/* Read the rest of a stream opened by npk_map_prefix (no-op when complete). */
npk_status npk_map_rest(npk_mapped *m, npk_error *err);
void npk_unmap_file(npk_mapped *m);

/* For a SIGBUS handler: the input mapping that holds `addr` (a file truncated
 * by another process while it was mapped). Async-signal-safe; the path
 * stays valid until the mapping is unmapped. false if no mapping holds it. */
bool npk_mapped_fault(const void *addr, const char **path, uint64_t *offset);

/* Keep every file mapped from now on protected even after it is unmapped, for
 * the rest of the process (the CLI turns this on: an input is never replaced). */
void npk_protect_inputs_until_exit(bool on);

/* Also refuse outputs onto this path (for inputs read without npk_map_file). */
npk_status npk_protect_path(const char *path, npk_error *err);

/* ---- single-file outputs ---- */

typedef struct npk_out npk_out;

npk_status npk_out_open(npk_out **out, const char *path, npk_error *err);
npk_status npk_out_write(npk_out *out, const void *data, size_t n, npk_error *err);
/* Flush, fsync, rename into place and free `out` (also on failure). */
npk_status npk_out_commit(npk_out *out, npk_error *err);
/* Remove the temporary file and free `out`. Safe with NULL. (An output
 * written in place, to a device, FIFO or standard output, keeps what was
 * written.) */
void npk_out_abort(npk_out *out);

/* Convenience: write a whole buffer atomically. */
npk_status npk_write_file(const char *path, const void *data, size_t n, npk_error *err);

/* NPK_E_LIMIT when an output of `bytes` would exceed NPK_MAX_OUTPUT_SIZE
 * (npk_out_write enforces it; writers that know the size check it first). */
npk_status npk_check_output_size(uint64_t bytes, npk_error *err);

/* The descriptor "-" writes to (default 1). A front end that prints its own
 * messages on standard output moves them elsewhere first and passes the
 * saved descriptor of the real standard output here. */
void npk_set_stdout_fd(int fd);

/* Create a directory if it does not exist yet (one level). To write files
 * into a directory, use an output-directory transaction (below) instead. */
npk_status npk_make_dir(const char *path, npk_error *err);

/* ---- multi-file outputs: an output directory, all or nothing ----
 *
 * Every command that writes several files writes them through one of these
 * transactions, so a failure (or a signal) never leaves an incomplete set:
 *
 *     npk_outdir *d;
 *     if (npk_outdir_open(&d, "outs", err)) return ...;   // nothing visible yet
 *     char name[NPK_OUTDIR_NAME_MAX + 1];
 *     npk_outdir_name(d, "concat/split0", ".npy", name, sizeof name);
 *     st = npk_outdir_write(d, name, bytes, len, err);     // "concat_split0.npy"
 *     ...
 *     if (st) npk_outdir_abort(d); else st = npk_outdir_commit(d, err);
 *
 * Files go to a hidden staging directory beside the target (".DIR.XXXXXX").
 * Commit renames it to DIR when DIR does not exist (or is empty): the set
 * appears in one step. Into an existing directory the files are moved one by
 * one (each atomically, with SIGINT/SIGTERM/SIGHUP held back meanwhile), and
 * other files there are left alone. Abort removes the staging directory. */

typedef struct npk_outdir npk_outdir;

/* Longest name npk_outdir_name() makes: short enough that a temporary
 * ".NAME.XXXXXX" beside the file still fits NAME_MAX (255). */
#define NPK_OUTDIR_NAME_MAX 239

npk_status npk_outdir_open(npk_outdir **d, const char *path, npk_error *err);
/* A file name for `label` (a tensor or layer name) ending in `ext`: bytes
 * outside [A-Za-z0-9._-] become '_', a leading '.' becomes '_', a name longer
 * than NPK_OUTDIR_NAME_MAX is cut and given "~" and 8 hex digits of a hash of
 * the whole label, and a name already used in this transaction gets "~2",
 * "~3", ... before `ext`. The name is reserved. cap >= NPK_OUTDIR_NAME_MAX + 1. */
npk_status npk_outdir_name(npk_outdir *d, const char *label, const char *ext, char *name,
                           size_t cap, npk_error *err);
/* Write a whole file `name` (a plain file name) into the set. */
npk_status npk_outdir_write(npk_outdir *d, const char *name, const void *data, size_t n,
                            npk_error *err);
/* Or stream it: an npk_out for `name`, finished with npk_out_commit/abort. */
npk_status npk_outdir_file(npk_outdir *d, const char *name, npk_out **out, npk_error *err);
/* The directory the set appears in at commit (DIR; a link to a directory is
 * followed): file `name` ends up as DIR/name. */
const char *npk_outdir_path(const npk_outdir *d);
/* Make the set visible and free `d` (also on failure, after cleaning up). */
npk_status npk_outdir_commit(npk_outdir *d, npk_error *err);
/* Remove everything written so far and free `d`. Safe with NULL. */
void npk_outdir_abort(npk_outdir *d);

/* ---- temporaries and signals ----
 * Remove every temporary file and staging directory that exists now.
 * Async-signal-safe: for a SIGINT/SIGTERM handler, which then re-raises the
 * signal with the default action. (The library installs no handler.) */
void npk_remove_temporaries(void);
/* A temporary file (dir = false) or directory of plain files (dir = true)
 * made by the caller, to be removed by npk_remove_temporaries() while it is
 * registered (the library's own are registered already). Returns a token
 * for npk_temp_unregister() (0 when the table is full: the temporary then
 * works, but a signal would leave it behind). */
int npk_temp_register(const char *path, bool dir);
void npk_temp_unregister(int token);

#ifdef __cplusplus
}
#endif
#endif
