/* Private state of the emulated accelerator (edgetpu_emu.h), shared by
 * emu_core.c (transport, vanishing, violations), emu_csr.c (registers and
 * the initialisation checks), emu_dfu.c (bootloader) and emu_exec.c (bulk
 * streams and execution). */
#ifndef NPK_ETPU_EMU_PRIVATE_H
#define NPK_ETPU_EMU_PRIVATE_H

#include <stdarg.h>

#include "npukit/edgetpu_emu.h"

#define EMU_MAX_MODELS  8
#define EMU_MAX_REGIONS 64 /* parameter regions held under one caching token */

typedef struct emu_cpu emu_cpu; /* CPU answers of one Edge TPU op (emu_cpu.c) */

typedef struct emu_model {
    const npk_etpu_model *m;
    bool dense; /* a Dense template: outputs from the reference executor */
    npk_etpu_dense d;
    emu_cpu **cpu; /* per Edge TPU op, NULL without a CPU model */
} emu_model;

/* Parameters the device holds for one region (the PC instructions that loaded them). */
typedef struct emu_params {
    uint64_t code; /* etpu_code_hash of the PC executable */
    uint8_t *bytes;
    size_t size;
} emu_params;

/* Init-sequence effects observed in the order the protocol requires. */
enum {
    EMU_RESET_ENTERED = 1u << 0,   /* host saw cur_pwr_state 2 after rg_force_sleep 3 */
    EMU_CREDIT_HIGH = 1u << 1,     /* gcbb_credit0 = 0xF in reset */
    EMU_CREDIT_PULSED = 1u << 2,   /* ... then 0 */
    EMU_RESET_QUIT = 1u << 3,      /* host saw cur_pwr_state 0 after rg_force_sleep 2 */
    EMU_CORE_POLLED = 1u << 4,     /* scalarCoreRunControl read as 0 after quitting reset */
    EMU_TILES_CONFIRMED = 1u << 5, /* tileconfig0 broadcast read back */
    EMU_EFUSE_READ = 1u << 6
};

struct npk_etpu_emu {
    npk_etpu_transport tr;
    npk_etpu_emu_opts o;
    npk_etpu_emu_stats stats;
    emu_model models[EMU_MAX_MODELS];
    unsigned nmodels;
    bool app, gone, halted;
    uint64_t transfers;
    char violation[NPK_ERROR_MSG_MAX];
    /* DFU */
    int dfu_state;
    uint32_t dfu_block, up_block;
    size_t up_pos;
    uint8_t *fw;
    size_t fw_size;
    bool manifested;
    /* registers */
    uint64_t regs[NPK_ETPU_CSR_COUNT];
    int pwr_target; /* -1: none; cur_pwr_state moves there after pwr_delay reads */
    unsigned pwr_delay;
    uint32_t init;
    /* bulk-out stream */
    uint8_t hdr[NPK_ETPU_HEADER_SIZE];
    size_t hdr_got;
    bool in_frame, starting;
    uint8_t tag;
    size_t frame_len, frame_got;
    uint8_t *ibuf; /* instructions of an execution being started */
    /* execution */
    const npk_etpu_executable *exe;
    emu_model *em;
    uint32_t cursor;
    const npk_etpu_executable *last_exe; /* inputs of the last execution stay inspectable */
    uint8_t **in, **seen;
    size_t *in_len;
    uint8_t *params; /* parameters received by this execution */
    uint8_t **out;   /* device bytes of the output layers */
    bool computed;
    uint64_t executions;
    /* parameters the device holds: one token, several regions (co-compiled models) */
    uint64_t cache_token;
    emu_params cache[EMU_MAX_REGIONS];
    unsigned ncache;
    /* output stream on 0x81 */
    uint8_t *stream;
    size_t stream_len, stream_pos, next_boundary;
    uint32_t stream_end; /* hint index after the output steps it covers */
    bool event_pending;
    uint8_t event_tag;
};

/* Record the first violation, halt, and fail the transfer. */
npk_status emu_violation(npk_etpu_emu *e, npk_error *err, const char *fmt, ...) NPK_PRINTF(3, 4);

void emu_csr_reset(npk_etpu_emu *e);
npk_status emu_csr_control(npk_etpu_emu *e, const npk_etpu_setup *s, uint8_t *data, size_t *done,
                           npk_error *err);
/* Before the first bulk transfer: every effect of the init sequence. */
npk_status emu_check_init(npk_etpu_emu *e, npk_error *err);

npk_status emu_dfu_control(npk_etpu_emu *e, const npk_etpu_setup *s, uint8_t *data, size_t *done,
                           npk_error *err);

npk_status emu_bulk_out(npk_etpu_emu *e, const uint8_t *data, size_t len, npk_error *err);
npk_status emu_bulk_in(npk_etpu_emu *e, uint8_t ep, uint8_t *buf, size_t cap, size_t *got,
                       npk_error *err);
void emu_exec_reset(npk_etpu_emu *e); /* chip reset: stream, execution, cache */
void emu_exec_free(npk_etpu_emu *e);
void emu_forget_parameters(npk_etpu_emu *e); /* every region */

/* The Edge TPU op and package of model em that holds executable x (false if none). */
bool emu_locate(const emu_model *em, const npk_etpu_executable *x, uint32_t *op, uint32_t *pkg);
/* CPU answers (emu_cpu.c): outputs of executable x of op `op` from the
 * input layers' device bytes in[], into out[] (device bytes, tiled). */
npk_status emu_cpu_answer(emu_cpu *c, const npk_etpu_executable *x, uint8_t *const *in,
                          uint8_t *const *out, npk_error *err);
void emu_cpu_free(emu_cpu *c);

#endif
