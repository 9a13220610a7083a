/* The system-call table (real calls by default), the DRM version query, and
 * finding NPU device nodes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"
#include "npukit/rknpu_rocket.h"

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_POSIX_DEVICES 1

static int real_open(void *ctx, const char *path, int flags)
{
    (void)ctx;
    return open(path, flags);
}
static int real_close(void *ctx, int fd)
{
    (void)ctx;
    return close(fd);
}
static int real_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    (void)ctx;
    return ioctl(fd, req, arg);
}
static void *real_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
    (void)ctx;
    return mmap(addr, len, prot, flags, fd, (off_t)off);
}
static int real_munmap(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    return munmap(addr, len);
}
#define OPEN_FLAGS     (O_RDWR | O_CLOEXEC)
#define MAP_PROT       (PROT_READ | PROT_WRITE)
#define MAP_FLAGS      MAP_SHARED
#define MAP_FAILED_PTR MAP_FAILED
#else
static int real_open(void *ctx, const char *path, int flags)
{
    (void)ctx, (void)path, (void)flags;
    errno = ENOSYS;
    return -1;
}
static int real_close(void *ctx, int fd)
{
    (void)ctx, (void)fd;
    return 0;
}
static int real_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    (void)ctx, (void)fd, (void)req, (void)arg;
    errno = ENOSYS;
    return -1;
}
static void *real_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
    (void)ctx, (void)addr, (void)len, (void)prot, (void)flags, (void)fd, (void)off;
    errno = ENOSYS;
    return (void *)-1;
}
static int real_munmap(void *ctx, void *addr, size_t len)
{
    (void)ctx, (void)addr, (void)len;
    return 0;
}
#define OPEN_FLAGS     2
#define MAP_PROT       3
#define MAP_FLAGS      1
#define MAP_FAILED_PTR ((void *)-1)
#endif

static const npk_rk_sys real_sys = {real_open, real_close,  real_ioctl,
                                    real_mmap, real_munmap, NULL};

const npk_rk_sys *npk_rk_sys_default(void)
{
    return &real_sys;
}

const char *const npk_rk_default_dev_dirs[] = {"/dev/dri", "/dev/accel", NULL};

npk_status dev_ioctl(npk_rk_device *d, unsigned long req, void *arg, const char *what,
                     npk_error *err)
{
    for (int tries = 0; tries < 1000; tries++) {
        if (d->sys->ioctl(d->sys->ctx, d->fd, req, arg) == 0) return NPK_OK;
        if (errno != EINTR && errno != EAGAIN) break;
    }
    int e = errno;
    return npk_fail(err, e == ETIMEDOUT ? NPK_E_TIMEOUT : NPK_E_DEVICE, "%s: %s (ioctl 0x%08lx)",
                    what, strerror(e), req);
}

npk_status dev_map(npk_rk_device *d, dev_buf *b, uint64_t offset, const char *what, npk_error *err)
{
    if (b->size > SIZE_MAX) return npk_fail(err, NPK_E_LIMIT, "%s: too large to map", what);
    void *p = d->sys->mmap(d->sys->ctx, NULL, (size_t)b->size, MAP_PROT, MAP_FLAGS, d->fd,
                           (int64_t)offset);
    if (p == MAP_FAILED_PTR || !p)
        return npk_fail(err, NPK_E_DEVICE, "mmap of %s (%llu bytes at offset 0x%llx): %s", what,
                        (unsigned long long)b->size, (unsigned long long)offset, strerror(errno));
    b->host = p;
    b->map_size = b->size;
    return NPK_OK;
}

int dev_drm_version(const npk_rk_sys *sys, int fd, npk_rk_devnode *n)
{
    npk_drm_version v;
    memset(&v, 0, sizeof v);
    memset(n->driver, 0, sizeof n->driver);
    memset(n->date, 0, sizeof n->date);
    memset(n->desc, 0, sizeof n->desc);
    v.name = n->driver;
    v.name_len = sizeof n->driver - 1;
    v.date = n->date;
    v.date_len = sizeof n->date - 1;
    v.desc = n->desc;
    v.desc_len = sizeof n->desc - 1;
    if (sys->ioctl(sys->ctx, fd, NPK_DRM_IOCTL_VERSION, &v) != 0) return -1;
    /* The kernel reports the full lengths; what it copied is clipped. */
    n->driver[sizeof n->driver - 1] = n->date[sizeof n->date - 1] = n->desc[sizeof n->desc - 1] = 0;
    n->major = v.version_major;
    n->minor = v.version_minor;
    n->patch = v.version_patchlevel;
    return 0;
}

static bool kind_of_driver(const char *driver, npk_rk_devkind *k)
{
    if (!strcmp(driver, "rknpu"))
        *k = NPK_RK_DEV_RKNPU;
    else if (!strcmp(driver, "rocket"))
        *k = NPK_RK_DEV_ROCKET;
    else
        return false;
    return true;
}

/* Query one node; true if it is an NPU node that could be opened. */
static bool probe_node(const npk_rk_sys *sys, const char *path, npk_rk_devnode *n)
{
    const size_t len = strlen(path);
    if (len >= sizeof n->path) return false; /* a node path npukit cannot report whole */
    int fd = sys->open(sys->ctx, path, OPEN_FLAGS);
    if (fd < 0) return false;
    int r = dev_drm_version(sys, fd, n);
    sys->close(sys->ctx, fd);
    if (r != 0 || !kind_of_driver(n->driver, &n->kind)) return false;
    memcpy(n->path, path, len + 1);
    return true;
}

static bool node_name(const char *name)
{
    return !strncmp(name, "card", 4) || !strncmp(name, "renderD", 7) || !strncmp(name, "accel", 5);
}

npk_status npk_rk_devices_list(const npk_rk_sys *sys, const char *const *dirs, npk_rk_devnode *out,
                               size_t cap, size_t *count, npk_error *err)
{
    (void)err;
    *count = 0;
    if (!sys) sys = npk_rk_sys_default();
    if (!dirs) dirs = npk_rk_default_dev_dirs;
#ifdef HAVE_POSIX_DEVICES
    for (size_t i = 0; dirs[i]; i++) {
        DIR *dir = opendir(dirs[i]);
        if (!dir) continue;
        /* Collect names first so the order does not depend on readdir. */
        char names[64][64];
        size_t nn = 0;
        struct dirent *de;
        while ((de = readdir(dir)) && nn < 64) {
            size_t len = strlen(de->d_name);
            if (node_name(de->d_name) && len < sizeof names[0])
                memcpy(names[nn++], de->d_name, len + 1);
        }
        closedir(dir);
        for (size_t a = 1; a < nn; a++)
            for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
                char t[64];
                memcpy(t, names[b], sizeof t);
                memcpy(names[b], names[b - 1], sizeof t);
                memcpy(names[b - 1], t, sizeof t);
            }
        for (size_t j = 0; j < nn && *count < cap; j++) {
            char path[512];
            if (strlen(dirs[i]) > 400) continue;
            snprintf(path, sizeof path, "%.400s/%.63s", dirs[i], names[j]);
            if (strlen(path) >= sizeof out->path) continue;
            if (probe_node(sys, path, &out[*count])) (*count)++;
        }
    }
#else
    (void)out, (void)cap;
#endif
    return NPK_OK;
}

npk_status dev_open_node(const npk_rk_open_opts *o, npk_rk_devkind kind, npk_rk_device *d,
                         npk_error *err)
{
    d->sys = o->sys ? o->sys : npk_rk_sys_default();
    npk_rk_devnode n;
    const char *want = npk_rk_devkind_name(kind);
    if (!o->path) {
        npk_rk_devnode nodes[16];
        size_t count = 0;
        npk_rk_devices_list(d->sys, o->dev_dirs, nodes, 16, &count, err);
        size_t i = 0;
        while (i < count && nodes[i].kind != kind) i++;
        if (i == count)
            return npk_fail(err, NPK_E_NOTFOUND,
                            "no %s device node found (searched %s for a node whose DRM driver is "
                            "\"%s\")",
                            want, kind == NPK_RK_DEV_ROCKET ? "/dev/accel" : "/dev/dri", want);
        n = nodes[i];
    } else {
        snprintf(n.path, sizeof n.path, "%s", o->path);
    }
    d->fd = d->sys->open(d->sys->ctx, n.path, OPEN_FLAGS);
    if (d->fd < 0)
        return npk_fail(err, NPK_E_DEVICE, "%s: cannot open: %s", n.path, strerror(errno));
    if (dev_drm_version(d->sys, d->fd, &n) != 0 || strcmp(n.driver, want) != 0) {
        d->sys->close(d->sys->ctx, d->fd);
        d->fd = -1;
        return npk_fail(err, NPK_E_DEVICE, "%s: not a %s device (DRM driver \"%s\")", n.path, want,
                        n.driver);
    }
    snprintf(d->name, sizeof d->name, "%s %d.%d.%d at %s", n.driver, n.major, n.minor, n.patch,
             n.path);
    return NPK_OK;
}
