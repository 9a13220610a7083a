/* Single-file outputs: where the bytes go depends on what the path names
 * (see file.h): a temporary file renamed over a regular file, the target of
 * a symbolic link, a device or FIFO written in place, or standard output. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npukit/file.h"
#include "file_internal.h"

typedef enum out_kind {
    OUT_ATOMIC, /* temporary file, renamed at commit */
    OUT_DIRECT, /* a new file in a private staging directory (outdir.c) */
    OUT_INPLACE /* a character device, FIFO or standard output */
} out_kind;

struct npk_out {
    out_kind kind;
    int fd;
    bool close_fd; /* false for standard output */
    char *path;    /* where the bytes end up (a link's target, not the link) */
    char *tmp;     /* OUT_ATOMIC: the temporary file */
    int temp_slot;
    uint64_t written;
};

static int stdout_fd = STDOUT_FILENO;
static atomic_int stdout_used;

void npk_set_stdout_fd(int fd)
{
    stdout_fd = fd;
}

npk_status npk_check_output_size(uint64_t bytes, npk_error *err)
{
    if (bytes > NPK_MAX_OUTPUT_SIZE)
        return npk_fail(err, NPK_E_LIMIT,
                        "output of %llu bytes exceeds the 4 GiB output limit (%llu bytes)",
                        (unsigned long long)bytes, (unsigned long long)NPK_MAX_OUTPUT_SIZE);
    return NPK_OK;
}

npk_status npk_write_all(int fd, const void *data, size_t n, npk_error *err)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return npk_fail(err, NPK_E_IO, "write failed: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return NPK_OK;
}

static void out_free(npk_out *o)
{
    free(o->path);
    free(o->tmp);
    free(o);
}

static npk_out *out_new(out_kind kind, const char *path)
{
    npk_out *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->kind = kind;
    o->fd = -1;
    o->close_fd = true;
    o->path = strdup(path);
    if (!o->path) {
        free(o);
        return NULL;
    }
    return o;
}

/* Where a path leads: a symbolic link is followed to its target, which must
 * exist (as cp does, a dangling link is not written through). *target is
 * malloc'd; *st describes it (st_mode 0 when nothing is there). */
static npk_status resolve(const char *path, char **target, struct stat *st, npk_error *err)
{
    *target = NULL;
    memset(st, 0, sizeof *st);
    struct stat lst;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT) return npk_fail(err, NPK_E_IO, "%s", strerror(errno));
        *target = strdup(path);
        return *target ? NPK_OK : npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    if (!S_ISLNK(lst.st_mode)) {
        *st = lst;
        *target = strdup(path);
        return *target ? NPK_OK : npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    if (stat(path, st) != 0)
        return npk_fail(err, NPK_E_IO,
                        "is a symbolic link to a missing file (not written through: %s)",
                        strerror(errno));
    *target = realpath(path, NULL);
    if (!*target) return npk_fail(err, NPK_E_IO, "cannot follow the link: %s", strerror(errno));
    return NPK_OK;
}

/* "DIR/.NAME.XXXXXX" beside path, with NAME cut so the whole component
 * fits NAME_MAX whatever the length of the output's own name. */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = path + dirlen;
    size_t blen = strlen(base), room = NAME_MAX - 8; /* "." + ".XXXXXX" */
    if (blen > room) blen = room;
    size_t n = dirlen + blen + 9;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%.*s.%.*s.XXXXXX", (int)dirlen, path, (int)blen, base);
    return t;
}

static npk_status open_stdout(npk_out **outp, npk_error *err)
{
    int was = 0;
    if (!atomic_compare_exchange_strong(&stdout_used, &was, 1))
        return npk_fail(err, NPK_E_ARG, "standard output already receives another output");
    npk_out *o = out_new(OUT_INPLACE, "-");
    if (!o) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    o->fd = stdout_fd;
    o->close_fd = false;
    *outp = o;
    return NPK_OK;
}

/* Devices and FIFOs are written where they are: renaming over them would
 * replace e.g. /dev/null with a regular file. */
static npk_status open_in_place(const char *target, const struct stat *st, npk_out **outp,
                                npk_error *err)
{
    if (S_ISBLK(st->st_mode))
        return npk_fail(err, NPK_E_ARG,
                        "is a block device: npukit writes regular files, character devices "
                        "and FIFOs only");
    if (S_ISSOCK(st->st_mode)) return npk_fail(err, NPK_E_ARG, "is a socket: cannot write to it");
    int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return npk_fail(err, NPK_E_IO, "cannot open output: %s", strerror(errno));
    npk_out *o = out_new(OUT_INPLACE, target);
    if (!o) {
        close(fd);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    o->fd = fd;
    *outp = o;
    return NPK_OK;
}

npk_status npk_out_open(npk_out **outp, const char *path, npk_error *err)
{
    *outp = NULL;
    if (!path || !*path) return npk_fail(err, NPK_E_ARG, "no output path");
    if (strcmp(path, "-") == 0) return open_stdout(outp, err);
    char *target;
    struct stat st;
    npk_status rc = resolve(path, &target, &st, err);
    if (rc) return rc;
    bool exists = st.st_mode != 0;
    if (exists && npk_input_protected((uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
        free(target);
        return npk_fail(err, NPK_E_ARG, "refusing to overwrite an input file");
    }
    if (exists && S_ISDIR(st.st_mode)) {
        free(target);
        return npk_fail(err, NPK_E_IO, "is a directory");
    }
    if (exists && !S_ISREG(st.st_mode)) {
        rc = open_in_place(target, &st, outp, err);
        free(target);
        return rc;
    }
    npk_out *o = out_new(OUT_ATOMIC, target);
    free(target);
    if (!o || !(o->tmp = temp_name(o->path))) {
        if (o) out_free(o);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        out_free(o);
        return npk_fail(err, NPK_E_IO, "cannot create output: %s", strerror(e));
    }
    o->temp_slot = npk_temp_register(o->tmp, false);
    if (exists) {
        /* Replacing a file: keep its permissions, and owner and group where
         * we may (root); set-id bits only survive with the owner. */
        mode_t mode = st.st_mode & 07777;
        if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(o->fd, st.st_uid, st.st_gid) != 0)
            mode &= 0777;
        fchmod(o->fd, mode);
    } else {
        /* mkstemp creates 0600; a new file gets the usual permissions. */
        mode_t um = umask(0);
        umask(um);
        fchmod(o->fd, 0666 & ~um);
    }
    *outp = o;
    return NPK_OK;
}

npk_status npk_out_from_fd(int fd, const char *path, npk_out **outp, npk_error *err)
{
    npk_out *o = out_new(OUT_DIRECT, path);
    if (!o) {
        close(fd);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    o->fd = fd;
    *outp = o;
    return NPK_OK;
}

npk_status npk_out_write(npk_out *o, const void *data, size_t n, npk_error *err)
{
    npk_status st = npk_check_output_size(o->written + n, err);
    if (st) return st;
    st = npk_write_all(o->fd, data, n, err);
    if (!st) o->written += n;
    return st;
}

void npk_out_abort(npk_out *o)
{
    if (!o) return;
    if (o->close_fd && o->fd >= 0) close(o->fd);
    if (o->kind == OUT_ATOMIC) unlink(o->tmp);
    if (o->kind == OUT_DIRECT) unlink(o->path);
    npk_temp_unregister(o->temp_slot);
    out_free(o);
}

npk_status npk_out_commit(npk_out *o, npk_error *err)
{
    if (!o) return npk_fail(err, NPK_E_ARG, "no output");
    if (o->kind == OUT_INPLACE) {
        int rc = o->close_fd ? close(o->fd) : 0;
        o->fd = -1;
        npk_status st = rc ? npk_fail(err, NPK_E_IO, "close failed: %s", strerror(errno)) : NPK_OK;
        out_free(o);
        return st;
    }
    struct stat st;
    /* Re-check: an input may have been opened since npk_out_open(). */
    if (o->kind == OUT_ATOMIC && stat(o->path, &st) == 0 &&
        npk_input_protected((uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
        npk_fail(err, NPK_E_ARG, "refusing to overwrite an input file");
        npk_out_abort(o);
        return NPK_E_ARG;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        npk_fail(err, NPK_E_IO, "fsync failed: %s", strerror(errno));
        npk_out_abort(o);
        return NPK_E_IO;
    }
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0) {
        npk_fail(err, NPK_E_IO, "close failed: %s", strerror(errno));
        npk_out_abort(o);
        return NPK_E_IO;
    }
    if (o->kind == OUT_ATOMIC && rename(o->tmp, o->path) != 0) {
        npk_fail(err, NPK_E_IO, "rename failed: %s", strerror(errno));
        npk_out_abort(o);
        return NPK_E_IO;
    }
    npk_temp_unregister(o->temp_slot);
    out_free(o);
    return NPK_OK;
}

npk_status npk_write_file(const char *path, const void *data, size_t n, npk_error *err)
{
    npk_out *o;
    npk_status st = npk_check_output_size(n, err);
    if (st) return st;
    st = npk_out_open(&o, path, err);
    if (st) return st;
    st = npk_out_write(o, data, n, err);
    if (st) {
        npk_out_abort(o);
        return st;
    }
    return npk_out_commit(o, err);
}

npk_status npk_make_dir(const char *path, npk_error *err)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return NPK_OK;
        return npk_fail(err, NPK_E_IO, "exists and is not a directory");
    }
    return npk_fail(err, NPK_E_IO, "cannot create directory: %s", strerror(errno));
}
