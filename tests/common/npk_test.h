/* Test helpers: fixtures, temporary files, running the CLI.
 *
 * Fixtures come from $NPUKIT_FIXTURES (default: ../shared/data next to the
 * source tree). A test that needs a missing fixture fails when CI=true and
 * is skipped (visibly, as SKIPPED) elsewhere. */
#ifndef NPK_TEST_H
#define NPK_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "npukit/npukit.h"

/* The fixture directory (never NULL). */
const char *npk_fixture_dir(void);
/* Full path of a fixture (static buffer reused per call); NULL when absent. */
const char *npk_fixture_path(const char *rel);
/* Path of a fixture, or skip/fail the current test when it is missing. */
#define NPK_FIXTURE(rel) npk_fixture_or_skip(rel, __FILE__, __LINE__)
const char *npk_fixture_or_skip(const char *rel, const char *file, int line);
/* Map a fixture (skip/fail when missing). Unmap with npk_unmap_file(). */
void npk_fixture_map(const char *rel, npk_mapped *m);

/* A feature this build may lack (a word of npk_features(): "png", "bmp", ...).
 * The boards' cross builds leave the optional libraries out on purpose: there
 * the test is skipped visibly; a native build under CI=true must have it. */
#define NPK_NEED_FEATURE(name) npk_need_feature(name, __FILE__, __LINE__)
void npk_need_feature(const char *name, const char *file, int line);

/* A fresh temporary directory for this test program (removed at exit). */
const char *npk_tmpdir(void);
/* "<tmpdir>/<name>"; the string stays valid until exit. */
const char *npk_tmp(const char *name);
/* Read a whole file into a malloc'd buffer; NULL if it does not exist. */
uint8_t *npk_slurp(const char *path, size_t *len);
/* 1 if the file exists. */
int npk_exists(const char *path);

/* Run the npukit CLI with printf-formatted arguments split on spaces
 * (no quoting). Captures stdout and stderr (malloc'd, NUL-terminated) and
 * returns the exit status. */
typedef struct npk_run {
    int status;
    char *out;
    char *err;
} npk_run;
npk_run npk_cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run a program with an explicit argv (argv[0] is the program). */
npk_run npk_run_argv(char *const argv[]);
void npk_run_free(npk_run *r);

/* Run Debian's python3 (with NumPy) on a script with one argument; when a
 * module is missing, fail under CI=true and skip the test elsewhere. */
npk_run npk_python(const char *script, const char *arg);

/* 1 when tests should do less work: builds running under an emulator
 * (qemu-user cross checks) or NPK_TEST_LIGHT=1. Sweeps then sample cases;
 * every property is still checked, on fewer inputs. */
int npk_test_light(void);

/* Deterministic pseudo-random numbers for tests (xorshift64*). */
uint64_t npk_rand(uint64_t *state);
double npk_randf(uint64_t *state); /* uniform in [0, 1) */

/* sha256 of a buffer as 64 lowercase hex digits (for golden hashes). */
void npk_sha256_hex(const void *data, size_t len, char out[65]);

#endif
