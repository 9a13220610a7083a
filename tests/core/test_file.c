/* Input mapping, atomic output, where outputs go (links, devices, FIFOs,
 * standard output), output directories and temporaries under signals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
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

/* Was: the temporary ".NAME.XXXXXX" of a 250-byte NAME was longer than
 * NAME_MAX, so the output failed with "File name too long". */
static void test_long_output_name(void **state)
{
    (void)state;
    npk_error err = {0};
    char dir[1024], path[2048], name[251];
    snprintf(dir, sizeof dir, "%s", npk_tmp("longname"));
    assert_int_equal(npk_make_dir(dir, &err), NPK_OK);
    memset(name, 'n', 246);
    memcpy(name + 246, ".npy", 5);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(npk_write_file(path, "abc", 3, &err), NPK_OK);
    assert_int_equal(count_entries(dir), 1);
    assert_true(npk_exists(path));
}

/* Was: a replaced 0600 file came back 0644. */
static void test_keep_mode(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("private.bin");
    assert_int_equal(npk_write_file(p, "old", 3, &err), NPK_OK);
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(npk_write_file(p, "new", 3, &err), NPK_OK);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(p, 0751), 0);
    assert_int_equal(npk_write_file(p, "newer", 5, &err), NPK_OK);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0751);
}

/* Was: a symbolic link given as the output was replaced by a regular file. */
static void test_symlink_write_through(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *target = npk_tmp("target.bin"), *link_path = npk_tmp("link.bin");
    assert_int_equal(npk_write_file(target, "old", 3, &err), NPK_OK);
    assert_int_equal(symlink("target.bin", link_path), 0);
    assert_int_equal(npk_write_file(link_path, "new!", 4, &err), NPK_OK);
    struct stat st;
    assert_int_equal(lstat(link_path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    size_t n;
    uint8_t *b = npk_slurp(target, &n);
    assert_int_equal(n, 4);
    assert_memory_equal(b, "new!", 4);
    free(b);
    /* A dangling link is refused and nothing is created. */
    const char *dangling = npk_tmp("dangling.bin");
    assert_int_equal(symlink("missing-target.bin", dangling), 0);
    npk_error_clear(&err);
    assert_int_equal(npk_write_file(dangling, "x", 1, &err), NPK_E_IO);
    assert_non_null(strstr(err.msg, "symbolic link"));
    assert_false(npk_exists(npk_tmp("missing-target.bin")));
    /* A link to an input is an input. */
    npk_mapped m;
    assert_int_equal(npk_map_file(target, &m, &err), NPK_OK);
    npk_error_clear(&err);
    assert_int_equal(npk_write_file(link_path, "x", 1, &err), NPK_E_ARG);
    npk_unmap_file(&m);
}

/* Was: an existing device or FIFO was renamed over (as root, "-o /dev/null"
 * would have replaced the system's /dev/null with a regular file). */
static void test_special_outputs(void **state)
{
    (void)state;
    npk_error err = {0};
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", npk_tmp("special"));
    assert_int_equal(npk_make_dir(dir, &err), NPK_OK);
    struct stat st;
    /* FIFO: written in place, read back by a reader. */
    char fifo[1100];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    assert_int_equal(npk_write_file(fifo, "through the fifo", 16, &err), NPK_OK);
    char got[32] = {0};
    assert_int_equal(read(rfd, got, sizeof got), 16);
    assert_memory_equal(got, "through the fifo", 16);
    close(rfd);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    /* A copy of /dev/null (needs root for mknod): still a device afterwards. */
    char null[1100];
    snprintf(null, sizeof null, "%s/null", dir);
    if (mknod(null, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        assert_int_equal(npk_write_file(null, "discarded", 9, &err), NPK_OK);
        assert_int_equal(lstat(null, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        assert_int_equal(st.st_rdev, makedev(1, 3));
    } else {
        print_message("[   NOTE   ] mknod not permitted (%s): device case not run\n",
                      strerror(errno));
    }
    /* A socket is refused and stays. */
    char sock[1100];
    snprintf(sock, sizeof sock, "%s/sock", dir);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) < sizeof sa.sun_path) {
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
        npk_error_clear(&err);
        assert_int_equal(npk_write_file(sock, "x", 1, &err), NPK_E_ARG);
        assert_non_null(strstr(err.msg, "socket"));
        assert_int_equal(lstat(sock, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
    }
    close(sfd);
    /* Nothing else appeared beside them (no temporaries). */
    assert_int_equal(count_entries(dir), npk_exists(null) ? 3 : 2);
}

/* "-o -": standard output (the descriptor set by npk_set_stdout_fd), once. */
static void test_stdout_output(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    npk_set_stdout_fd(p[1]);
    npk_error err = {0};
    assert_int_equal(npk_write_file("-", "to stdout", 9, &err), NPK_OK);
    char got[16] = {0};
    assert_int_equal(read(p[0], got, sizeof got), 9);
    assert_memory_equal(got, "to stdout", 9);
    assert_int_equal(npk_write_file("-", "again", 5, &err), NPK_E_ARG);
    npk_set_stdout_fd(1);
    close(p[0]);
    close(p[1]);
}

/* Was: `tensor convert - -o in.npy < in.npy` replaced its own input:
 * standard input is checked against outputs like a named input. */
static void test_stdin_protected(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("stdin.bin");
    assert_int_equal(npk_write_file(p, "via stdin", 9, &err), NPK_OK);
    int saved = dup(0), fd = open(p, O_RDONLY);
    assert_true(saved >= 0 && fd >= 0);
    assert_int_equal(dup2(fd, 0), 0);
    close(fd);
    npk_mapped m;
    assert_int_equal(npk_map_file("-", &m, &err), NPK_OK);
    assert_int_equal(m.size, 9);
    assert_memory_equal(m.data, "via stdin", 9);
    assert_int_equal(npk_write_file(p, "x", 1, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "input"));
    npk_unmap_file(&m);
    dup2(saved, 0);
    close(saved);
}

/* Streams: a prefix, then the rest; a regular file is always whole. */
static void test_map_prefix(void **state)
{
    (void)state;
    npk_error err = {0};
    int p[2];
    assert_int_equal(pipe(p), 0);
    char buf[3000];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)(i * 7);
    assert_int_equal(write(p[1], buf, sizeof buf), (ssize_t)sizeof buf);
    close(p[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    npk_mapped m;
    assert_int_equal(npk_map_prefix(path, &m, 1000, &err), NPK_OK);
    assert_false(m.complete);
    assert_int_equal(m.size, 1000);
    assert_int_equal(npk_map_rest(&m, &err), NPK_OK);
    assert_true(m.complete);
    assert_int_equal(m.size, sizeof buf);
    assert_memory_equal(m.data, buf, sizeof buf);
    npk_unmap_file(&m);
    close(p[0]);
    const char *f = npk_tmp("prefix.bin");
    assert_int_equal(npk_write_file(f, buf, sizeof buf, &err), NPK_OK);
    assert_int_equal(npk_map_prefix(f, &m, 10, &err), NPK_OK);
    assert_true(m.complete);
    assert_int_equal(m.size, sizeof buf);
    npk_unmap_file(&m);
    /* An endless device: the prefix, quickly. */
    assert_int_equal(npk_map_prefix("/dev/zero", &m, 1 << 20, &err), NPK_OK);
    assert_false(m.complete);
    assert_int_equal(m.size, 1 << 20);
    npk_unmap_file(&m);
}

static void test_output_limit(void **state)
{
    (void)state;
    npk_error err = {0};
    assert_int_equal(npk_check_output_size(NPK_MAX_OUTPUT_SIZE, &err), NPK_OK);
    assert_int_equal(npk_check_output_size(NPK_MAX_OUTPUT_SIZE + 1, &err), NPK_E_LIMIT);
    assert_non_null(strstr(err.msg, "4 GiB output limit"));
}

/* ---- output directories ---- */

static int count_hidden(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_outdir_commit_abort(void **state)
{
    (void)state;
    npk_error err = {0};
    char parent[1024], path[1100], f[1200];
    snprintf(parent, sizeof parent, "%s", npk_tmp("od"));
    assert_int_equal(npk_make_dir(parent, &err), NPK_OK);
    snprintf(path, sizeof path, "%s/set/", parent); /* trailing slash as users type it */
    npk_outdir *d;
    assert_int_equal(npk_outdir_open(&d, path, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "a.bin", "AA", 2, &err), NPK_OK);
    npk_out *o;
    assert_int_equal(npk_outdir_file(d, "b.bin", &o, &err), NPK_OK);
    assert_int_equal(npk_out_write(o, "BBB", 3, &err), NPK_OK);
    assert_int_equal(npk_out_commit(o, &err), NPK_OK);
    /* Nothing visible under the final name yet. */
    snprintf(f, sizeof f, "%s/set", parent);
    assert_false(npk_exists(f));
    assert_int_equal(count_hidden(parent), 1);
    assert_int_equal(npk_outdir_commit(d, &err), NPK_OK);
    assert_int_equal(count_entries(f), 2);
    assert_int_equal(count_hidden(parent), 0);
    snprintf(f, sizeof f, "%s/set/b.bin", parent);
    size_t n;
    uint8_t *b = npk_slurp(f, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "BBB", 3);
    free(b);
    /* Abort: no directory, no file, no staging left. */
    snprintf(path, sizeof path, "%s/aborted", parent);
    assert_int_equal(npk_outdir_open(&d, path, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "a.bin", "AA", 2, &err), NPK_OK);
    npk_outdir_abort(d);
    assert_false(npk_exists(path));
    assert_int_equal(count_entries(parent), 1);
    /* Into an existing directory: other files stay, same names are replaced. */
    snprintf(path, sizeof path, "%s/set", parent);
    snprintf(f, sizeof f, "%s/set/keep.txt", parent);
    assert_int_equal(npk_write_file(f, "keep", 4, &err), NPK_OK);
    assert_int_equal(npk_outdir_open(&d, path, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "a.bin", "new", 3, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "c.bin", "C", 1, &err), NPK_OK);
    assert_int_equal(npk_outdir_commit(d, &err), NPK_OK);
    assert_int_equal(count_entries(path), 4);
    assert_int_equal(count_hidden(parent), 0);
    snprintf(f, sizeof f, "%s/set/a.bin", parent);
    b = npk_slurp(f, &n);
    assert_int_equal(n, 3);
    free(b);
    /* A file is not a directory; "-" is not a directory. */
    snprintf(f, sizeof f, "%s/set/keep.txt", parent);
    npk_error_clear(&err);
    assert_int_equal(npk_outdir_open(&d, f, &err), NPK_E_IO);
    assert_non_null(strstr(err.msg, "not a directory"));
    npk_error_clear(&err);
    assert_int_equal(npk_outdir_open(&d, "-", &err), NPK_E_ARG);
    /* An input in the existing directory is not replaced, and nothing moves. */
    npk_mapped m;
    assert_int_equal(npk_map_file(f, &m, &err), NPK_OK);
    assert_int_equal(npk_outdir_open(&d, path, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "d.bin", "D", 1, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, "keep.txt", "X", 1, &err), NPK_OK);
    npk_error_clear(&err);
    assert_int_equal(npk_outdir_commit(d, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "input"));
    npk_unmap_file(&m);
    assert_int_equal(count_entries(path), 4);
    assert_int_equal(count_hidden(parent), 0);
}

/* Was: a 346-byte layer name became a 255-byte file name whose temporary
 * name did not fit; names now fit with room for the temporary, stay unique
 * and are safe as file names. */
static void test_outdir_names(void **state)
{
    (void)state;
    npk_error err = {0};
    char parent[1024], path[1400];
    snprintf(parent, sizeof parent, "%s", npk_tmp("names"));
    assert_int_equal(npk_make_dir(parent, &err), NPK_OK);
    /* The target's own name is long too: the staging name still fits. */
    char longdir[251];
    memset(longdir, 'd', 250);
    longdir[250] = 0;
    snprintf(path, sizeof path, "%s/%s", parent, longdir);
    npk_outdir *d;
    assert_int_equal(npk_outdir_open(&d, path, &err), NPK_OK);
    char label[347], label2[347], a[NPK_OUTDIR_NAME_MAX + 1], b[NPK_OUTDIR_NAME_MAX + 1];
    memset(label, 'x', 346);
    label[346] = 0;
    memcpy(label2, label, sizeof label);
    label2[340] = 'y'; /* differs only past the cut */
    assert_int_equal(npk_outdir_name(d, label, ".npy", a, sizeof a, &err), NPK_OK);
    assert_int_equal(npk_outdir_name(d, label2, ".npy", b, sizeof b, &err), NPK_OK);
    assert_true(strlen(a) <= NPK_OUTDIR_NAME_MAX && strlen(a) + 8 <= 255);
    assert_string_not_equal(a, b);
    assert_string_equal(a + strlen(a) - 4, ".npy");
    assert_int_equal(npk_outdir_write(d, a, "1", 1, &err), NPK_OK);
    assert_int_equal(npk_outdir_write(d, b, "2", 1, &err), NPK_OK);
    char n1[NPK_OUTDIR_NAME_MAX + 1], n2[NPK_OUTDIR_NAME_MAX + 1];
    assert_int_equal(npk_outdir_name(d, "concat/split0", ".npy", n1, sizeof n1, &err), NPK_OK);
    assert_string_equal(n1, "concat_split0.npy");
    assert_int_equal(npk_outdir_name(d, "concat:split0", ".npy", n2, sizeof n2, &err), NPK_OK);
    assert_string_equal(n2, "concat_split0~2.npy");
    assert_int_equal(npk_outdir_name(d, "../.hidden", "", n1, sizeof n1, &err), NPK_OK);
    assert_string_equal(n1, "_._.hidden");
    assert_int_equal(npk_outdir_name(d, ".x", "", n1, sizeof n1, &err), NPK_OK);
    assert_string_equal(n1, "_x");
    assert_int_equal(npk_outdir_name(d, "", ".npy", n1, sizeof n1, &err), NPK_OK);
    assert_string_equal(n1, "_.npy");
    /* Plain names only; a name once. */
    assert_int_equal(npk_outdir_write(d, "../escape", "x", 1, &err), NPK_E_ARG);
    npk_error_clear(&err);
    assert_int_equal(npk_outdir_write(d, a, "1", 1, &err), NPK_E_ARG);
    assert_int_equal(npk_outdir_commit(d, &err), NPK_OK);
    assert_int_equal(count_entries(path), 2);
}

static void on_term(int sig)
{
    npk_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Was: SIGINT/SIGTERM during a write left the hidden temporary behind. */
static void test_signal_removes_temporaries(void **state)
{
    (void)state;
    char dir[1024], f[1100], od[1100];
    snprintf(dir, sizeof dir, "%s", npk_tmp("killed"));
    npk_error err = {0};
    assert_int_equal(npk_make_dir(dir, &err), NPK_OK);
    snprintf(f, sizeof f, "%s/out.bin", dir);
    snprintf(od, sizeof od, "%s/outs", dir);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, on_term);
        npk_out *o;
        npk_outdir *d;
        if (npk_out_open(&o, f, &err) || npk_out_write(o, "partial", 7, &err) ||
            npk_outdir_open(&d, od, &err) || npk_outdir_write(d, "one.bin", "1", 1, &err))
            _exit(3);
        raise(SIGTERM);
        _exit(4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    assert_int_equal(count_entries(dir), 0);
}

/* For the SIGBUS handler: which input a faulting address belongs to. */
static void test_mapped_fault(void **state)
{
    (void)state;
    npk_error err = {0};
    const char *p = npk_tmp("fault.bin");
    uint8_t buf[100000] = {1};
    assert_int_equal(npk_write_file(p, buf, sizeof buf, &err), NPK_OK);
    npk_mapped m;
    assert_int_equal(npk_map_file(p, &m, &err), NPK_OK);
    const char *path;
    uint64_t off;
    assert_true(npk_mapped_fault(m.data + 70000, &path, &off));
    assert_string_equal(path, p);
    assert_int_equal(off, 70000);
    assert_false(npk_mapped_fault(buf, &path, &off));
    npk_unmap_file(&m);
    assert_false(npk_mapped_fault(m.data, &path, &off));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_atomic_output),
        cmocka_unit_test(test_refuse_overwriting_input),
        cmocka_unit_test(test_sticky_protection),
        cmocka_unit_test(test_long_output_name),
        cmocka_unit_test(test_keep_mode),
        cmocka_unit_test(test_symlink_write_through),
        cmocka_unit_test(test_special_outputs),
        cmocka_unit_test(test_stdout_output),
        cmocka_unit_test(test_stdin_protected),
        cmocka_unit_test(test_map_prefix),
        cmocka_unit_test(test_output_limit),
        cmocka_unit_test(test_outdir_commit_abort),
        cmocka_unit_test(test_outdir_names),
        cmocka_unit_test(test_signal_removes_temporaries),
        cmocka_unit_test(test_mapped_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
