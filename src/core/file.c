/* Inputs: mapping (or reading) files and streams, and the registry of open
 * inputs that outputs must never replace. Outputs are in output.c and
 * outdir.c, temporaries in temps.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npukit/checked.h"
#include "npukit/file.h"
#include "file_internal.h"

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

bool npk_input_protected(uint64_t dev, uint64_t ino)
{
    bool found = false;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < MAX_PROTECTED; i++)
        if (reg[i].refs && reg[i].dev == dev && reg[i].ino == ino) found = true;
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

/* ---- mapped regions, for naming the file behind a SIGBUS ----
 * Fixed slots with the path stored inline: the lookup runs in a signal
 * handler, so it must not follow pointers that another thread may free. */

#define MAP_SLOTS 32
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };
static struct {
    atomic_int state;
    const uint8_t *base;
    size_t len;
    char path[PATH_MAX];
} maps[MAP_SLOTS];

static int map_slot_add(const char *path, const void *base, size_t len)
{
    size_t n = strlen(path);
    if (n >= PATH_MAX) return 0;
    for (int i = 0; i < MAP_SLOTS; i++) {
        int want = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&maps[i].state, &want, SLOT_BUSY)) continue;
        maps[i].base = base;
        maps[i].len = len;
        memcpy(maps[i].path, path, n + 1);
        atomic_store(&maps[i].state, SLOT_LIVE);
        return i + 1;
    }
    return 0; /* table full: a fault there is reported without the file name */
}

bool npk_mapped_fault(const void *addr, const char **path, uint64_t *offset)
{
    const uint8_t *a = addr;
    for (int i = 0; i < MAP_SLOTS; i++) {
        if (atomic_load(&maps[i].state) != SLOT_LIVE) continue;
        if (a >= maps[i].base && a < maps[i].base + maps[i].len) {
            *path = maps[i].path;
            *offset = (uint64_t)(a - maps[i].base);
            return true;
        }
    }
    return false;
}

/* ---- input mapping ---- */

static const uint8_t empty_input[1];

/* Append from fd until EOF or until m->size reaches `stop` (a prefix);
 * more than NPK_MAX_INPUT_SIZE bytes is an error. */
static npk_status read_stream(int fd, npk_mapped *m, uint64_t stop, npk_error *err)
{
    uint8_t *buf = m->heap;
    size_t cap = m->heap_cap, len = m->size;
    for (;;) {
        if (len >= stop) return NPK_OK; /* prefix complete; the stream may go on */
        if (len == cap) {
            /* Grow by doubling, to one byte past the limit (to detect it). */
            uint64_t ncap = cap ? (uint64_t)cap * 2 : 1 << 16;
            if (ncap > NPK_MAX_INPUT_SIZE + 1) ncap = NPK_MAX_INPUT_SIZE + 1;
            if (ncap > SIZE_MAX) ncap = SIZE_MAX;
            if (ncap <= cap) return npk_fail(err, NPK_E_NOMEM, "out of memory reading the input");
            uint8_t *nb = realloc(buf, (size_t)ncap);
            if (!nb) return npk_fail(err, NPK_E_NOMEM, "out of memory reading the input");
            buf = m->heap = nb;
            m->data = nb;
            cap = m->heap_cap = (size_t)ncap;
        }
        size_t want = cap - len;
        if ((uint64_t)want > stop - len) want = (size_t)(stop - len);
        ssize_t r = read(fd, buf + len, want);
        if (r < 0) {
            if (errno == EINTR) continue;
            return npk_fail(err, NPK_E_IO, "%s", strerror(errno));
        }
        if (r == 0) {
            m->complete = true;
            return NPK_OK;
        }
        len += (size_t)r;
        m->size = len;
        /* A 64-bit copy: on 32-bit targets size_t cannot exceed the limit,
           and comparing it directly warns (-Wtype-limits). */
        const uint64_t total = len;
        if (total > NPK_MAX_INPUT_SIZE)
            return npk_fail(err, NPK_E_LIMIT,
                            "input stream longer than the 4 GiB input limit (%llu bytes read)",
                            (unsigned long long)len);
    }
}

/* Map a regular file whole: the pages are read on demand, so the cost is
 * what the reader touches. */
static npk_status map_regular(int fd, const char *path, const struct stat *st, npk_mapped *m,
                              npk_error *err)
{
    size_t fsize;
    if ((uint64_t)st->st_size > NPK_MAX_INPUT_SIZE || !npk_u64_to_sz((uint64_t)st->st_size, &fsize))
        return npk_fail(err, NPK_E_LIMIT,
                        "file of %llu bytes exceeds the 4 GiB input limit (%llu bytes)",
                        (unsigned long long)st->st_size, (unsigned long long)NPK_MAX_INPUT_SIZE);
    m->complete = true;
    if (fsize == 0) {
        m->data = empty_input;
        return NPK_OK;
    }
    void *p = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) { /* e.g. a file system without mmap */
        m->complete = false;
        return read_stream(fd, m, UINT64_MAX, err);
    }
    m->map_base = p;
    m->map_len = fsize;
    m->data = p;
    m->size = fsize;
    m->map_slot = map_slot_add(path, p, fsize);
    return NPK_OK;
}

static npk_status open_input(const char *path, npk_mapped *m, uint64_t prefix, npk_error *err)
{
    memset(m, 0, sizeof *m);
    if (!path) return npk_fail(err, NPK_E_ARG, "no input path");
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return npk_fail(err, NPK_E_IO, "%s", strerror(errno));
    struct stat st;
    npk_status rc = NPK_OK;
    if (fstat(fd, &st) != 0) {
        rc = npk_fail(err, NPK_E_IO, "%s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        rc = npk_fail(err, NPK_E_IO, "is a directory");
    } else if (S_ISREG(st.st_mode) && (!is_stdin || lseek(fd, 0, SEEK_CUR) == 0)) {
        /* A file, also as standard input ("< file"): mapped, and protected
         * like any named input. */
        rc = map_regular(fd, is_stdin ? "standard input" : path, &st, m, err);
        m->dev = (uint64_t)st.st_dev;
        m->ino = (uint64_t)st.st_ino;
        if (!rc) m->registered = reg_add(m->dev, m->ino);
    } else {
        rc = read_stream(fd, m, prefix, err);
        if (!rc && !m->complete) {
            m->stream_fd = fd + 1; /* npk_map_rest continues from here */
            fd = -1;
        }
        if (!rc && S_ISREG(st.st_mode)) {
            m->dev = (uint64_t)st.st_dev;
            m->ino = (uint64_t)st.st_ino;
            m->registered = reg_add(m->dev, m->ino);
        }
    }
    if (fd >= 0 && !is_stdin) close(fd);
    if (rc) {
        npk_unmap_file(m);
        return rc;
    }
    if (!m->data) m->data = empty_input;
    return NPK_OK;
}

npk_status npk_map_file(const char *path, npk_mapped *m, npk_error *err)
{
    return open_input(path, m, UINT64_MAX, err);
}

npk_status npk_map_prefix(const char *path, npk_mapped *m, size_t prefix, npk_error *err)
{
    return open_input(path, m, prefix, err);
}

npk_status npk_map_rest(npk_mapped *m, npk_error *err)
{
    if (m->complete || !m->stream_fd) return NPK_OK;
    int fd = m->stream_fd - 1;
    npk_status st = read_stream(fd, m, UINT64_MAX, err);
    if (fd != STDIN_FILENO) close(fd);
    m->stream_fd = 0;
    if (!m->data) m->data = empty_input;
    return st;
}

void npk_unmap_file(npk_mapped *m)
{
    if (!m) return;
    if (m->map_slot) atomic_store(&maps[m->map_slot - 1].state, SLOT_FREE);
    if (m->map_base) munmap(m->map_base, m->map_len);
    if (m->stream_fd && m->stream_fd - 1 != STDIN_FILENO) close(m->stream_fd - 1);
    free(m->heap);
    if (m->registered && !sticky) reg_del(m->dev, m->ino);
    memset(m, 0, sizeof *m);
}
