#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npukit/checked.h"
#include "npukit/file.h"

/* ---- registry of open inputs (dev, ino), so outputs never replace them ---- */

#define MAX_PROTECTED 1024

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t dev, ino;
    int refs;
} reg[MAX_PROTECTED];

static int sticky; /* keep inputs protected after they are unmapped */

void npk_protect_inputs_until_exit(bool on)
{
    sticky = on;
}

static int reg_add(uint64_t dev, uint64_t ino)
{
    int ok = 0;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < MAX_PROTECTED; i++)
        if (reg[i].refs && reg[i].dev == dev && reg[i].ino == ino) {
            reg[i].refs++;
            ok = 1;
            goto out;
        }
    for (int i = 0; i < MAX_PROTECTED; i++)
        if (!reg[i].refs) {
            reg[i].dev = dev;
            reg[i].ino = ino;
            reg[i].refs = 1;
            ok = 1;
            break;
        }
out:
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

static void reg_del(uint64_t dev, uint64_t ino)
{
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < MAX_PROTECTED; i++)
        if (reg[i].refs && reg[i].dev == dev && reg[i].ino == ino) {
            reg[i].refs--;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

static int reg_has(uint64_t dev, uint64_t ino)
{
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < MAX_PROTECTED; i++)
        if (reg[i].refs && reg[i].dev == dev && reg[i].ino == ino) found = 1;
    pthread_mutex_unlock(&reg_lock);
    return found;
}

npk_status npk_protect_path(const char *path, npk_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return NPK_OK; /* nothing there to protect */
    if (!reg_add((uint64_t)st.st_dev, (uint64_t)st.st_ino))
        return npk_fail(err, NPK_E_LIMIT, "too many open inputs");
    return NPK_OK;
}

/* ---- input mapping ---- */

static npk_status read_all(int fd, npk_mapped *m, npk_error *err)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (;;) {
        if (len == cap) {
            uint64_t grown = (uint64_t)cap * 2;
            if (cap > SIZE_MAX / 2 || grown > NPK_MAX_INPUT_SIZE) {
                free(buf);
                return npk_fail(err, NPK_E_LIMIT, "input larger than 4 GiB");
            }
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return npk_fail(err, NPK_E_NOMEM, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            return npk_fail(err, NPK_E_IO, "%s", strerror(e));
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    m->heap = buf;
    m->data = buf;
    m->size = len;
    return NPK_OK;
}

static const uint8_t empty_input[1];

npk_status npk_map_file(const char *path, npk_mapped *m, npk_error *err)
{
    memset(m, 0, sizeof *m);
    if (!path) return npk_fail(err, NPK_E_ARG, "no input path");
    if (strcmp(path, "-") == 0) return read_all(STDIN_FILENO, m, err);

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return npk_fail(err, NPK_E_IO, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return npk_fail(err, NPK_E_IO, "%s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return npk_fail(err, NPK_E_IO, "is a directory");
    }
    npk_status rc = NPK_OK;
    if (S_ISREG(st.st_mode)) {
        size_t fsize;
        if ((uint64_t)st.st_size > NPK_MAX_INPUT_SIZE ||
            !npk_u64_to_sz((uint64_t)st.st_size, &fsize)) {
            close(fd);
            return npk_fail(err, NPK_E_LIMIT, "file of %lld bytes exceeds the 4 GiB input limit",
                            (long long)st.st_size);
        }
        if (st.st_size == 0) {
            m->data = empty_input;
            m->size = 0;
        } else {
            void *p = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                rc = read_all(fd, m, err);
            } else {
                m->map_base = p;
                m->map_len = fsize;
                m->data = p;
                m->size = fsize;
            }
        }
    } else {
        rc = read_all(fd, m, err);
    }
    close(fd);
    if (rc) return rc;
    m->dev = (uint64_t)st.st_dev;
    m->ino = (uint64_t)st.st_ino;
    m->registered = reg_add(m->dev, m->ino);
    if (!m->data) m->data = empty_input;
    return NPK_OK;
}

void npk_unmap_file(npk_mapped *m)
{
    if (!m) return;
    if (m->map_base) munmap(m->map_base, m->map_len);
    free(m->heap);
    if (m->registered && !sticky) reg_del(m->dev, m->ino);
    memset(m, 0, sizeof *m);
}

/* ---- atomic output ---- */

struct npk_out {
    int fd;
    char *path;
    char *tmp;
};

npk_status npk_out_open(npk_out **outp, const char *path, npk_error *err)
{
    *outp = NULL;
    if (!path || !*path) return npk_fail(err, NPK_E_ARG, "no output path");
    if (strcmp(path, "-") == 0)
        return npk_fail(err, NPK_E_ARG,
                        "writing binary output to standard output is not supported");
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return npk_fail(err, NPK_E_IO, "is a directory");
        if (reg_has((uint64_t)st.st_dev, (uint64_t)st.st_ino))
            return npk_fail(err, NPK_E_ARG, "refusing to overwrite an input file");
    }
    npk_out *o = calloc(1, sizeof *o);
    size_t n = strlen(path);
    if (!o) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    o->path = malloc(n + 1);
    o->tmp = malloc(n + 32);
    if (!o->path || !o->tmp) {
        free(o->path);
        free(o->tmp);
        free(o);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    memcpy(o->path, path, n + 1);
    /* Temp file in the same directory so rename() is atomic: DIR/.NAME.XXXXXX */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    snprintf(o->tmp, n + 32, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        free(o->path);
        free(o->tmp);
        free(o);
        return npk_fail(err, NPK_E_IO, "cannot create output: %s", strerror(e));
    }
    /* mkstemp creates 0600; give the file the usual permissions. */
    mode_t um = umask(0);
    umask(um);
    fchmod(o->fd, 0666 & ~um);
    *outp = o;
    return NPK_OK;
}

npk_status npk_out_write(npk_out *o, const void *data, size_t n, npk_error *err)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t w = write(o->fd, p, n);
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

void npk_out_abort(npk_out *o)
{
    if (!o) return;
    close(o->fd);
    unlink(o->tmp);
    out_free(o);
}

npk_status npk_out_commit(npk_out *o, npk_error *err)
{
    if (!o) return npk_fail(err, NPK_E_ARG, "no output");
    struct stat st;
    /* Re-check: an input may have been opened since npk_out_open(). */
    if (stat(o->path, &st) == 0 && reg_has((uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
        npk_fail(err, NPK_E_ARG, "refusing to overwrite an input file");
        npk_out_abort(o);
        return NPK_E_ARG;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        npk_fail(err, NPK_E_IO, "fsync failed: %s", strerror(errno));
        npk_out_abort(o);
        return NPK_E_IO;
    }
    if (close(o->fd) != 0) {
        o->fd = -1;
        npk_fail(err, NPK_E_IO, "close failed: %s", strerror(errno));
        unlink(o->tmp);
        out_free(o);
        return NPK_E_IO;
    }
    if (rename(o->tmp, o->path) != 0) {
        npk_fail(err, NPK_E_IO, "rename failed: %s", strerror(errno));
        unlink(o->tmp);
        out_free(o);
        return NPK_E_IO;
    }
    out_free(o);
    return NPK_OK;
}

npk_status npk_write_file(const char *path, const void *data, size_t n, npk_error *err)
{
    npk_out *o;
    npk_status st = npk_out_open(&o, path, err);
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
