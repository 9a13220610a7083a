#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npk_test.h"

extern char **environ;

const char *npk_fixture_dir(void)
{
    const char *e = getenv("NPUKIT_FIXTURES");
    return e && *e ? e : NPK_FIXTURES_DEFAULT;
}

const char *npk_fixture_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", npk_fixture_dir(), rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

const char *npk_fixture_or_skip(const char *rel, const char *file, int line)
{
    const char *p = npk_fixture_path(rel);
    if (p) return p;
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) {
        fprintf(stderr, "%s:%d: fixture %s/%s is missing (required under CI)\n", file, line,
                npk_fixture_dir(), rel);
        fail_msg("missing fixture %s", rel);
    }
    fprintf(stdout, "[  SKIPPED ] fixture %s/%s not found (set NPUKIT_FIXTURES)\n",
            npk_fixture_dir(), rel);
    skip();
    return NULL;
}

void npk_need_feature(const char *name, const char *file, int line)
{
    size_t n = strlen(name);
    for (const char *f = npk_features(); (f = strstr(f, name)) != NULL; f += n)
        if ((f == npk_features() || f[-1] == ' ') && (f[n] == ' ' || f[n] == 0)) return;
#ifndef NPK_TEST_EMULATED
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) {
        fprintf(stderr, "%s:%d: this build lacks feature '%s' (required under CI)\n", file, line,
                name);
        fail_msg("missing feature %s", name);
    }
#endif
    fprintf(stdout, "[  SKIPPED ] %s:%d: this build lacks feature '%s'\n", file, line, name);
    skip();
}

void npk_fixture_map(const char *rel, npk_mapped *m)
{
    const char *p = NPK_FIXTURE(rel);
    npk_error err = {0};
    if (npk_map_file(p, m, &err)) fail_msg("cannot map %s: %s", p, err.msg);
}

/* ---- temporary files ---- */

static char tmpdir[256];

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void cleanup_tmp(void)
{
    if (tmpdir[0] && !getenv("NPK_KEEP_TMP")) rm_tree(tmpdir);
}

const char *npk_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/npktest.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "mkdtemp failed: %s\n", strerror(errno));
            abort();
        }
        atexit(cleanup_tmp);
    }
    return tmpdir;
}

/* Paths handed out stay valid until exit (tests keep many at once). */
static char *tmp_paths[4096];
static int tmp_count;

static void free_tmp_paths(void)
{
    for (int i = 0; i < tmp_count; i++) free(tmp_paths[i]);
    tmp_count = 0;
}

const char *npk_tmp(const char *name)
{
    char b[1024];
    snprintf(b, sizeof b, "%s/%s", npk_tmpdir(), name);
    for (int i = 0; i < tmp_count; i++)
        if (!strcmp(tmp_paths[i], b)) return tmp_paths[i];
    if (tmp_count == 0) atexit(free_tmp_paths);
    if (tmp_count >= 4096) abort();
    tmp_paths[tmp_count] = strdup(b);
    return tmp_paths[tmp_count++];
}

uint8_t *npk_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b) {
        uint8_t *nb = realloc(b, n + 1);
        if (nb) b = nb;
        b[n] = 0;
    }
    *len = n;
    return b;
}

int npk_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- running programs ---- */

static char *read_fd_all(int fd)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) b = realloc(b, cap *= 2);
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    b[n] = 0;
    return b;
}

npk_run npk_run_argv(char *const argv[])
{
    npk_run r = {-1, NULL, NULL};
    char outp[1024], errp[1024];
    snprintf(outp, sizeof outp, "%s", npk_tmp(".run.out"));
    snprintf(errp, sizeof errp, "%s", npk_tmp(".run.err"));
    fflush(stdout);
    fflush(stderr);
    /* posix_spawn rather than fork: it also works under qemu-user (cross tests). */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        r.status = 127;
        r.out = strdup("");
        r.err = strdup(strerror(rc));
        return r;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    int fo = open(outp, O_RDONLY), fe = open(errp, O_RDONLY);
    r.out = read_fd_all(fo);
    r.err = read_fd_all(fe);
    close(fo);
    close(fe);
    unlink(outp);
    unlink(errp);
    return r;
}

npk_run npk_cli(const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *argv[256];
    int n = 0;
    const char *cli = getenv("NPK_CLI_OVERRIDE");
    argv[n++] = (char *)(cli && *cli ? cli : NPK_CLI);
    for (char *tok = strtok(line, " "); tok && n < 255; tok = strtok(NULL, " ")) argv[n++] = tok;
    argv[n] = NULL;
    return npk_run_argv(argv);
}

void npk_run_free(npk_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

npk_run npk_python(const char *script, const char *arg)
{
    char *argv[] = {(char *)NPK_PYTHON, "-c", (char *)script, (char *)arg, NULL};
    npk_run r = npk_run_argv(argv);
    if (r.status == 0 || !strstr(r.err, "No module named")) return r;
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) fail_msg("python3 module missing: %s", r.err);
    print_message("[  SKIPPED ] python3 module missing: %s\n", r.err);
    npk_run_free(&r);
    skip();
    return r;
}

int npk_test_light(void)
{
#ifdef NPK_TEST_EMULATED
    return 1;
#else
    const char *e = getenv("NPK_TEST_LIGHT");
    return e && *e == '1';
#endif
}

uint64_t npk_rand(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

double npk_randf(uint64_t *s)
{
    return (double)(npk_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

void npk_sha256_hex(const void *data, size_t len, char out[65])
{
    const char *p = npk_tmp(".sha.bin");
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, len, f) != len) fail_msg("cannot write %s", p);
    fclose(f);
    char *argv[] = {"/usr/bin/sha256sum", (char *)p, NULL};
    npk_run r = npk_run_argv(argv);
    if (r.status != 0 || strlen(r.out) < 64) fail_msg("sha256sum failed");
    memcpy(out, r.out, 64);
    out[64] = 0;
    npk_run_free(&r);
    unlink(p);
}
