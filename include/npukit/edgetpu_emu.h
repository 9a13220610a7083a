/* An emulated Coral USB Accelerator behind the transport interface of
 * edgetpu_usb.h, for tests and demos without hardware.
 *
 * It checks every transfer against the protocol of docs/edgetpu.md: DFU
 * requests and block order; CSR addresses, access widths and the effects
 * and order of the initialisation sequence; bulk-out framing (header
 * length, tag, zero bytes), and that the frames follow the DMA hints of
 * the executable whose instruction bitstream was sent (tags, sizes, order,
 * instruction bytes, zero padding of input over-reads, overlapping input
 * DMAs agreeing); that parameters were loaded before an EO executable runs;
 * output reads of at least the pending chunk (smaller ones overflow on a
 * real device) and event reads only when an event is pending. The first
 * violation halts it: that transfer and every later one fail with
 * NPK_E_DEVICE and the message, so a runtime bug cannot pass silently.
 *
 * It answers with outputs computed by the reference executor
 * (npk_etpu_dense_run_device) from the parameters it actually received, for
 * Dense templates; with the interpreter's values on a CPU model
 * (npk_etpu_emu_set_cpu_model); and with npk_etpu_emu_fill() bytes otherwise,
 * delivered in chunks of chunk_size bytes (32 KiB) whose boundaries do not
 * follow the output steps. */
#ifndef NPUKIT_EDGETPU_EMU_H
#define NPUKIT_EDGETPU_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/edgetpu_usb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_etpu_emu npk_etpu_emu;

typedef struct npk_etpu_emu_opts {
    bool dfu;           /* start in DFU mode: a firmware upload is needed */
    bool high_speed;    /* report USB 2 high speed (expects outfeed_chunk_length 0x20) */
    size_t chunk_size;  /* output chunk size; 0: 32 KiB */
    size_t first_chunk; /* size of the first chunk of each output stream; 0: chunk_size */
    /* Disconnect: transfer number vanish_at (1-based, counting control and
     * bulk transfers) fails as a vanished device (bulk transfers move part
     * of their data first), and so does everything after it. 0: never. */
    uint64_t vanish_at;
    bool stuck_power; /* scu_ctrl_3.cur_pwr_state never changes (timeout tests) */
    uint8_t efuse_revision;
} npk_etpu_emu_opts;

typedef struct npk_etpu_emu_stats {
    uint64_t control, bulk_out, bulk_in, events; /* transfers */
    uint64_t csr_reads, csr_writes;
    uint64_t frames[3];       /* bulk-out frames per tag: instructions, input, parameters */
    uint64_t parameter_loads; /* PC executables completed */
    uint64_t executions;      /* EO / stand-alone executables completed */
    uint64_t output_bytes;    /* delivered on 0x81 */
    uint64_t dfu_blocks;      /* DNLOAD blocks with data */
    size_t firmware_size;     /* bytes of the firmware that was manifested */
    bool initialised;         /* the init sequence's effects were all present */
    bool app_mode;
} npk_etpu_emu_stats;

npk_status npk_etpu_emu_new(const npk_etpu_emu_opts *o, npk_etpu_emu **out, npk_error *err);
void npk_etpu_emu_free(npk_etpu_emu *e);
/* Models whose executables the emulator recognises by their instruction
 * bitstreams (up to 8; they must outlive it). */
npk_status npk_etpu_emu_add_model(npk_etpu_emu *e, const npk_etpu_model *m, npk_error *err);
/* Real values for a model that has no reference executor: every Edge TPU
 * op of m (added before) is answered with the interpreter's result for the
 * part of `cpu` (the uncompiled model m was compiled from) between the op's
 * input and output tensors, matched by name (each must exist once, with the
 * same type, shape and quantisation, and every executable of the op must
 * have a layer of that name and size). The device's inputs are read and its
 * outputs written in the device's byte order and tiling, and an execution
 * whose held parameters are not the model's is a violation. cpu must
 * outlive the emulator; threads: the interpreter's worker threads. */
npk_status npk_etpu_emu_set_cpu_model(npk_etpu_emu *e, const npk_etpu_model *m,
                                      const npk_tfl_model *cpu, int threads, npk_error *err);
/* The transport (owned by the emulator; closing it does nothing). */
npk_etpu_transport *npk_etpu_emu_transport(npk_etpu_emu *e);
const npk_etpu_emu_stats *npk_etpu_emu_get_stats(const npk_etpu_emu *e);
/* The first protocol violation, or NULL. */
const char *npk_etpu_emu_violation(const npk_etpu_emu *e);
/* The bytes the last execution received for an input layer (including the
 * padding read past its end), or NULL. */
const uint8_t *npk_etpu_emu_input(const npk_etpu_emu *e, const char *name, size_t *size);
/* The firmware image it holds (DFU download). */
const uint8_t *npk_etpu_emu_firmware(const npk_etpu_emu *e, size_t *size);

/* Deterministic device bytes of an output layer of a model without a
 * reference executor: a function of the layer name, the execution number
 * (1 for the first) and the byte index. */
void npk_etpu_emu_fill(const char *layer_name, uint64_t execution, uint8_t *dev, size_t n);

#ifdef __cplusplus
}
#endif
#endif
