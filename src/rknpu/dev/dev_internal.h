/* The device interface's internals: the operations each backend provides
 * and the buffers they hand out. */
#ifndef NPK_RKNPU_DEV_INTERNAL_H
#define NPK_RKNPU_DEV_INTERNAL_H

#include "npukit/rknpu_device.h"
#include "npukit/rknpu_plan.h"

/* What a buffer is for (backends pick memory flags from it). */
typedef enum dev_use { USE_DATA, USE_REGCMD, USE_TASKS } dev_use;

typedef struct dev_buf {
    uint8_t *host;
    uint64_t size;
    uint32_t dma; /* NPU address */
    /* backend bookkeeping */
    uint32_t handle;
    uint64_t obj_addr;
    uint64_t map_size;
    unsigned flags;
    bool live;
} dev_buf;

/* The buffers of one run, in this order (BUF_INPUT2 only for layers with a
 * second input: ADD and fused adds). */
enum { BUF_INPUT, BUF_WEIGHTS, BUF_OUTPUT, BUF_REGCMD, BUF_COUNT, BUF_INPUT2 = BUF_COUNT, BUF_MAX };

/* What a backend submits: the task records (streams already in the regcmd
 * buffer), the vendor submit record, and each core's contiguous task range. */
typedef struct dev_job {
    size_t count;
    const npk_rknpu_task *records;
    const npk_rknpu_submit *submit;
    int cores;
    const uint32_t *core_first, *core_count;
    const size_t *entries; /* per task: stream entries, tail included (rocket's regcmd_count) */
    dev_buf *bufs;         /* BUF_MAX slots; the live ones take part */
} dev_job;

typedef struct dev_ops {
    npk_status (*alloc)(npk_rk_device *d, dev_buf *b, uint64_t size, dev_use use, npk_error *err);
    void (*release)(npk_rk_device *d, dev_buf *b);
    /* Before the CPU touches a buffer, and after (the device owns it again). */
    npk_status (*cpu_begin)(npk_rk_device *d, dev_buf *b, npk_error *err);
    npk_status (*cpu_end)(npk_rk_device *d, dev_buf *b, npk_error *err);
    npk_status (*run)(npk_rk_device *d, const dev_job *j, npk_error *err);
    void (*close)(npk_rk_device *d);
} dev_ops;

struct npk_rk_device {
    const dev_ops *ops;
    npk_rk_devkind kind;
    npk_rk_form form;
    char name[320];
    const npk_rk_sys *sys;
    int fd;
    npk_rk_emu *emu;   /* emulator device */
    uint32_t next_dma; /* emulator device: bump allocator */
};

/* Backends. */
npk_status dev_emu_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err);
npk_status dev_vendor_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err);
npk_status dev_rocket_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err);

/* Shared by the hardware backends (dev_sys.c). */
/* ioctl through the table, retried on EINTR/EAGAIN; on failure an error
 * naming the request. */
npk_status dev_ioctl(npk_rk_device *d, unsigned long req, void *arg, const char *what,
                     npk_error *err);
/* DRM_IOCTL_VERSION on fd into n (driver, version, date, description). */
int dev_drm_version(const npk_rk_sys *sys, int fd, npk_rk_devnode *n);
/* Open `path`, or find the first node of `kind`; check its driver. */
npk_status dev_open_node(const npk_rk_open_opts *o, npk_rk_devkind kind, npk_rk_device *d,
                         npk_error *err);
/* mmap a buffer through the table (read/write, shared). */
npk_status dev_map(npk_rk_device *d, dev_buf *b, uint64_t offset, const char *what, npk_error *err);

#endif
