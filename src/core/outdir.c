/* Output directories written all or nothing: files are staged in a hidden
 * directory beside the target and appear together at commit (file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npukit/file.h"
#include "file_internal.h"

struct npk_outdir {
    char *path;    /* the target directory */
    char *staging; /* the hidden directory the files are written to */
    int temp_slot;
    char **names; /* names reserved or written, in order */
    bool *written;
    size_t count, cap;
};

static void outdir_free(npk_outdir *d)
{
    for (size_t i = 0; i < d->count; i++) free(d->names[i]);
    free(d->names);
    free(d->written);
    free(d->path);
    free(d->staging);
    free(d);
}

npk_status npk_outdir_open(npk_outdir **dp, const char *path, npk_error *err)
{
    *dp = NULL;
    if (!path || !*path) return npk_fail(err, NPK_E_ARG, "no output directory");
    if (!strcmp(path, "-"))
        return npk_fail(err, NPK_E_ARG, "several files cannot go to standard output");
    struct stat st, lst;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        return npk_fail(err, NPK_E_IO, "exists and is not a directory");
    npk_outdir *d = calloc(1, sizeof *d);
    if (!d) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--; /* "outs/" -> "outs" */
    d->path = strndup(path, n);
    if (d->path && lstat(d->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* A link to a directory: the files go to the directory it names. */
        free(d->path);
        d->path = realpath(path, NULL);
    }
    const char *slash = d->path ? strrchr(d->path, '/') : NULL;
    size_t dirlen = slash ? (size_t)(slash - d->path + 1) : 0;
    size_t blen = d->path ? strlen(d->path + dirlen) : 0;
    if (blen > NAME_MAX - 8) blen = NAME_MAX - 8; /* "." + ".XXXXXX" must fit NAME_MAX */
    size_t sn = dirlen + blen + 9;
    d->staging = d->path ? malloc(sn) : NULL;
    if (!d->staging) {
        outdir_free(d);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    snprintf(d->staging, sn, "%.*s.%.*s.XXXXXX", (int)dirlen, d->path, (int)blen, d->path + dirlen);
    if (!mkdtemp(d->staging)) {
        int e = errno;
        outdir_free(d);
        return npk_fail(err, NPK_E_IO, "cannot create output directory: %s", strerror(e));
    }
    d->temp_slot = npk_temp_register(d->staging, true);
    *dp = d;
    return NPK_OK;
}

const char *npk_outdir_path(const npk_outdir *d)
{
    return d->path;
}

static bool reserved(const npk_outdir *d, const char *name)
{
    for (size_t i = 0; i < d->count; i++)
        if (!strcmp(d->names[i], name)) return true;
    return false;
}

static npk_status reserve(npk_outdir *d, const char *name, npk_error *err)
{
    if (d->count == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 16;
        char **nn = realloc(d->names, nc * sizeof *nn);
        if (!nn) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        d->names = nn;
        bool *nw = realloc(d->written, nc * sizeof *nw);
        if (!nw) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        d->written = nw;
        d->cap = nc;
    }
    if (!(d->names[d->count] = strdup(name))) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    d->written[d->count++] = false;
    return NPK_OK;
}

/* 32-bit FNV-1a: a short, stable tag for a label that had to be cut. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

npk_status npk_outdir_name(npk_outdir *d, const char *label, const char *ext, char *name,
                           size_t cap, npk_error *err)
{
    if (!ext) ext = "";
    size_t elen = strlen(ext);
    if (cap < NPK_OUTDIR_NAME_MAX + 1 || elen + 20 > NPK_OUTDIR_NAME_MAX)
        return npk_fail(err, NPK_E_ARG, "output name buffer too small");
    /* Room for the stem, keeping space for a "~N" that makes it unique. */
    size_t room = NPK_OUTDIR_NAME_MAX - elen - 8, k = 0;
    char stem[NPK_OUTDIR_NAME_MAX + 1];
    const char *s = label ? label : "";
    for (; s[k] && k < room; k++) {
        char c = s[k];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        stem[k] = ok && !(k == 0 && c == '.') ? c : '_';
    }
    if (s[k]) { /* too long: cut, and tell apart labels that share the cut part */
        k = room - 9;
        snprintf(stem + k, sizeof stem - k, "~%08x", (unsigned)fnv1a(s));
        k += 9;
    }
    if (k == 0) stem[k++] = '_';
    stem[k] = 0;
    snprintf(name, cap, "%s%s", stem, ext);
    for (unsigned i = 2; reserved(d, name); i++) snprintf(name, cap, "%s~%u%s", stem, i, ext);
    return reserve(d, name, err);
}

static npk_status check_name(const char *name, npk_error *err)
{
    size_t n = strlen(name);
    if (!n || n > NAME_MAX || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return npk_fail(err, NPK_E_ARG, "'%.64s' is not a plain file name of at most %d bytes",
                        name, NAME_MAX);
    return NPK_OK;
}

npk_status npk_outdir_file(npk_outdir *d, const char *name, npk_out **out, npk_error *err)
{
    *out = NULL;
    npk_status st = check_name(name, err);
    if (st) return st;
    size_t i = 0;
    while (i < d->count && strcmp(d->names[i], name)) i++;
    if (i == d->count && (st = reserve(d, name, err))) return st;
    if (d->written[i])
        return npk_fail(err, NPK_E_ARG, "%s is written twice in one output directory", name);
    size_t pn = strlen(d->staging) + strlen(name) + 2;
    char *p = malloc(pn);
    if (!p) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    snprintf(p, pn, "%s/%s", d->staging, name);
    mode_t um = umask(0);
    umask(um);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666 & ~um);
    if (fd < 0) {
        int e = errno;
        free(p);
        return npk_fail(err, NPK_E_IO, "cannot create %s: %s", name, strerror(e));
    }
    st = npk_out_from_fd(fd, p, out, err);
    free(p);
    if (!st) d->written[i] = true;
    return st;
}

npk_status npk_outdir_write(npk_outdir *d, const char *name, const void *data, size_t n,
                            npk_error *err)
{
    npk_out *o;
    npk_status st = npk_check_output_size(n, err);
    if (!st) st = npk_outdir_file(d, name, &o, err);
    if (st) return st;
    if ((st = npk_out_write(o, data, n, err))) {
        npk_out_abort(o);
        return st;
    }
    return npk_out_commit(o, err);
}

static void remove_staged(npk_outdir *d)
{
    char p[PATH_MAX];
    for (size_t i = 0; i < d->count; i++) {
        if (!d->written[i]) continue;
        snprintf(p, sizeof p, "%s/%s", d->staging, d->names[i]);
        unlink(p);
    }
    rmdir(d->staging);
}

void npk_outdir_abort(npk_outdir *d)
{
    if (!d) return;
    remove_staged(d);
    npk_temp_unregister(d->temp_slot);
    outdir_free(d);
}

/* Move the files into an existing directory one by one, with the usual
 * termination signals held back so the moves are not interrupted halfway. */
static npk_status merge(npk_outdir *d, npk_error *err)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    npk_status st = NPK_OK;
    char from[PATH_MAX], to[PATH_MAX];
    /* First check every target, so a refusal moves nothing. */
    for (size_t i = 0; i < d->count && !st; i++) {
        struct stat s;
        if (!d->written[i]) continue;
        snprintf(to, sizeof to, "%s/%s", d->path, d->names[i]);
        if (stat(to, &s) == 0 && (S_ISDIR(s.st_mode) || !S_ISREG(s.st_mode) ||
                                  npk_input_protected((uint64_t)s.st_dev, (uint64_t)s.st_ino)))
            st = npk_fail(err, NPK_E_ARG, "%s: %s", to,
                          S_ISDIR(s.st_mode)   ? "is a directory"
                          : S_ISREG(s.st_mode) ? "refusing to overwrite an input file"
                                               : "is not a regular file");
    }
    for (size_t i = 0; i < d->count && !st; i++) {
        if (!d->written[i]) continue;
        snprintf(from, sizeof from, "%s/%s", d->staging, d->names[i]);
        snprintf(to, sizeof to, "%s/%s", d->path, d->names[i]);
        if (rename(from, to) != 0) st = npk_fail(err, NPK_E_IO, "%s: %s", to, strerror(errno));
    }
    if (!st) rmdir(d->staging);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return st;
}

npk_status npk_outdir_commit(npk_outdir *d, npk_error *err)
{
    if (!d) return npk_fail(err, NPK_E_ARG, "no output directory");
    mode_t um = umask(0);
    umask(um);
    chmod(d->staging, 0777 & ~um); /* mkdtemp made it 0700 */
    npk_status st = NPK_OK;
    struct stat s;
    if (rename(d->staging, d->path) != 0) {
        /* DIR exists and is not empty (or appeared meanwhile): move the files in. */
        if ((errno == EEXIST || errno == ENOTEMPTY) && stat(d->path, &s) == 0 && S_ISDIR(s.st_mode))
            st = merge(d, err);
        else
            st = npk_fail(err, NPK_E_IO, "cannot create the output directory: %s", strerror(errno));
    }
    if (st) remove_staged(d);
    npk_temp_unregister(d->temp_slot);
    outdir_free(d);
    return st;
}
