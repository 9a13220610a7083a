/* Layout checks of the rocket and DRM core structs: the kernel reads them as
 * its headers lay them out, and a drift would break the ioctls silently. */
#include <stddef.h>

#include "npukit/rknpu_rocket.h"

_Static_assert(sizeof(npk_rocket_create_bo) == NPK_ROCKET_CREATE_BO_SIZE, "create_bo: 24 bytes");
_Static_assert(offsetof(npk_rocket_create_bo, handle) == 4, "create_bo.handle");
_Static_assert(offsetof(npk_rocket_create_bo, dma_address) == 8, "create_bo.dma_address");
_Static_assert(offsetof(npk_rocket_create_bo, offset) == 16, "create_bo.offset");
_Static_assert(sizeof(npk_rocket_task) == NPK_ROCKET_TASK_SIZE, "rocket task: 8 bytes");
_Static_assert(offsetof(npk_rocket_task, regcmd_count) == 4, "task.regcmd_count");
_Static_assert(sizeof(npk_rocket_job) == NPK_ROCKET_JOB_SIZE, "rocket job: 40 bytes");
_Static_assert(offsetof(npk_rocket_job, in_bo_handles) == 8, "job.in_bo_handles");
_Static_assert(offsetof(npk_rocket_job, out_bo_handles) == 16, "job.out_bo_handles");
_Static_assert(offsetof(npk_rocket_job, task_count) == 24, "job.task_count");
_Static_assert(offsetof(npk_rocket_job, task_struct_size) == 28, "job.task_struct_size");
_Static_assert(offsetof(npk_rocket_job, in_bo_handle_count) == 32, "job.in_bo_handle_count");
_Static_assert(offsetof(npk_rocket_job, out_bo_handle_count) == 36, "job.out_bo_handle_count");
_Static_assert(sizeof(npk_rocket_submit) == NPK_ROCKET_SUBMIT_SIZE, "rocket submit: 24 bytes");
_Static_assert(offsetof(npk_rocket_submit, job_count) == 8, "submit.job_count");
_Static_assert(offsetof(npk_rocket_submit, job_struct_size) == 12, "submit.job_struct_size");
_Static_assert(offsetof(npk_rocket_submit, reserved) == 16, "submit.reserved");
_Static_assert(sizeof(npk_rocket_prep_bo) == NPK_ROCKET_PREP_BO_SIZE, "prep_bo: 16 bytes");
_Static_assert(offsetof(npk_rocket_prep_bo, timeout_ns) == 8, "prep_bo.timeout_ns");
_Static_assert(sizeof(npk_rocket_fini_bo) == NPK_ROCKET_FINI_BO_SIZE, "fini_bo: 8 bytes");
_Static_assert(sizeof(npk_drm_gem_close) == 8, "drm_gem_close: 8 bytes");

_Static_assert(sizeof(npk_drm_version) == 3 * sizeof(int) + (sizeof(size_t) == 8 ? 4 : 0) +
                                              3 * (sizeof(size_t) + sizeof(char *)),
               "drm_version: 64 bytes on LP64, 36 on ILP32");
_Static_assert(offsetof(npk_drm_version, name_len) == (sizeof(size_t) == 8 ? 16 : 12),
               "drm_version.name_len");

#define W  NPK_IOC_WRITE
#define RW (NPK_IOC_READ | NPK_IOC_WRITE)
_Static_assert(NPK_ROCKET_IOCTL_CREATE_BO ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 0, sizeof(npk_rocket_create_bo)),
               "DRM_IOCTL_ROCKET_CREATE_BO");
_Static_assert(NPK_ROCKET_IOCTL_SUBMIT ==
                   NPK_IOC(W, 'd', NPK_DRM_COMMAND_BASE + 1, sizeof(npk_rocket_submit)),
               "DRM_IOCTL_ROCKET_SUBMIT");
_Static_assert(NPK_ROCKET_IOCTL_PREP_BO ==
                   NPK_IOC(W, 'd', NPK_DRM_COMMAND_BASE + 2, sizeof(npk_rocket_prep_bo)),
               "DRM_IOCTL_ROCKET_PREP_BO");
_Static_assert(NPK_ROCKET_IOCTL_FINI_BO ==
                   NPK_IOC(W, 'd', NPK_DRM_COMMAND_BASE + 3, sizeof(npk_rocket_fini_bo)),
               "DRM_IOCTL_ROCKET_FINI_BO");
_Static_assert(NPK_DRM_IOCTL_GEM_CLOSE == NPK_IOC(W, 'd', 0x09, sizeof(npk_drm_gem_close)),
               "DRM_IOCTL_GEM_CLOSE");
#undef W
#undef RW
