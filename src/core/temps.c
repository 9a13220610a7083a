/* The table of temporary files and staging directories that exist right
 * now, and their removal from a signal handler.
 *
 * Everything here that npk_remove_temporaries() touches is async-signal-
 * safe: fixed slots with the path stored inline (no pointer another thread
 * could free), atomic slot states, and only unlink/rmdir/open/close and the
 * getdents64 system call to empty a staging directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "file_internal.h"

#define TEMP_SLOTS 32
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };

static struct {
    atomic_int state;
    bool dir;
    char path[PATH_MAX];
} temps[TEMP_SLOTS];

int npk_temp_register(const char *path, bool dir)
{
    size_t n = strlen(path);
    if (n >= PATH_MAX) return 0;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int want = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&temps[i].state, &want, SLOT_BUSY)) continue;
        temps[i].dir = dir;
        memcpy(temps[i].path, path, n + 1);
        atomic_store(&temps[i].state, SLOT_LIVE);
        return i + 1;
    }
    return 0;
}

void npk_temp_unregister(int slot)
{
    if (slot > 0 && slot <= TEMP_SLOTS) atomic_store(&temps[slot - 1].state, SLOT_FREE);
}

/* Remove the plain files of a staging directory (it holds nothing else). */
static void empty_dir(const char *path)
{
#if defined(__linux__) && defined(SYS_getdents64)
    static unsigned char buf[4096]; /* only ever used from here, one signal at a time */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) break;
        for (long at = 0; at < n;) {
            /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            if (reclen == 0) break;
            const char *name = (const char *)buf + at + 19;
            if (strcmp(name, ".") && strcmp(name, "..")) unlinkat(fd, name, 0);
            at += reclen;
        }
    }
    close(fd);
#else
    (void)path; /* rmdir below then fails on a non-empty directory */
#endif
}

void npk_remove_temporaries(void)
{
    int saved = errno;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        if (atomic_load(&temps[i].state) != SLOT_LIVE) continue;
        if (temps[i].dir) {
            empty_dir(temps[i].path);
            rmdir(temps[i].path);
        } else {
            unlink(temps[i].path);
        }
    }
    errno = saved;
}
