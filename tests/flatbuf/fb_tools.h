/* Test helpers: run the reference FlatBuffers tools from Debian (flatc from
 * flatbuffers-compiler, /usr/bin/python3 with python3-flatbuffers) on
 * schemas and data the tests write themselves. A missing tool skips the
 * test visibly (and fails it under CI=true), like a missing fixture. */
#ifndef NPK_FB_TOOLS_H
#define NPK_FB_TOOLS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npk_test.h"

static inline void fbt_need(const char *what, int ok)
{
    if (ok) return;
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) fail_msg("%s is required under CI", what);
    printf("[  SKIPPED ] %s is not available\n", what);
    skip();
}

static inline const char *fbt_flatc(void)
{
    static const char *const cands[] = {"/usr/bin/flatc", "/usr/local/bin/flatc"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (access(cands[i], X_OK) == 0) return cands[i];
    fbt_need("flatc (flatbuffers-compiler)", 0);
    return NULL;
}

/* Debian's python3 with the flatbuffers module. */
static inline const char *fbt_python(void)
{
    static int ok = -1;
    const char *py = NPK_PYTHON;
    if (ok < 0) {
        char *argv[] = {(char *)py, "-c", "import flatbuffers.flexbuffers, numpy", NULL};
        npk_run r = npk_run_argv(argv);
        ok = r.status == 0;
        npk_run_free(&r);
    }
    fbt_need("python3 with python3-flatbuffers and numpy", ok);
    return py;
}

static inline void fbt_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Run argv; fail the test with its stderr when it does not exit 0. */
static inline void fbt_run(char *const argv[])
{
    npk_run r = npk_run_argv(argv);
    if (r.status != 0) fail_msg("%s failed (%d): %s%s", argv[0], r.status, r.out, r.err);
    npk_run_free(&r);
}

#endif
