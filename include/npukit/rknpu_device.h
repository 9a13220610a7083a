/* Running matmuls on an RKNPU: one device interface with three
 * implementations -- the emulator, the vendor "rknpu" DRM driver
 * (/dev/dri/card* or renderD*) and the mainline "rocket" accel driver
 * (/dev/accel/accel*) -- and the end-to-end path (plan, lay out, run, read
 * back, convert to row-major).
 *
 * The hardware backends reach the kernel only through an npk_rk_sys table
 * of system calls (open, close, ioctl, mmap, munmap). It defaults to the
 * real calls; tests substitute a fake kernel driver that decodes the raw
 * ioctl requests and runs the submitted streams on the emulator. */
#ifndef NPUKIT_RKNPU_DEVICE_H
#define NPUKIT_RKNPU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_matmul.h"

#ifdef __cplusplus
extern "C" {
#endif

/* System calls as the backends use them; each returns what the libc call
 * returns and sets errno on failure. `ctx` is passed back unchanged. */
typedef struct npk_rk_sys {
    int (*open)(void *ctx, const char *path, int flags);
    int (*close)(void *ctx, int fd);
    int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
    void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, int64_t offset);
    int (*munmap)(void *ctx, void *addr, size_t len);
    void *ctx;
} npk_rk_sys;

/* The real system calls (on a system without them, every call fails with
 * ENOSYS). */
const npk_rk_sys *npk_rk_sys_default(void);

typedef enum npk_rk_devkind { NPK_RK_DEV_EMU, NPK_RK_DEV_RKNPU, NPK_RK_DEV_ROCKET } npk_rk_devkind;

const char *npk_rk_devkind_name(npk_rk_devkind k); /* "emu", "rknpu", "rocket" */
bool npk_rk_devkind_parse(const char *name, npk_rk_devkind *k);

/* ---- device nodes ---- */

typedef struct npk_rk_devnode {
    char path[256];
    npk_rk_devkind kind; /* RKNPU or ROCKET */
    char driver[32];     /* the DRM driver name: "rknpu" or "rocket" */
    int major, minor, patch;
    char date[32];
    char desc[96];
} npk_rk_devnode;

/* The directories searched by default: /dev/dri (card*, renderD*) and
 * /dev/accel (accel*). */
extern const char *const npk_rk_default_dev_dirs[];

/* NPU device nodes that can be opened, with their driver's version
 * (DRM_IOCTL_VERSION). Nodes of other drivers and nodes that cannot be
 * opened are left out. dirs: NULL-terminated, NULL for the defaults;
 * sys: NULL for the real calls. No node found is not an error. */
npk_status npk_rk_devices_list(const npk_rk_sys *sys, const char *const *dirs, npk_rk_devnode *out,
                               size_t cap, size_t *count, npk_error *err);

/* ---- devices ---- */

typedef struct npk_rk_device npk_rk_device;

typedef struct npk_rk_open_opts {
    const npk_rk_sys *sys;       /* NULL: the real system calls */
    const char *path;            /* device node; NULL: the first node of the driver */
    const char *const *dev_dirs; /* where to look when path is NULL (NULL: defaults) */
    int emu_cores;               /* emulator: 1 or 3 (0: 3) */
} npk_rk_open_opts;

npk_status npk_rk_device_open(npk_rk_devkind kind, const npk_rk_open_opts *o, npk_rk_device **out,
                              npk_error *err);
void npk_rk_device_close(npk_rk_device *d);
/* "emulator (3 cores)", "rknpu 0.9.8 at /dev/dri/card1", ... */
const char *npk_rk_device_name(const npk_rk_device *d);
npk_rk_devkind npk_rk_device_kind(const npk_rk_device *d);
/* The stream form the device runs (vendor for the emulator and rknpu). */
npk_rk_form npk_rk_device_form(const npk_rk_device *d);
/* The emulator behind an emulator device (NULL otherwise). Its buffers are
 * tracked mappings (npk_rk_emu_map_tracked): a caller writing one through
 * a pointer kept from npk_rk_emu_host calls npk_rk_emu_touch afterwards. */
npk_rk_emu *npk_rk_device_emu(npk_rk_device *d);

/* ---- end to end ---- */

typedef struct npk_rk_run_opts {
    uint32_t m, k, n;
    npk_rk_dtype dtype;
    int cores; /* 1..3 */
} npk_rk_run_opts;

typedef struct npk_rk_run_info {
    size_t tasks;
    int cores;
    npk_rk_form form;
} npk_rk_run_info;

/* C = A . B on the device. a: M x K, b: K x N (row-major, host order: fp16
 * bits for the fp16 paths, int8 for int8); c: M x N of the output type
 * (float, fp16 bits, int32). c holds the result only when the call
 * succeeds. */
npk_status npk_rk_run_matmul(npk_rk_device *d, const npk_rk_run_opts *o, const void *a,
                             const void *b, void *c, npk_rk_run_info *info, npk_error *err);

/* A layer (npukit/rknpu_layer.h) on the device: plans it for the device's
 * stream form and buffer addresses over `cores` cores, lays the input out
 * (x: NHWC of the layer's type; x2: the second input of an ADD or a fused
 * add, else NULL), runs, and reads the output back into y (NHWC). y holds
 * the result only when the call succeeds. */
npk_status npk_rk_run_layer(npk_rk_device *d, const npk_rk_layer *l, int cores, const void *x,
                            const void *x2, void *y, npk_rk_run_info *info, npk_error *err);

/* ---- checking a result ---- */

typedef struct npk_rk_check {
    double max_abs, max_rel; /* largest |c - ref| and |c - ref| / |ref| over the elements
                                whose reference is finite and that are finite in c */
    size_t worst;            /* index of the element furthest outside its bound (or max_abs) */
    size_t bad;              /* elements outside their bound, or non-finite in c where the
                                reference is finite */
    size_t nonfinite_c;      /* of those: NaN or inf in c where the reference is finite */
    size_t first_nonfinite_c;
    size_t unchecked; /* elements whose reference is NaN or inf (from NaN/inf inputs) */
    size_t nonfinite_a, nonfinite_b;             /* NaN or inf elements in A and in B */
    size_t first_nonfinite_a, first_nonfinite_b; /* the first of each (row-major index) */
} npk_rk_check;

/* Compare c with a CPU reference computed in double (int64 for int8).
 * Bound per element: exact for int8; for fp16 inputs, fp32 accumulation
 * error (K + 2) * 2^-24 * sum |a.b|, plus one fp16 ulp for fp16 output.
 * An element whose reference is NaN or inf (NaN/inf in A or B) cannot be
 * checked and is counted in `unchecked`; NaN or inf in c where the
 * reference is finite is always a failure. */
npk_status npk_rk_check_matmul(const npk_rk_run_opts *o, const void *a, const void *b,
                               const void *c, npk_rk_check *out, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
