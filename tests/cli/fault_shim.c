/* A preload library for CLI tests that inject faults at exact points:
 *   NPK_SHIM_SIGNAL_AT_FSYNC=N  raise NPK_SHIM_SIGNAL (default SIGTERM) in
 *                               the N-th fsync() (while a temporary exists);
 *   NPK_SHIM_CUT_AFTER_MAP=STR  right after a file whose path contains STR
 *                               is mapped, cut it to 0 bytes (as another
 *                               program truncating an input would).
 * Test code only; loaded with LD_PRELOAD. */
/* mmap and mmap64 are both interposed: keep their names distinct. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int fsync(int fd)
{
    static int calls;
    const char *at = getenv("NPK_SHIM_SIGNAL_AT_FSYNC");
    if (at && ++calls == atoi(at)) {
        const char *sig = getenv("NPK_SHIM_SIGNAL");
        raise(sig ? atoi(sig) : SIGTERM);
    }
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real(fd);
}

static void cut_after_map(int fd)
{
    const char *want = getenv("NPK_SHIM_CUT_AFTER_MAP");
    if (!want || fd < 0) return;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    if (strstr(path, want) && truncate(path, 0) != 0) return;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *(*real)(void *, size_t, int, int, int, off_t) =
        (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    void *p = real(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) cut_after_map(fd);
    return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    void *(*real)(void *, size_t, int, int, int, off64_t) =
        (void *(*)(void *, size_t, int, int, int, off64_t))dlsym(RTLD_NEXT, "mmap64");
    void *p = real(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) cut_after_map(fd);
    return p;
}
