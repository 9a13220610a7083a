/* Coral Edge TPU USB runtime: a transport interface (libusb-1.0 or the
 * emulated accelerator of edgetpu_emu.h), firmware upload over DFU, the
 * open/initialisation sequence, parameter caching, and execution of a
 * compiled model by following its DMA hints exactly.
 *
 * Typical use:
 *   npk_etpu_plan_init(&model, &plan, err);        // validates hints: no transfer yet
 *   npk_etpu_usb_open(-1, &transport, err);         // or npk_etpu_emu_transport(emu)
 *   npk_etpu_open(transport, &opts, &dev, err);     // DFU firmware if needed, init sequence
 *   npk_etpu_run(dev, &plan, inputs, outputs, &info, err);   // repeatable
 * Facts and their status: docs/edgetpu.md ("USB runtime"). */
#ifndef NPUKIT_EDGETPU_USB_H
#define NPUKIT_EDGETPU_USB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/edgetpu.h"
#include "npukit/edgetpu_csr.h"
#include "npukit/error.h"
#include "npukit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- transport: what the runtime needs from a USB device ---- */

typedef struct npk_etpu_setup {
    uint8_t request_type, request;
    uint16_t value, index, length;
} npk_etpu_setup;

typedef struct npk_etpu_transport_ops {
    /* A control transfer; data holds setup->length bytes (in or out); *done
     * receives the bytes transferred. */
    npk_status (*control)(void *ctx, const npk_etpu_setup *setup, uint8_t *data, size_t *done,
                          unsigned timeout_ms, npk_error *err);
    /* A bulk-out transfer of exactly len bytes. */
    npk_status (*bulk_out)(void *ctx, uint8_t ep, const uint8_t *data, size_t len,
                           unsigned timeout_ms, npk_error *err);
    /* A bulk-in transfer of at most cap bytes; *got receives the count. */
    npk_status (*bulk_in)(void *ctx, uint8_t ep, uint8_t *buf, size_t cap, size_t *got,
                          unsigned timeout_ms, npk_error *err);
    /* USB port reset; the device re-enumerates (DFU -> application mode
     * after a firmware upload) and the transport finds it again, updating
     * vid/pid. */
    npk_status (*reset)(void *ctx, npk_error *err);
    void (*close)(void *ctx);
} npk_etpu_transport_ops;

typedef struct npk_etpu_transport {
    const npk_etpu_transport_ops *ops;
    void *ctx;
    uint16_t vid, pid;          /* current identity: application or DFU mode */
    bool high_speed;            /* USB 2 high speed (outfeed chunks of 256 bytes) */
    uint16_t dfu_interface;     /* DFU mode: interface number of the DFU interface */
    uint16_t dfu_transfer_size; /* DFU mode: wTransferSize of its functional descriptor */
    char name[64];              /* for messages: "usb 1-4", "emulator" */
} npk_etpu_transport;

static inline bool npk_etpu_transport_is_dfu(const npk_etpu_transport *t)
{
    return t->vid == NPK_ETPU_DFU_VID && t->pid == NPK_ETPU_DFU_PID;
}
/* Close through the transport's own close (frees what its constructor made). */
void npk_etpu_transport_close(npk_etpu_transport *t);

/* ---- libusb-1.0 (NPK_E_UNSUPPORTED in builds without it) ---- */

typedef struct npk_etpu_usb_info {
    uint8_t bus, address;
    uint16_t vid, pid;
    bool dfu;      /* bootloader mode: needs a firmware upload */
    int speed;     /* libusb speed: 2 full, 3 high, 4 super, 0 unknown */
    char port[32]; /* "1-4.2" */
} npk_etpu_usb_info;

/* Accelerators on the bus, application and DFU mode. *count may be 0. */
npk_status npk_etpu_usb_list(npk_etpu_usb_info *out, size_t max, size_t *count, npk_error *err);
/* Open the index-th accelerator of npk_etpu_usb_list (-1: the first). */
npk_status npk_etpu_usb_open(int index, npk_etpu_transport **out, npk_error *err);
/* True when this build has libusb. */
bool npk_etpu_usb_available(void);

/* ---- firmware ---- */

/* Upload a firmware image to a device in DFU mode (DNLOAD blocks of the
 * transfer size, each followed by GETSTATUS; a zero-length DNLOAD; UPLOAD
 * read-back compared with the image; USB reset into application mode). */
npk_status npk_etpu_dfu_upload(npk_etpu_transport *t, const uint8_t *fw, size_t size,
                               unsigned timeout_ms, npk_error *err);

/* ---- an opened, initialised accelerator ---- */

typedef struct npk_etpu_device npk_etpu_device;

typedef struct npk_etpu_open_opts {
    const uint8_t *firmware; /* needed when the device is in DFU mode */
    size_t firmware_size;
    unsigned timeout_ms; /* per transfer and per register poll; 0: NPK_ETPU_TIMEOUT_MS */
} npk_etpu_open_opts;

/* Upload the firmware when the device is in DFU mode, then run the
 * initialisation sequence (docs/edgetpu.md). The transport must outlive
 * the device; npk_etpu_close does not close it. */
npk_status npk_etpu_open(npk_etpu_transport *t, const npk_etpu_open_opts *o, npk_etpu_device **out,
                         npk_error *err);
void npk_etpu_close(npk_etpu_device *d);
/* CSR access (address from the table; width from the table). */
npk_status npk_etpu_csr_read(npk_etpu_device *d, npk_etpu_csr_id id, uint64_t *value,
                             npk_error *err);
npk_status npk_etpu_csr_write(npk_etpu_device *d, npk_etpu_csr_id id, uint64_t value,
                              npk_error *err);
/* The e-fuse programming revision read during initialisation. */
unsigned npk_etpu_device_efuse_revision(const npk_etpu_device *d);

/* ---- what to run: the executables of a model, validated before any transfer ---- */

#define NPK_ETPU_MAX_LAYER_BYTES    ((size_t)256 << 20)
#define NPK_ETPU_MAX_INPUT_OVERREAD 65536 /* input DMAs may read this far past their layer */

typedef struct npk_etpu_plan {
    const npk_etpu_model *model;
    uint32_t op;                   /* index into model->ops */
    uint32_t package;              /* the op's package that runs (chip "beagle") */
    const npk_etpu_executable *pc; /* PARAMETER_CACHING executable, NULL when there is none */
    const npk_etpu_executable *eo; /* the executable that runs (EO or stand-alone) */
    uint64_t param_hash;           /* of pc->parameters: the cache key together with the token */
    uint64_t pc_code_hash;         /* of pc's instructions: which parameter region it loads */
    uint32_t ninputs, noutputs;    /* eo's layers */
    size_t *input_span; /* per input layer: bytes its DMAs read (size_bytes or more: zero-padded) */
    uint32_t
        *output_steps; /* per output layer: output DMA steps that fill it (0: not transferred) */
} npk_etpu_plan;

/* Select the executables of Edge TPU op `op` (its first package for the
 * chip "beagle": EO + PC, or stand-alone) and check everything the runtime
 * relies on: hint kinds and directions, sizes, layers named by the hints,
 * instruction chunks, parameters. A malformed plan is rejected here, before
 * any transfer. */
npk_status npk_etpu_plan_init_op(const npk_etpu_model *m, uint32_t op, npk_etpu_plan *p,
                                 npk_error *err);
/* The same for a model with exactly one Edge TPU op. */
npk_status npk_etpu_plan_init(const npk_etpu_model *m, npk_etpu_plan *p, npk_error *err);
void npk_etpu_plan_free(npk_etpu_plan *p);
/* Index of the input/output layer of that name, or -1. */
int npk_etpu_plan_input(const npk_etpu_plan *p, const char *name);
int npk_etpu_plan_output(const npk_etpu_plan *p, const char *name);

/* ---- execution ---- */

typedef struct npk_etpu_run_info {
    bool parameters_uploaded; /* the PC executable ran (cache miss) */
    uint32_t output_steps;    /* output DMA steps read */
    uint64_t bytes_out, bytes_in;
} npk_etpu_run_info;

/* Run the plan: the PC executable unless the device holds these parameters,
 * then the EO executable, following each
 * executable's DMA hints in order. inputs[i] holds eo->inputs[i].size_bytes
 * device bytes (input DMAs read from their own layer's buffer, zero-padded
 * past its end); outputs[i] receives eo->outputs[i].size_bytes device
 * bytes (in device/tiled order: see npk_etpu_layer_to_tensor). After a
 * transfer failure the device must be reopened. */
npk_status npk_etpu_run(npk_etpu_device *d, const npk_etpu_plan *p, const uint8_t *const *inputs,
                        uint8_t *const *outputs, npk_etpu_run_info *info, npk_error *err);
/* Parameter caching follows libedgetpu: the device holds the parameters of
 * one caching token at a time, for every PC executable of that token that
 * ran since (co-compiled models share a token and keep each other's
 * parameters); a plan with another token (or token 0) drops them all. A
 * plan's parameters count as held only when the last upload by the same PC
 * instructions (the same parameter region) carried the same bytes (by
 * hash): set-weights keeps the token and the instructions while the bytes
 * change.
 * Forget the cached parameters (the next run uploads them). */
void npk_etpu_forget_parameters(npk_etpu_device *d);

/* ---- tensors <-> device bytes of a layer ---- */

/* Elements of a layer (y * x * z) and its element size; false for unknown types. */
bool npk_etpu_layer_count(const npk_etpu_layer *l, size_t *count, size_t *elem);
/* Device bytes (l->size_bytes, zero-padded) of an input layer from a tensor
 * with y * x * z elements: uint8/int8/uint16/int16 matching the layer's
 * data type are used as is (signed types travel offset by 0x80 / 0x8000,
 * i.e. XOR of the sign bit), float tensors are quantised with the layer's
 * numerics (round half to even, saturating). */
npk_status npk_etpu_layer_from_tensor(const npk_etpu_layer *l, const npk_tensor *t, uint8_t *dev,
                                      size_t dev_size, npk_error *err);
/* An output layer's device bytes as a tensor: de-tiled (npk_etpu_relayout),
 * then dequantised to float32 with the layer's numerics, or (raw) in the
 * layer's integer type. shape/ndim: the TFLite tensor's shape when given
 * (its element count must match), else [y, x, z]. */
npk_status npk_etpu_layer_to_tensor(const npk_etpu_layer *l, const uint8_t *dev, size_t dev_size,
                                    bool raw, const int64_t *shape, int ndim, npk_tensor *t,
                                    npk_error *err);
/* The TFLite tensor of the model's first Edge TPU op named like a layer (NULL if none). */
const npk_tfl_tensor *npk_etpu_layer_tensor(const npk_etpu_model *m, const npk_etpu_layer *l);
/* The same for Edge TPU op `op`. */
const npk_tfl_tensor *npk_etpu_op_layer_tensor(const npk_etpu_model *m, uint32_t op,
                                               const npk_etpu_layer *l);

#ifdef __cplusplus
}
#endif
#endif
