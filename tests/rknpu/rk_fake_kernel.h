/* A fake kernel for the RKNPU device backends: system calls (open, close,
 * ioctl, mmap, munmap) for a table of device nodes served by the vendor
 * "rknpu" driver or the mainline "rocket" driver, executing submitted
 * streams on the emulator.
 *
 * Deliberately independent of the library's uAPI headers: ioctl request
 * numbers are the literal values of the reference (section 9.2 and 10.1),
 * and every argument is decoded from its raw bytes at the offsets the
 * reference lists, so a wrong number, size or field offset in a backend
 * fails here. Driver behaviour (per-core task ranges, PC amounts, interrupt
 * masks, one task at a time for rocket) is re-implemented from the
 * reference, not taken from the library. Header-only. */
#ifndef RK_FAKE_KERNEL_H
#define RK_FAKE_KERNEL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "npukit/rknpu_device.h"
#include "npukit/rknpu_emu.h"

enum { FK_RKNPU = 1, FK_ROCKET = 2, FK_OTHER = 3 };

/* Request numbers as the reference lists them. */
#define FK_RKNPU_ACTION      0xC0086440ul
#define FK_RKNPU_SUBMIT      0xC0686441ul
#define FK_RKNPU_MEM_CREATE  0xC0286442ul
#define FK_RKNPU_MEM_MAP     0xC0106443ul
#define FK_RKNPU_MEM_DESTROY 0xC0106444ul
#define FK_RKNPU_MEM_SYNC    0xC0206445ul
#define FK_ROCKET_CREATE_BO  0xC0186440ul
#define FK_ROCKET_SUBMIT     0x40186441ul
#define FK_ROCKET_PREP_BO    0x40106442ul
#define FK_ROCKET_FINI_BO    0x40086443ul
#define FK_GEM_CLOSE         0x40086409ul
/* DRM_IOCTL_VERSION: IOWR('d', 0) with struct drm_version, 64 bytes on LP64
 * and 36 on ILP32 (three ints, then three size_t + pointer pairs). */
#define FK_DRM_VERSION (sizeof(void *) == 8 ? 0xC0406400ul : 0xC0246400ul)

#define FK_MAX_BOS   64
#define FK_MAX_FDS   8
#define FK_MAX_NODES 8
#define FK_FD_BASE   300

typedef struct fk_bo {
    bool live;
    int node;
    uint32_t handle;
    uint64_t size;
    uint8_t *mem;
    uint32_t dma;
    uint64_t obj_addr, mmap_off;
    uint32_t flags;
    int maps;
} fk_bo;

typedef struct fk_core_run {
    int core;
    uint32_t addr, amount, tasks;
} fk_core_run;

typedef struct fake_kernel {
    npk_rk_emu *emu;
    int cores;
    struct {
        char path[1024];
        int driver;
    } nodes[FK_MAX_NODES];
    int nnodes;
    int fd_node[FK_MAX_FDS]; /* node index + 1, 0 = closed */
    fk_bo bos[FK_MAX_BOS];
    uint32_t next_handle, next_dma;
    /* what the backends did */
    int opens, closes, resets, creates, destroys, maps, unmaps, syncs_to, syncs_from;
    int destroy_while_mapped, submits, preps, finis, gem_closes, versions;
    uint32_t last_core_mask;
    fk_core_run runs[32];
    int nruns;
    uint32_t rocket_task_counts[64];
    int nrocket_tasks, rocket_jobs;
    /* fault injection: fail the n-th call of this request with this errno */
    unsigned long fail_req;
    int fail_after, fail_errno;
    char last_error[NPK_ERROR_MSG_MAX]; /* what the emulator said, if a submit failed */
    /* Run a submit's cores (vendor) or jobs (rocket) last first: the
     * hardware gives no order between them, so the outputs must not
     * change (a core reading what another writes in the same submit
     * would read stale bytes in one of the two orders). */
    bool reverse_cores;
} fake_kernel;

static inline uint32_t fk_rd32(const void *p, size_t off)
{
    uint32_t v;
    memcpy(&v, (const uint8_t *)p + off, 4);
    return v;
}
static inline uint64_t fk_rd64(const void *p, size_t off)
{
    uint64_t v;
    memcpy(&v, (const uint8_t *)p + off, 8);
    return v;
}
static inline void fk_wr32(void *p, size_t off, uint32_t v)
{
    memcpy((uint8_t *)p + off, &v, 4);
}
static inline void fk_wr64(void *p, size_t off, uint64_t v)
{
    memcpy((uint8_t *)p + off, &v, 8);
}
static inline size_t fk_rdsz(const void *p, size_t off)
{
    size_t v;
    memcpy(&v, (const uint8_t *)p + off, sizeof v);
    return v;
}
static inline void fk_wrsz(void *p, size_t off, size_t v)
{
    memcpy((uint8_t *)p + off, &v, sizeof v);
}
/* A native pointer field (struct drm_version). */
static inline void *fk_rdptr(const void *p, size_t off)
{
    void *v;
    memcpy(&v, (const uint8_t *)p + off, sizeof v);
    return v;
}
/* A user pointer carried in a u64 field (the rocket structs). */
static inline void *fk_rdptr64(const void *p, size_t off)
{
    return (void *)(uintptr_t)fk_rd64(p, off);
}

static inline void fk_init(fake_kernel *k, int cores)
{
    memset(k, 0, sizeof *k);
    k->cores = cores;
    npk_rk_emu_opts eo = {cores, 0, false};
    npk_error err = {0};
    if (npk_rk_emu_create(&eo, &k->emu, &err)) abort();
    k->next_handle = 1;
    k->next_dma = 0x00200000;
}

static inline void fk_add_node(fake_kernel *k, const char *path, int driver)
{
    size_t len = strlen(path);
    if (len >= sizeof k->nodes[0].path) abort();
    memcpy(k->nodes[k->nnodes].path, path, len + 1);
    k->nodes[k->nnodes++].driver = driver;
}

static inline void fk_free(fake_kernel *k)
{
    for (int i = 0; i < FK_MAX_BOS; i++)
        if (k->bos[i].live) free(k->bos[i].mem);
    npk_rk_emu_destroy(k->emu);
}

static inline int fk_live_bos(const fake_kernel *k)
{
    int n = 0;
    for (int i = 0; i < FK_MAX_BOS; i++) n += k->bos[i].live;
    return n;
}

static inline int fk_err(int e)
{
    errno = e;
    return -1;
}

static inline int fk_node_of(const fake_kernel *k, int fd)
{
    int i = fd - FK_FD_BASE;
    if (i < 0 || i >= FK_MAX_FDS || !k->fd_node[i]) return -1;
    return k->fd_node[i] - 1;
}

static inline fk_bo *fk_bo_by_handle(fake_kernel *k, int node, uint32_t h)
{
    for (int i = 0; i < FK_MAX_BOS; i++)
        if (k->bos[i].live && k->bos[i].node == node && k->bos[i].handle == h) return &k->bos[i];
    return NULL;
}

static inline fk_bo *fk_bo_by_obj(fake_kernel *k, uint64_t obj)
{
    for (int i = 0; i < FK_MAX_BOS; i++)
        if (k->bos[i].live && k->bos[i].obj_addr == obj) return &k->bos[i];
    return NULL;
}

static inline fk_bo *fk_bo_new(fake_kernel *k, int node, uint64_t size, uint32_t flags)
{
    if (!size || size > ((uint64_t)1 << 31)) return NULL;
    for (int i = 0; i < FK_MAX_BOS; i++) {
        fk_bo *b = &k->bos[i];
        if (b->live) continue;
        uint64_t span = (size + 0xFFFF) & ~(uint64_t)0xFFFF;
        void *mem = NULL;
        if (posix_memalign(&mem, 4096, (size_t)span)) return NULL;
        memset(mem, 0xEE, (size_t)span); /* not zero: a backend must not rely on it */
        memset(b, 0, sizeof *b);
        b->live = true;
        b->node = node;
        b->handle = k->next_handle++;
        b->size = size;
        b->mem = mem;
        b->dma = k->next_dma;
        b->obj_addr = 0xFFFFFF8000000000ull | ((uint64_t)b->handle << 12);
        b->mmap_off = ((uint64_t)b->handle << 32) | 0x1000; /* like DRM's fake offsets */
        b->flags = flags;
        k->next_dma += (uint32_t)span;
        npk_error err = {0};
        if (npk_rk_emu_map(k->emu, b->dma, mem, (size_t)span, &err)) abort();
        return b;
    }
    return NULL;
}

static inline void fk_bo_free(fake_kernel *k, fk_bo *b)
{
    if (b->maps) k->destroy_while_mapped++;
    npk_rk_emu_unmap(k->emu, b->dma);
    free(b->mem);
    b->live = false;
}

/* ---- system calls ---- */

static inline int fk_open(void *ctx, const char *path, int flags)
{
    fake_kernel *k = ctx;
    for (int n = 0; n < k->nnodes; n++)
        if (!strcmp(k->nodes[n].path, path)) {
            if ((flags & O_ACCMODE) != O_RDWR) return fk_err(EACCES);
            for (int i = 0; i < FK_MAX_FDS; i++)
                if (!k->fd_node[i]) {
                    k->fd_node[i] = n + 1;
                    k->opens++;
                    return FK_FD_BASE + i;
                }
            return fk_err(EMFILE);
        }
    return fk_err(ENOENT);
}

static inline int fk_close(void *ctx, int fd)
{
    fake_kernel *k = ctx;
    if (fk_node_of(k, fd) < 0) return fk_err(EBADF);
    k->fd_node[fd - FK_FD_BASE] = 0;
    k->closes++;
    return 0;
}

static inline void *fk_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd,
                            int64_t off)
{
    fake_kernel *k = ctx;
    int node = fk_node_of(k, fd);
    if (node < 0 || addr || prot != (PROT_READ | PROT_WRITE) || flags != MAP_SHARED) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    for (int i = 0; i < FK_MAX_BOS; i++) {
        fk_bo *b = &k->bos[i];
        if (b->live && b->node == node && b->mmap_off == (uint64_t)off) {
            if (len > b->size) break;
            b->maps++;
            k->maps++;
            return b->mem;
        }
    }
    errno = EINVAL;
    return MAP_FAILED;
}

static inline int fk_munmap(void *ctx, void *addr, size_t len)
{
    fake_kernel *k = ctx;
    for (int i = 0; i < FK_MAX_BOS; i++) {
        fk_bo *b = &k->bos[i];
        if (b->live && b->mem == addr && b->maps && len <= b->size) {
            b->maps--;
            k->unmaps++;
            return 0;
        }
    }
    return fk_err(EINVAL);
}

/* DRM_IOCTL_VERSION: name, date and description copied up to the caller's
 * lengths, which are then set to the full lengths. */
static inline int fk_version(fake_kernel *k, int driver, void *arg)
{
    static const char *names[] = {"", "rknpu", "rocket", "panfrost"};
    const size_t ps = sizeof(void *), base = 3 * 4 + (ps == 8 ? 4 : 0);
    const char *strs[3] = {names[driver], "20240322", driver == FK_ROCKET ? "rocket NPU" : "RKNPU"};
    k->versions++;
    fk_wr32(arg, 0, driver == FK_ROCKET ? 1 : 0);
    fk_wr32(arg, 4, driver == FK_ROCKET ? 0 : 9);
    fk_wr32(arg, 8, driver == FK_ROCKET ? 0 : 8);
    for (int i = 0; i < 3; i++) {
        size_t loff = base + (size_t)i * 2 * ps, poff = loff + ps;
        size_t cap = fk_rdsz(arg, loff), len = strlen(strs[i]);
        char *dst = fk_rdptr(arg, poff);
        if (dst && cap) memcpy(dst, strs[i], len < cap ? len : cap);
        fk_wrsz(arg, loff, len);
    }
    return 0;
}

/* The vendor driver's RKNPU_SUBMIT in PC mode (reference 9.3). */
static inline int fk_rknpu_submit(fake_kernel *k, void *arg)
{
    uint32_t flags = fk_rd32(arg, 0), task_start = fk_rd32(arg, 8), task_number = fk_rd32(arg, 12);
    uint64_t task_obj = fk_rd64(arg, 24);
    uint32_t mask = fk_rd32(arg, 56);
    k->submits++;
    k->last_core_mask = mask;
    if (!(flags & 1) || !task_number || mask > 7) return fk_err(EINVAL);
    fk_bo *tb = fk_bo_by_obj(k, task_obj);
    if (!tb || !(tb->flags & 0x8)) return fk_err(EFAULT); /* read through the kernel mapping */
    uint64_t ntasks = tb->size / 40;
    int ncores = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
    for (int ci = 0; ci < 3; ci++) {
        int core = k->reverse_cores ? 2 - ci : ci;
        uint32_t start = task_start, number = task_number;
        if (k->cores == 1) {
            if (core > 0) continue;
        } else {
            if (!(mask & (1u << core))) continue;
            int slot = ncores == 3 ? core + 2 : core;
            start = fk_rd32(arg, 64 + 8 * (size_t)slot);
            number = fk_rd32(arg, 68 + 8 * (size_t)slot);
        }
        if (!number || (uint64_t)start + number > ntasks) return fk_err(EINVAL);
        const uint8_t *first = tb->mem + 40 * (size_t)start;
        const uint8_t *last = tb->mem + 40 * ((size_t)start + number - 1);
        uint32_t regcfg_amount = fk_rd32(first, 24);
        uint64_t regcmd = fk_rd64(first, 32);
        uint32_t amount = (regcfg_amount + 4 + 2 - 1) / 2 - 1;
        if (k->nruns < 32)
            k->runs[k->nruns++] = (fk_core_run){core, (uint32_t)regcmd, amount, number};
        npk_error err = {0};
        npk_rk_emu_stats_clear(k->emu);
        if (npk_rk_emu_run_core(k->emu, core, (uint32_t)regcmd, amount, number, &err)) {
            snprintf(k->last_error, sizeof k->last_error, "%s", err.msg);
            return fk_err(ETIMEDOUT); /* a stream that does not finish: the job times out */
        }
        /* The job is done when INT_STATUS, folded pairwise, equals int_mask. */
        uint32_t st = npk_rk_emu_stats_get(k->emu)->int_status[core], folded = 0;
        for (int pair = 0; pair < 6; pair++)
            if (st & (3u << (2 * pair))) folded |= 3u << (2 * pair);
        if (folded != fk_rd32(last, 12)) return fk_err(ETIMEDOUT);
    }
    fk_wr32(arg, 16, task_number); /* task_counter */
    return 0;
}

static inline int fk_rknpu_ioctl(fake_kernel *k, int node, unsigned long req, void *arg)
{
    switch (req) {
    case FK_RKNPU_ACTION: {
        uint32_t f = fk_rd32(arg, 0);
        if (f == 6) {
            k->resets++;
            return 0;
        }
        if (f == 1) {
            fk_wr32(arg, 4, 908); /* 0.9.8 */
            return 0;
        }
        return fk_err(EINVAL);
    }
    case FK_RKNPU_MEM_CREATE: {
        fk_bo *b = fk_bo_new(k, node, fk_rd64(arg, 8), fk_rd32(arg, 4));
        if (!b) return fk_err(ENOMEM);
        k->creates++;
        fk_wr32(arg, 0, b->handle);
        fk_wr64(arg, 16, b->obj_addr);
        fk_wr64(arg, 24, b->dma);
        return 0;
    }
    case FK_RKNPU_MEM_MAP: {
        fk_bo *b = fk_bo_by_handle(k, node, fk_rd32(arg, 0));
        if (!b) return fk_err(EINVAL);
        fk_wr64(arg, 8, b->mmap_off);
        return 0;
    }
    case FK_RKNPU_MEM_DESTROY: {
        fk_bo *b = fk_bo_by_handle(k, node, fk_rd32(arg, 0));
        if (!b || b->obj_addr != fk_rd64(arg, 8)) return fk_err(EINVAL);
        k->destroys++;
        fk_bo_free(k, b);
        return 0;
    }
    case FK_RKNPU_MEM_SYNC: {
        uint32_t f = fk_rd32(arg, 0);
        fk_bo *b = fk_bo_by_obj(k, fk_rd64(arg, 8));
        uint64_t off = fk_rd64(arg, 16), size = fk_rd64(arg, 24);
        /* Only cacheable buffers can be synced (unverified against a board). */
        if (!b || !(b->flags & 0x2) || off + size > b->size || (f != 1 && f != 2))
            return fk_err(EINVAL);
        if (f == 1)
            k->syncs_to++;
        else
            k->syncs_from++;
        return 0;
    }
    case FK_RKNPU_SUBMIT: return fk_rknpu_submit(k, arg);
    }
    return fk_err(ENOTTY);
}

/* The rocket driver's SUBMIT (reference 10.1-10.2): each task of a job runs
 * alone with PC_REGISTER_AMOUNTS = (regcmd_count + 1) / 2 - 1; jobs go to
 * the cores in turn. */
static inline int fk_rocket_submit(fake_kernel *k, int node, void *arg)
{
    const uint8_t *jobs = fk_rdptr64(arg, 0);
    uint32_t njobs = fk_rd32(arg, 8), jsize = fk_rd32(arg, 12);
    if (fk_rd64(arg, 16) != 0 || jsize < 40 || !jobs) return fk_err(EINVAL);
    k->submits++;
    for (uint32_t jn = 0; jn < njobs; jn++) {
        uint32_t j = k->reverse_cores ? njobs - 1 - jn : jn;
        const uint8_t *job = jobs + (size_t)j * jsize;
        const uint8_t *tasks = fk_rdptr64(job, 0);
        const uint32_t *in = fk_rdptr64(job, 8), *out = fk_rdptr64(job, 16);
        uint32_t ntasks = fk_rd32(job, 24), tsize = fk_rd32(job, 28);
        uint32_t nin = fk_rd32(job, 32), nout = fk_rd32(job, 36);
        if (!tasks || tsize < 8 || !ntasks) return fk_err(EINVAL);
        for (uint32_t i = 0; i < nin; i++)
            if (!fk_bo_by_handle(k, node, fk_rd32(in, 4 * (size_t)i))) return fk_err(ENOENT);
        for (uint32_t i = 0; i < nout; i++)
            if (!fk_bo_by_handle(k, node, fk_rd32(out, 4 * (size_t)i))) return fk_err(ENOENT);
        int core = (int)(k->rocket_jobs++ % (uint32_t)k->cores);
        for (uint32_t t = 0; t < ntasks; t++) {
            const uint8_t *task = tasks + (size_t)t * tsize;
            uint32_t regcmd = fk_rd32(task, 0), count = fk_rd32(task, 4);
            uint32_t amount = (count + 1) / 2 - 1;
            if (k->nrocket_tasks < 64) k->rocket_task_counts[k->nrocket_tasks++] = count;
            if (k->nruns < 32) k->runs[k->nruns++] = (fk_core_run){core, regcmd, amount, 1};
            npk_error err = {0};
            if (npk_rk_emu_run_core(k->emu, core, regcmd, amount, 1, &err)) {
                snprintf(k->last_error, sizeof k->last_error, "%s", err.msg);
                return fk_err(ETIMEDOUT);
            }
        }
    }
    return 0;
}

static inline int fk_rocket_ioctl(fake_kernel *k, int node, unsigned long req, void *arg)
{
    switch (req) {
    case FK_ROCKET_CREATE_BO: {
        fk_bo *b = fk_bo_new(k, node, fk_rd32(arg, 0), 0);
        if (!b) return fk_err(ENOMEM);
        k->creates++;
        fk_wr32(arg, 4, b->handle);
        fk_wr64(arg, 8, b->dma);
        fk_wr64(arg, 16, b->mmap_off);
        return 0;
    }
    case FK_ROCKET_SUBMIT: return fk_rocket_submit(k, node, arg);
    case FK_ROCKET_PREP_BO:
        if (!fk_bo_by_handle(k, node, fk_rd32(arg, 0)) || fk_rd32(arg, 4) ||
            (int64_t)fk_rd64(arg, 8) <= 0)
            return fk_err(EINVAL);
        k->preps++;
        return 0;
    case FK_ROCKET_FINI_BO:
        if (!fk_bo_by_handle(k, node, fk_rd32(arg, 0)) || fk_rd32(arg, 4)) return fk_err(EINVAL);
        k->finis++;
        return 0;
    case FK_GEM_CLOSE: {
        fk_bo *b = fk_bo_by_handle(k, node, fk_rd32(arg, 0));
        if (!b || fk_rd32(arg, 4)) return fk_err(EINVAL);
        k->gem_closes++;
        fk_bo_free(k, b);
        return 0;
    }
    }
    return fk_err(ENOTTY);
}

static inline int fk_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    fake_kernel *k = ctx;
    int node = fk_node_of(k, fd);
    if (node < 0) return fk_err(EBADF);
    if (k->fail_req == req && k->fail_after-- == 0) return fk_err(k->fail_errno);
    int driver = k->nodes[node].driver;
    if (req == FK_DRM_VERSION) return fk_version(k, driver, arg);
    if (driver == FK_RKNPU) return fk_rknpu_ioctl(k, node, req, arg);
    if (driver == FK_ROCKET) return fk_rocket_ioctl(k, node, req, arg);
    return fk_err(ENOTTY);
}

static inline npk_rk_sys fk_sys(fake_kernel *k)
{
    npk_rk_sys s = {fk_open, fk_close, fk_ioctl, fk_mmap, fk_munmap, k};
    return s;
}

#endif
