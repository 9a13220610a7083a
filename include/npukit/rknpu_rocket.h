/* The mainline "rocket" accel driver's uAPI (Linux >= 6.18,
 * include/uapi/drm/rocket_accel.h, final revision) and the two DRM core
 * ioctls both NPU backends use (DRM_IOCTL_VERSION, DRM_IOCTL_GEM_CLOSE,
 * from include/uapi/drm/drm.h). Layouts are pinned with _Static_assert in
 * src/rknpu/dev/rocket_uapi.c. Ioctl numbers use the asm-generic encoding (see
 * npukit/rknpu_uapi.h). */
#ifndef NPUKIT_RKNPU_ROCKET_H
#define NPUKIT_RKNPU_ROCKET_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/rknpu_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DRM_IOCTL_ROCKET_*: DRM_COMMAND_BASE + nr. */
#define NPK_ROCKET_IOCTL_CREATE_BO 0xC0186440ul /* IOWR 0x00 */
#define NPK_ROCKET_IOCTL_SUBMIT    0x40186441ul /* IOW 0x01 */
#define NPK_ROCKET_IOCTL_PREP_BO   0x40106442ul /* IOW 0x02 */
#define NPK_ROCKET_IOCTL_FINI_BO   0x40086443ul /* IOW 0x03 */

/* struct drm_rocket_create_bo. 24 bytes. */
typedef struct npk_rocket_create_bo {
    uint32_t size;        /* in */
    uint32_t handle;      /* out */
    uint64_t dma_address; /* out: NPU virtual address (one IOMMU domain per open file) */
    uint64_t offset;      /* out: for mmap */
} npk_rocket_create_bo;

/* struct drm_rocket_task: one register-command stream. 8 bytes. */
typedef struct npk_rocket_task {
    uint32_t regcmd;       /* DMA address of the stream */
    uint32_t regcmd_count; /* entries, tail included */
} npk_rocket_task;

/* struct drm_rocket_job: tasks run one after another on one core. 40 bytes. */
typedef struct npk_rocket_job {
    uint64_t tasks;          /* user pointer to task_count npk_rocket_task */
    uint64_t in_bo_handles;  /* user pointer to u32 handles read by the job */
    uint64_t out_bo_handles; /* user pointer to u32 handles written by the job */
    uint32_t task_count;
    uint32_t task_struct_size;
    uint32_t in_bo_handle_count;
    uint32_t out_bo_handle_count;
} npk_rocket_job;

/* struct drm_rocket_submit. 24 bytes. */
typedef struct npk_rocket_submit {
    uint64_t jobs; /* user pointer to job_count npk_rocket_job */
    uint32_t job_count;
    uint32_t job_struct_size;
    uint64_t reserved; /* 0 */
} npk_rocket_submit;

/* struct drm_rocket_prep_bo: wait for the NPU and make the BO CPU-coherent. 16 bytes. */
typedef struct npk_rocket_prep_bo {
    uint32_t handle;
    uint32_t reserved;
    int64_t timeout_ns;
} npk_rocket_prep_bo;

/* struct drm_rocket_fini_bo: hand the BO back to the device. 8 bytes. */
typedef struct npk_rocket_fini_bo {
    uint32_t handle;
    uint32_t reserved;
} npk_rocket_fini_bo;

#define NPK_ROCKET_CREATE_BO_SIZE 24
#define NPK_ROCKET_TASK_SIZE      8
#define NPK_ROCKET_JOB_SIZE       40
#define NPK_ROCKET_SUBMIT_SIZE    24
#define NPK_ROCKET_PREP_BO_SIZE   16
#define NPK_ROCKET_FINI_BO_SIZE   8

/* ---- DRM core (both backends) ---- */

/* struct drm_version: native C types, so its size depends on the ABI
 * (64 bytes on LP64, 36 on ILP32); the ioctl number carries that size. */
typedef struct npk_drm_version {
    int version_major;
    int version_minor;
    int version_patchlevel;
    size_t name_len; /* in: buffer size; out: the name's length */
    char *name;
    size_t date_len;
    char *date;
    size_t desc_len;
    char *desc;
} npk_drm_version;

#define NPK_DRM_IOCTL_VERSION                                                                      \
    NPK_IOC(NPK_IOC_READ | NPK_IOC_WRITE, 'd', 0x00u, sizeof(npk_drm_version))

/* struct drm_gem_close: frees a GEM handle (rocket BOs). 8 bytes. */
typedef struct npk_drm_gem_close {
    uint32_t handle;
    uint32_t pad;
} npk_drm_gem_close;

#define NPK_DRM_IOCTL_GEM_CLOSE 0x40086409ul /* IOW 0x09 */

#ifdef __cplusplus
}
#endif
#endif
