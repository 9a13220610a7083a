/* Internals shared by the emulator's parts: the machine state (emu.c), the
 * register rules (emu_rules.c), the task decoder (emu_task.c), the data path
 * (emu_exec.c) and the multiply kernels (emu_gemm.c). */
#ifndef NPK_RKNPU_EMU_INTERNAL_H
#define NPK_RKNPU_EMU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_regs.h"

typedef struct emu_map {
    uint32_t addr;
    size_t size;
    uint8_t *host;
    /* npk_rk_emu_map_tracked: a value no other state of any mapping has
     * had (npk_rk_emu::gen), renewed on every write the emulator knows of;
     * 0: untracked (the host may write unseen) */
    uint64_t gen;
} emu_map;

/* One core's register file. `written` marks registers written since the
 * current task's stream was fetched; `entry` is the index that wrote them. */
typedef struct emu_core {
    uint32_t regs[NPK_RKR_COUNT];
    bool written[NPK_RKR_COUNT];
    uint32_t entry[NPK_RKR_COUNT];
    /* The weights the CBUF holds after the core's last task, for
     * CNA_CBUF_CON0.WEIGHT_REUSE (valid only after a convolution task of
     * the same run). */
    bool cbuf_valid;
    uint32_t cbuf_wt_addr, cbuf_wbank, cbuf_dbank;
    uint64_t cbuf_wt_span;
} emu_core;

/* Where a message points: core, task number, stream address, entry. */
typedef struct emu_where {
    int core;
    uint32_t task;
    uint32_t stream;
    long entry; /* -1: the task as a whole */
} emu_where;

/* A direct int8 task's B operand kept across runs (emu_wcache.c): valid
 * while the weight bytes equal `raw`. */
typedef struct emu_wpack {
    uint32_t wt_addr, n, c, kw, kh, group;
    bool packed;  /* qkern's packed layout, else N rows of K bytes */
    bool dw;      /* a depthwise task's: b the re-laid weights, wabs the bounds */
    uint8_t *raw; /* the weight bytes it was made from */
    /* the generation of the tracked mapping they were read from (0: none)
     * and their host address: while both are current the bytes are too */
    uint64_t gen;
    const uint8_t *host;
    size_t raw_bytes;
    uint8_t *b; /* the operand */
    size_t b_bytes;
    uint16_t *use; /* the channels in the product */
    size_t cu;
    int8_t *uni; /* per channel: the one weight of a channel left out, else 0 */
    /* per kernel: 128 x the sum of |w + wabs_ow| over its taps and channels,
     * a bound on |sum + CPEND term| (valid when wabs_ok) */
    uint64_t *wabs;
    int32_t wabs_ow;
    bool wabs_ok;
    /* emu_gemm8.c: the kernels widened to int16 in its panel order (NULL
     * until a task takes that path), b16_bytes of them, b16_ow (CPEND's
     * OW_OP folded in, or 0) added to each */
    int16_t *b16;
    size_t b16_bytes;
    int32_t b16_ow;
} emu_wpack;

/* A task's DPU operands kept across runs (emu_opcache.c), and what
 * decided them. */
typedef struct emu_opkey {
    const uint8_t *stream[3]; /* BS, BN, EW operand streams read (else NULL) */
    uint64_t gen[3];          /* their tracked mappings' generations */
    uint32_t add_op[3], mul_op[3];
    unsigned rec[3], mul_at[3];
    uint8_t flags[3];
    bool untracked; /* a stream the emulator cannot tell unchanged */
    size_t n;
} emu_opkey;

typedef struct emu_opentry {
    emu_opkey key;
    int32_t *ops;
    size_t bytes;
    uint64_t stamp; /* unique per filling of ops (npk_rk_emu::opc_stamp) */
} emu_opentry;

typedef struct emu_tentry emu_tentry; /* emu_tcache.c */

/* Growable scratch buffers, reused across tasks. */
typedef struct emu_scratch {
    void *p;
    size_t cap;
} emu_scratch;

struct npk_rk_emu {
    npk_rk_emu_opts o;
    emu_map maps[NPK_RK_EMU_MAX_MAPS];
    size_t nmaps;
    emu_core core[NPK_RKNPU_MAX_CORES];
    npk_rk_emu_stats st;
    uint64_t budget; /* multiply-accumulates left in this run (UINT64_MAX: unlimited) */
    emu_scratch a, b, c, t, s, ops, pb, work, im, s2, u, sf, wr;
    bool simd;
    const struct npk_tfl_qkern *qk; /* the interpreter's 8-bit kernels (emu_conv8.c) */
    uint64_t gen;                   /* the last generation given to a mapping */
    uint64_t map_epoch;             /* renewed by every map and unmap */
    emu_opentry *opc;               /* emu_opcache.c */
    size_t nopc, cap_opc;
    uint64_t opc_stamp;
    emu_tentry *tc; /* emu_tcache.c */
    size_t ntc, cap_tc, tc_next;
    emu_wpack *wp; /* emu_wcache.c */
    size_t nwp, cap_wp, wp_bytes;
};

/* A cache's array (emu_opcache.c, emu_tcache.c, emu_wcache.c) with room
 * for entry n, zeroed: the array (moved or not), or NULL when it holds max
 * entries or cannot grow (the caller then runs uncached). */
void *emu_cache_grow(void *arr, size_t n, size_t *cap, size_t max, size_t elem, size_t first);

/* A DPU stage (BS, BN or EW) as the registers program it. */
typedef struct emu_stage {
    bool on;               /* not bypassed as a whole */
    bool add, mul;         /* ALU add / multiply */
    bool add_mem, mul_mem; /* operand per channel from the DPU read DMA stream */
    bool relu, relux;      /* ReLU (clamp below at 0); ReLU-X (clamp above at relux_cmp) */
    uint32_t add_op;       /* fp32 bits or int32 */
    uint32_t mul_op;       /* fp16 bits or int16 (BS/BN); fp32 bits or int32 (EW) */
    unsigned shift;        /* int path: right shift after the multiply */
    uint32_t relux_cmp;
    const uint8_t *stream;       /* per-channel records (stream_rec bytes each) */
    unsigned stream_rec, mul_at; /* record size; byte offset of the multiplier */
    /* EW only: the operand per element from ERDMA (int8 NC1HWC2), through
     * the operand conversion (x + cvt_off) * cvt_scale >> cvt_shift. */
    bool op_mem, cvt;
    const uint8_t *ew_src;
    uint64_t ew_surf;  /* bytes between surfaces of 16 (int8) or 4 (int32) channels */
    unsigned ew_esize; /* bytes per operand element: 1 (size code 1) or 4 (code 3) */
    int32_t cvt_off;
    uint32_t cvt_scale, cvt_shift;
} emu_stage;

/* One task, decoded and checked from the registers. */
typedef struct emu_task {
    bool fp;          /* fp16 in, fp32 processing; else int8 in, int32 */
    unsigned in_size; /* bytes per input element: 2 or 1 */
    uint32_t w, h, c; /* input cube */
    uint32_t n;       /* output channels (kernels; depthwise: c) */
    uint32_t kernels; /* WEIGHT_KERNELS (1 for depthwise) */
    bool dw;          /* depthwise: channel c of the output from channel c of the input */
    bool direct1x1;   /* 1x1, stride 1, no padding: the matmul data path */
    uint32_t kw, kh, sx, sy, dx, dy, pl, pt; /* kernel, stride, dilation, padding */
    uint32_t ow, oh;                         /* output cube */
    uint32_t pad_value;                      /* CNA_PAD_CON1 */
    bool cpend;                              /* DPU_BS_OW_CFG.OD_BYPASS = 0 */
    int32_t ow_op;                           /* DPU_BS_OW_OP, signed 16 */
    bool out_int8;
    bool from_mem;      /* element-wise task: the DPU reads its input through MRDMA */
    const uint8_t *src; /* MRDMA input (int8 or int32 NC1HWC2) */
    uint64_t src_surf;  /* bytes between its surfaces */
    unsigned src_esize; /* bytes per MRDMA element: 1 (int8) or 4 (int32) */
    int32_t cvt_offset;
    uint32_t cvt_scale, cvt_shift;
    uint32_t in_addr; /* FEATURE_DATA_ADDR */
    uint64_t line_pitch, surf_pitch, in_span;
    uint32_t wt_addr; /* DCOMP_ADDR0 */
    uint64_t wt_span;
    uint32_t dbank, wbank; /* CNA_CBUF_CON0 split */
    bool weight_reuse;     /* CNA_CBUF_CON0.WEIGHT_REUSE: the CBUF's weights, not a fetch */
    unsigned group;        /* output channels per DPU group (16 fp16, 32 int8) */
    unsigned out_size;     /* 4 fp32/int32, 2 fp16 */
    bool out_fp16, out_int32;
    uint32_t dst_addr;
    uint64_t dst_surf, surf_add, out_span; /* bytes */
    emu_stage bs, bn, ew;
    uint8_t *in, *wt, *out; /* host pointers of the three spans */
} emu_task;

/* One pooling task (PPU reading through PPU_RDMA), decoded and checked. */
typedef struct emu_pool {
    bool fp;
    uint32_t method; /* 1 max (the only one modelled) */
    uint32_t w, h, c, ow, oh, kw, kh, sx, sy, pl, pt;
    uint32_t pad_value;
    uint64_t src_line, src_surf, dst_surf;
    uint8_t *in, *out;
    uint32_t dst_addr; /* the output span, [dst_addr, dst_addr + out_span) */
    uint64_t out_span;
} emu_pool;

/* ---- emu.c ---- */
npk_status emu_fail(const emu_where *w, npk_error *err, npk_status st, const char *fmt, ...)
    NPK_PRINTF(4, 5);
uint8_t *emu_span(const npk_rk_emu *e, uint32_t addr, uint64_t len);
/* emu_span for a span a task writes: a tracked mapping holding it gets a
 * new generation. */
uint8_t *emu_span_out(npk_rk_emu *e, uint32_t addr, uint64_t len);
/* The generation of the tracked mapping holding [addr, addr + len), else 0. */
uint64_t emu_span_gen(const npk_rk_emu *e, uint32_t addr, uint64_t len);
/* The same for host memory [p, p + len). */
uint64_t emu_host_gen(const npk_rk_emu *e, const uint8_t *p, uint64_t len);
void *emu_scratch_get(emu_scratch *s, size_t bytes);
const char *emu_field_name(npk_rk_field f, char *buf, size_t len);

/* ---- emu_rules.c ---- */
/* Check the registers of the blocks an operation enable starts: every
 * register the model reads was written by this task, every written register
 * is one the model knows, and every field holds a value it models. */
npk_status emu_check_registers(const emu_core *c, uint32_t enable, const emu_where *w,
                               npk_error *err);

/* ---- emu_task.c ---- */
npk_status emu_decode_task(npk_rk_emu *e, const emu_core *c, uint32_t enable, const emu_where *w,
                           emu_task *t, npk_error *err);

/* ---- emu_ppu.c ---- */
npk_status emu_decode_pool(npk_rk_emu *e, const emu_core *c, const emu_where *w, emu_pool *t,
                           npk_error *err);
npk_status emu_execute_pool(npk_rk_emu *e, const emu_pool *t, const emu_where *w, npk_error *err);

/* ---- emu_dpu8.c ---- */
/* A DPU stage (BS, BN, EW) of the fused int8 DPU, decided once per task:
 * which saturations the task's bounds leave out, the operands per channel. */
typedef struct emu_dpu8_step {
    bool on, add, add_sat, mul, mul_sat, relu, relux;
    unsigned shift;
    int64_t cap;
    const int32_t *addv, *mulv;
} emu_dpu8_step;

/* The integer DPU of a task with int8 outputs, fused on AVX2: every stage
 * of a 16-channel output atom in registers, one 16-byte store per atom. */
typedef struct emu_dpu8 {
    bool cpend, start_sat, dw;
    int64_t ow;
    emu_dpu8_step st[3];
    int64_t scale, round, offset;
    unsigned shift;
    bool out_sat;
    uint64_t cvt_in;   /* a bound on |OUT_CVT's input| (2^62: none) */
    int loop;          /* 0 any stages, 1 the common sequence, 2 its int32-lane form */
    const int32_t *th; /* loop 2: INT32_MAX / |BS multiplier| per channel */
    /* loop 2: per 16-channel atom, whether no value the sums can take needs
     * the per-pixel checks (emu_dpu8_safe); NULL: check every pixel */
    const uint8_t *safe;
} emu_dpu8;

/* ---- emu_exec.c ---- */
/* A task's fused DPU plan kept with its cached decode (emu_tcache.c): made
 * from the operands of one opcache filling (stamp), so valid while the
 * task gets the same filling again. */
typedef struct emu_plan_memo {
    bool made, ok;
    const int32_t *ops;
    uint64_t stamp;
    emu_dpu8 d;
} emu_plan_memo;
/* memo: NULL, or the plan kept from an earlier run of the same decode. */
npk_status emu_execute(npk_rk_emu *e, const emu_task *t, emu_plan_memo *memo, const emu_where *w,
                       npk_error *err);

/* ---- emu_tcache.c ---- */
/* What one fetched stream asked for after its task. */
typedef struct emu_fetch {
    bool chain;           /* PC_BASE_ADDRESS written with an address */
    uint32_t next_addr;   /* PC_SOURCE_ADDR << 4 */
    uint32_t next_amount; /* PC_DATA_AMOUNT */
} emu_fetch;

/* A register write of a fetched stream: register, value, entry index. */
typedef struct emu_write {
    uint32_t reg, value, index;
} emu_write;

/* A fetched stream's task, decoded and checked. */
typedef struct emu_decoded {
    bool pool;
    emu_task t;
    emu_pool p;
    uint64_t work;     /* what the decode took from the run's budget */
    uint32_t out_addr; /* the span the task writes (its mapping renewed at decode) */
    uint64_t out_len;
    emu_plan_memo plan;
} emu_decoded;

/* A fetch kept (emu_tcache.c): its inputs and its result. */
struct emu_tentry {
    int core;
    uint32_t addr, amount;
    const uint8_t *host;         /* the stream's bytes */
    uint64_t gen, epoch;         /* their mapping's generation, the mapping table's epoch */
    uint32_t pre[NPK_RKR_COUNT]; /* the core's registers before the fetch */
    emu_write *wr;               /* the stream's register writes, in order */
    size_t nwr, cap_wr;
    emu_fetch fr;
    emu_decoded d;
};

/* The kept fetch whose every input is what it is now: the core's
 * registers, the stream's address, amount and host bytes (in a tracked
 * mapping still at generation gen) and the mapping table; else NULL. */
emu_tentry *emu_tcache_find(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                            const uint8_t *host, uint64_t gen, const uint32_t *regs);
/* Keep a fetch that ran without error: pre, the core's registers before it;
 * gen, the stream mapping's generation at the fetch (nonzero). */
void emu_tcache_put(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount, const uint8_t *host,
                    uint64_t gen, const uint32_t *pre, const emu_write *wr, size_t nwr,
                    const emu_fetch *fr, const emu_decoded *d);
void emu_tcache_free(npk_rk_emu *e);

/* Plans the fused DPU of task t (ops: the stages' add and multiply operands
 * per channel as emu_execute lays them out; th: scratch of t->n int32 the
 * plan points at); false when the task is outside what it models or AVX2
 * is not compiled in (nothing is written then). */
bool emu_dpu8_plan(const emu_task *t, const int32_t *ops, int32_t *th, emu_dpu8 *d);
/* Marks the atoms whose channels cannot leave int32 in the BS product or
 * the BN add, given bound[ch] >= |sum + CPEND term| for every input (the
 * sums' true values, before any wrapping); safe: ceil(t->n / 16) bytes. */
void emu_dpu8_safe(emu_dpu8 *d, const emu_task *t, const uint64_t *bound, uint8_t *safe);
/* Output pixels p0 .. p0 + np - 1 of every channel: c holds their sums (np
 * rows of t->n), sums their CPEND window sums (np values; depthwise np rows
 * of t->n; NULL without CPEND). Blocks may come in any order. */
void emu_dpu8_rows(const emu_dpu8 *d, const emu_task *t, const uint32_t *c, const int32_t *sums,
                   size_t p0, size_t np);
/* One output pixel of the 16 channels ch0 .. ch0 + 15 of a direct task
 * through the int64 steps (the pixels the int32-lane form refuses): c16
 * holds its 16 sums, sum its CPEND window sum. */
void emu_dpu8_pixel(const emu_dpu8 *d, const emu_task *t, const uint32_t *c16, int32_t sum,
                    size_t ch0, uint8_t *dst);

/* ---- emu_conv.c ---- */
/* The general convolution (any kernel, stride, dilation, padding,
 * depthwise): int32 sums (and the CPEND window sums) or fp32 sums per output
 * pixel and channel, in acc[p * n + ch] (s[p * n + ch] for depthwise or
 * s[p] for direct). With dpu (emu_dpu8_plan), acc and s are unused: the
 * sums of each block of output pixels go through the DPU into the output
 * right after they are made, while they are in cache. */
npk_status emu_conv_int(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                        const emu_dpu8 *dpu, const emu_where *w, npk_error *err);
/* The direct int8 convolution through the interpreter's gemm kernels
 * (emu_conv8.c): acc, s and dpu as emu_conv_int. */
npk_status emu_conv_direct8(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                            const emu_dpu8 *dpu, const emu_where *w, npk_error *err);
npk_status emu_conv_fp(npk_rk_emu *e, const emu_task *t, float *acc, const emu_where *w,
                       npk_error *err);

/* ---- emu_gemm8.c ---- */
/* The 1x1 stride-1 direct int8 task whose DPU takes the int32-lane form,
 * on the AVX2 8-bit kernels: in holds the NC1HWC2 input read in place
 * (pixel p at 16 p in each plane, planes sp apart; the CPEND sums taken on
 * the way), wp the task's packed kernels
 * (every channel used); d the plan (with its safe atoms). Returns false,
 * having written nothing, when the task is outside that case or memory for
 * the widened kernels is not available; the caller then takes the general
 * path. */
bool emu_gemm8_fused(npk_rk_emu *e, const emu_task *t, emu_wpack *wp, const uint8_t *in,
                     uint64_t sp, const emu_dpu8 *d);

/* ---- emu_opcache.c ---- */
/* The kept operands of task t (emu_exec.c's layout), or NULL; *stamp: the
 * filling they come from. */
int32_t *emu_opcache_find(npk_rk_emu *e, const emu_task *t, uint64_t *stamp);
/* Room (bytes) for task t's operands, kept for later runs; NULL when they
 * cannot be kept (a stream not tracked, the cache's limits); *stamp: a new
 * filling's. */
int32_t *emu_opcache_add(npk_rk_emu *e, const emu_task *t, size_t bytes, uint64_t *stamp);
void emu_opcache_free(npk_rk_emu *e);

/* ---- emu_wcache.c ---- */
/* The entry for the task's weights (raw bytes from t->wt) made in the given
 * layout, or NULL. */
emu_wpack *emu_wcache_find(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw);
/* A new entry holding a copy of the weights and b_bytes for the operand
 * (the caller fills b, use, cu), or NULL when over the cache's limits. */
emu_wpack *emu_wcache_add(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw,
                          size_t b_bytes);
void emu_wcache_free(npk_rk_emu *e);
/* Room for an entry's widened kernels (b16, b16_bytes), within the cache's
 * limit; false when there is none. */
bool emu_wcache_b16(npk_rk_emu *e, emu_wpack *p, size_t bytes);

/* ---- emu_gemm.c ---- */
#define EMU_MR 6
#define EMU_NR 16
bool emu_gemm_simd_available(void);
/* C[P][N] (row-major, ldc = N) = Ap . Bp with Ap: ceil(P/MR) panels of
 * K x MR floats (rows past P zero) and Bp: N/NR panels of K x NR floats.
 * Every output is summed in k order, so all kernels give the same bits. */
void emu_gemm_f32(bool simd, size_t P, size_t N, size_t K, const float *ap, const float *bp,
                  float *c);

#endif
