/* Input mapping and atomic output. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npk_test.h"

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_map(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("in.bin");
    assert_int_equal(npk_write_file(p, "hello", 5, &err), NPK_OK);
    npk_mapped m;
    assert_int_equal(npk_map_file(p, &m, &err), NPK_OK);
    assert_int_equal(m.size, 5);
    assert_memory_equal(m.data, "hello", 5);
    npk_unmap_file(&m);
    /* Empty file: a valid, non-NULL pointer and size 0. */
    const char *e = npk_tmp("empty.bin");
    assert_int_equal(npk_write_file(e, "", 0, &err), NPK_OK);
    assert_int_equal(npk_map_file(e, &m, &err), NPK_OK);
    assert_non_null(m.data);
    assert_int_equal(m.size, 0);
    npk_unmap_file(&m);
    /* Missing file and directory give errors, not crashes. */
    assert_int_equal(npk_map_file(npk_tmp("missing"), &m, &err), NPK_E_IO);
    npk_error_clear(&err);
    assert_int_equal(npk_map_file(npk_tmpdir(), &m, &err), NPK_E_IO);
    assert_non_null(strstr(err.msg, "directory"));
}

static void test_atomic_output(void **state)
{
    (void)state;
    npk_error err = {0};
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", npk_tmp("atomic"));
    assert_int_equal(npk_make_dir(dir, &err), NPK_OK);
    char path[1100];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    assert_int_equal(npk_write_file(path, "old", 3, &err), NPK_OK);
    /* An aborted output leaves the old file untouched and no temporary behind. */
    npk_out *o;
    assert_int_equal(npk_out_open(&o, path, &err), NPK_OK);
    assert_int_equal(npk_out_write(o, "partial", 7, &err), NPK_OK);
    assert_int_equal(count_entries(dir), 2); /* out.bin + temporary */
    npk_out_abort(o);
    assert_int_equal(count_entries(dir), 1);
    size_t n;
    uint8_t *b = npk_slurp(path, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "old", 3);
    free(b);
    /* A committed output replaces it in one step. */
    assert_int_equal(npk_out_open(&o, path, &err), NPK_OK);
    assert_int_equal(npk_out_write(o, "new!", 4, &err), NPK_OK);
    assert_int_equal(npk_out_commit(o, &err), NPK_OK);
    b = npk_slurp(path, &n);
    assert_int_equal(n, 4);
    assert_memory_equal(b, "new!", 4);
    free(b);
    assert_int_equal(count_entries(dir), 1);
    /* Permissions follow the umask like any new file (not mkstemp's 0600). */
    struct stat st;
    stat(path, &st);
    mode_t um = umask(0);
    umask(um);
    assert_int_equal(st.st_mode & 0777, 0666 & ~um);
    /* Output into a missing directory fails cleanly. */
    char bad[1200];
    snprintf(bad, sizeof bad, "%s/nodir/x.bin", dir);
    assert_int_equal(npk_write_file(bad, "x", 1, &err), NPK_E_IO);
}

static void test_refuse_overwriting_input(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("input.bin");
    assert_int_equal(npk_write_file(p, "data", 4, &err), NPK_OK);
    npk_mapped m;
    assert_int_equal(npk_map_file(p, &m, &err), NPK_OK);
    assert_int_equal(npk_write_file(p, "x", 1, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "refusing to overwrite an input"));
    /* Also through another name for the same file (a hard link). */
    const char *alias = npk_tmp("alias.bin");
    assert_int_equal(link(p, alias), 0);
    npk_error_clear(&err);
    assert_int_equal(npk_write_file(alias, "x", 1, &err), NPK_E_ARG);
    npk_unmap_file(&m);
    /* Once the input is closed the file may be replaced. */
    npk_error_clear(&err);
    assert_int_equal(npk_write_file(p, "x", 1, &err), NPK_OK);
    /* Explicitly protected paths too. */
    assert_int_equal(npk_protect_path(p, &err), NPK_OK);
    assert_int_equal(npk_write_file(p, "y", 1, &err), NPK_E_ARG);
}

static void test_sticky_protection(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("sticky.bin");
    assert_int_equal(npk_write_file(p, "data", 4, &err), NPK_OK);
    npk_protect_inputs_until_exit(true);
    npk_mapped m;
    assert_int_equal(npk_map_file(p, &m, &err), NPK_OK);
    npk_unmap_file(&m);
    assert_int_equal(npk_write_file(p, "x", 1, &err), NPK_E_ARG);
    npk_protect_inputs_until_exit(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_atomic_output),
        cmocka_unit_test(test_refuse_overwriting_input),
        cmocka_unit_test(test_sticky_protection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
