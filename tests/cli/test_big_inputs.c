/* Memory and time on big or endless inputs: `info /dev/zero` ends at once
 * with a clear message, and `info` / `tensor info` on 2 GiB (sparse) files
 * with valid headers read only their headers. Each run is measured with
 * wait4() (peak resident memory of that process alone). */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "npk_test.h"

extern char **environ;

typedef struct measured {
    int status;
    long max_rss_kb;
    double seconds;
} measured;

/* Run the CLI with argv (NULL-terminated, without the program), output to /dev/null. */
static measured run_measured(const char *const *args)
{
    const char *argv[16] = {NPK_CLI};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid;
    if (posix_spawn(&pid, NPK_CLI, &fa, NULL, (char *const *)argv, environ) != 0)
        fail_msg("cannot run %s", NPK_CLI);
    posix_spawn_file_actions_destroy(&fa);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) fail_msg("wait4");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    measured m = {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ru.ru_maxrss,
                  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9};
    return m;
}

/* Was: 4 GiB read into memory before refusing (4.2 GB resident, 8 s). */
static void test_info_dev_zero(void **state)
{
    (void)state;
    if (npk_test_light()) skip(); /* under qemu the numbers mean nothing */
    const char *args[] = {"info", "/dev/zero", NULL};
    measured m = run_measured(args);
    assert_int_equal(m.status, 2);
    assert_true(m.max_rss_kb < 64 * 1024);
    assert_true(m.seconds < 5);
    npk_run r = npk_cli("info /dev/zero");
    assert_non_null(strstr(r.err, "npukit: /dev/zero: offset 0x0: unrecognised format"));
    npk_run_free(&r);
}

static void sparse_file(const char *path, const void *head, size_t n, off_t total)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, head, n), (ssize_t)n);
    assert_int_equal(ftruncate(fd, total), 0);
    close(fd);
}

/* Was: 4.2 GB resident to print the header of a 2 GiB .npy / safetensors. */
static void test_headers_of_big_files(void **state)
{
    (void)state;
    if (npk_test_light() || sizeof(size_t) < 8) skip();
    const uint64_t n = ((1ull << 31) - 128) / 4; /* float32 elements */
    char dict[128], head[256];
    int dl =
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%llu,), }",
                 (unsigned long long)n);
    size_t total = (10 + (size_t)dl + 1 + 63) / 64 * 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((total - 10) & 0xff);
    head[9] = (char)((total - 10) >> 8);
    memcpy(head + 10, dict, (size_t)dl);
    memset(head + 10 + dl, ' ', total - 10 - (size_t)dl - 1);
    head[total - 1] = '\n';
    const char *npy = npk_tmp("big.npy");
    sparse_file(npy, head, total, (off_t)(total + n * 4));
    const char *a1[] = {"info", npy, NULL}, *a2[] = {"tensor", "info", npy, NULL};
    measured m = run_measured(a1);
    assert_int_equal(m.status, 0);
    assert_true(m.max_rss_kb < 64 * 1024);
    m = run_measured(a2);
    assert_int_equal(m.status, 0);
    assert_true(m.max_rss_kb < 64 * 1024);
    if (!npk_safetensors_available()) return;
    char json[160];
    int jl = snprintf(json, sizeof json,
                      "{\"w\":{\"dtype\":\"F32\",\"shape\":[%llu],\"data_offsets\":[0,%llu]}}",
                      (unsigned long long)n, (unsigned long long)n * 4);
    size_t hl = ((size_t)jl + 7) / 8 * 8;
    char st[200];
    memset(st, ' ', sizeof st);
    for (int i = 0; i < 8; i++) st[i] = (char)((hl >> (8 * i)) & 0xff);
    memcpy(st + 8, json, (size_t)jl);
    const char *stp = npk_tmp("big.safetensors");
    sparse_file(stp, st, 8 + hl, (off_t)(8 + hl + n * 4));
    const char *a3[] = {"info", stp, NULL}, *a4[] = {"tensor", "info", "--json", stp, NULL};
    m = run_measured(a3);
    assert_int_equal(m.status, 0);
    assert_true(m.max_rss_kb < 64 * 1024);
    m = run_measured(a4);
    assert_int_equal(m.status, 0);
    assert_true(m.max_rss_kb < 64 * 1024);
    unlink(npy);
    unlink(stp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_dev_zero),
        cmocka_unit_test(test_headers_of_big_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
