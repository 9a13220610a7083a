/* The fast CNN v2 renderer: same bits as cnn2_ref.c, much less time.
 *
 * - Planar f32 buffers (8 static feature planes, 2 x 4 ping-pong planes for
 *   the dynamic channels) with a margin of R = max(k/2) on every side,
 *   filled by the border rule, so the convolution never branches.
 * - Rows are vectorised 16 pixels at a time (cnn2_kernel.c); each output's
 *   sum runs in the reference's (i, ky, kx) order.
 * - Threads take bands of rows (a shared counter); every phase (features,
 *   then each layer) ends with a join, since a layer reads its neighbours.
 * - All buffers are allocated per frame size and reused; nothing per pixel. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npukit/checked.h"
#include "cnn2_internal.h"

#define MAX_THREADS   64
#define ROWS_PER_TASK 4

struct npk_cnn2_renderer {
    npk_cnn2_render_opts opts;
    uint32_t num_layers, mip_level;
    uint32_t *ksize;
    float **w; /* per layer: [i][ky][kx][o] */
    cnn2_conv_fn conv;
    cnn2_act_fn act;
    unsigned threads;
    long R; /* margin: the largest k/2 */
    /* Frame buffers (for width x height). */
    uint32_t W, H;
    size_t wpad, stride;
    float *block;
    float *stat[8], *dyn[2][4]; /* column 0 of row 0 */
    float *scratch;             /* per thread: 4 accumulator rows + 1 temporary row */
    uint16_t *half;             /* per thread: one row of f16 */
    float *uvx, *sinx;          /* per column, rounded */
    cnn2_tap *tx, *ty;          /* bilinear taps per column and row */
    /* Per frame. */
    const npk_cnn2_image *img;
    cnn2_mips mips;
    float *out;
};

/* ---- rows and margins ---- */

static float *row_of(float *plane, size_t stride, long y)
{
    return plane + y * (ptrdiff_t)stride;
}

static float *thread_scratch(npk_cnn2_renderer *r, unsigned tid)
{
    return r->scratch + (size_t)tid * 5 * r->wpad;
}

/* n values from src into dst, rounded to f16 in faithful precision. */
static void round_row(npk_cnn2_renderer *r, unsigned tid, const float *src, float *dst, size_t n)
{
    if (r->opts.precision == NPK_CNN2_PREC_F16) {
        uint16_t *h = r->half + (size_t)tid * r->wpad;
        npk_f32_to_f16_n(src, h, n);
        npk_f16_to_f32_n(h, dst, n);
    } else if (src != dst) {
        memcpy(dst, src, n * sizeof(float));
    }
}

/* Left and right margins of one row (right: up to the last column read). */
static void fill_lr(npk_cnn2_renderer *r, float *row)
{
    bool zero = r->opts.border == NPK_CNN2_BORDER_ZERO;
    float left = zero ? 0.0f : row[0], right = zero ? 0.0f : row[r->W - 1];
    for (long j = 1; j <= r->R; j++) row[-j] = left;
    for (size_t x = r->W; x < r->wpad + (size_t)r->R; x++) row[x] = right;
}

/* Top and bottom margin rows of a plane, whole width (after fill_lr). */
static void fill_tb(npk_cnn2_renderer *r, float *plane)
{
    size_t n = r->stride;
    for (long j = 1; j <= r->R; j++) {
        float *top = row_of(plane, r->stride, -j) - r->R;
        float *bot = row_of(plane, r->stride, (long)r->H - 1 + j) - r->R;
        if (r->opts.border == NPK_CNN2_BORDER_ZERO) {
            memset(top, 0, n * sizeof(float));
            memset(bot, 0, n * sizeof(float));
        } else {
            memcpy(top, row_of(plane, r->stride, 0) - r->R, n * sizeof(float));
            memcpy(bot, row_of(plane, r->stride, (long)r->H - 1) - r->R, n * sizeof(float));
        }
    }
}

/* ---- threads ---- */

typedef void (*rows_fn)(npk_cnn2_renderer *r, unsigned tid, long y0, long y1, const void *ctx);

typedef struct phase {
    npk_cnn2_renderer *r;
    rows_fn fn;
    const void *ctx;
    atomic_long next;
    long rows;
} phase;

typedef struct worker {
    phase *ph;
    unsigned tid;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    phase *ph = w->ph;
    for (;;) {
        long y0 = atomic_fetch_add(&ph->next, ROWS_PER_TASK);
        if (y0 >= ph->rows) break;
        long y1 = y0 + ROWS_PER_TASK < ph->rows ? y0 + ROWS_PER_TASK : ph->rows;
        ph->fn(ph->r, w->tid, y0, y1, ph->ctx);
    }
    return NULL;
}

/* Run fn over all rows on the renderer's threads (the caller is thread 0;
 * if a thread cannot start, the others simply take its rows). */
static void run_rows(npk_cnn2_renderer *r, rows_fn fn, const void *ctx)
{
    phase ph = {r, fn, ctx, 0, (long)r->H};
    atomic_init(&ph.next, 0);
    pthread_t tids[MAX_THREADS];
    worker ws[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    unsigned n = r->threads;
    long tasks = ((long)r->H + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    if ((long)n > tasks) n = (unsigned)tasks;
    for (unsigned t = 0; t < n; t++) ws[t] = (worker){&ph, t};
    for (unsigned t = 1; t < n; t++) started[t] = pthread_create(&tids[t], NULL, work, &ws[t]) == 0;
    work(&ws[0]);
    for (unsigned t = 1; t < n; t++)
        if (started[t]) pthread_join(tids[t], NULL);
}

/* ---- phases ---- */

static void feature_rows(npk_cnn2_renderer *r, unsigned tid, long y0, long y1, const void *ctx)
{
    (void)ctx;
    const npk_cnn2_image *img = r->img;
    uint32_t W = r->W, lw = r->mips.w[r->mip_level];
    float *tmp = thread_scratch(r, tid) + 4 * r->wpad;
    for (long y = y0; y < y1; y++) {
        const float *px = img->rgbd + (size_t)y * W * 4;
        float uvy = cnn2_round(cnn2_uv((uint32_t)y, r->H), r->opts.precision);
        for (uint32_t c = 0; c < 4; c++) {
            for (uint32_t x = 0; x < W; x++) tmp[x] = px[(size_t)x * 4 + c];
            float *d = row_of(r->dyn[0][c], r->stride, y);
            round_row(r, tid, tmp, d, W);
            float *p = row_of(r->stat[c], r->stride, y);
            if (r->mip_level == 0) {
                memcpy(p, d, W * sizeof(float));
            } else {
                const float *lvl = r->mips.level[r->mip_level];
                for (uint32_t x = 0; x < W; x++)
                    tmp[x] = cnn2_bilinear(lvl, lw, r->tx[x], r->ty[y], c);
                round_row(r, tid, tmp, p, W);
            }
        }
        memcpy(row_of(r->stat[4], r->stride, y), r->uvx, W * sizeof(float));
        memcpy(row_of(r->stat[6], r->stride, y), r->sinx, W * sizeof(float));
        float *v = row_of(r->stat[5], r->stride, y), *b = row_of(r->stat[7], r->stride, y);
        for (uint32_t x = 0; x < W; x++) {
            v[x] = uvy;
            b[x] = 1.0f;
        }
        if (r->opts.features) {
            float *f = r->opts.features + (size_t)y * W * NPK_CNN2_CHANNELS;
            for (uint32_t x = 0; x < W; x++) {
                for (uint32_t c = 0; c < 4; c++)
                    f[(size_t)x * NPK_CNN2_CHANNELS + c] = row_of(r->dyn[0][c], r->stride, y)[x];
                for (uint32_t c = 0; c < 8; c++)
                    f[(size_t)x * NPK_CNN2_CHANNELS + 4 + c] = row_of(r->stat[c], r->stride, y)[x];
            }
        }
        for (uint32_t c = 0; c < 4; c++) fill_lr(r, row_of(r->dyn[0][c], r->stride, y));
        for (uint32_t c = 0; c < 8; c++) fill_lr(r, row_of(r->stat[c], r->stride, y));
    }
}

typedef struct layer_ctx {
    uint32_t layer;
    int src; /* ping-pong index read; the other is written */
    cnn2_act act;
} layer_ctx;

static void layer_rows(npk_cnn2_renderer *r, unsigned tid, long y0, long y1, const void *ctx)
{
    const layer_ctx *lc = ctx;
    uint32_t W = r->W;
    bool last = lc->layer + 1 == r->num_layers;
    float *scr = thread_scratch(r, tid);
    cnn2_row_job job;
    for (int c = 0; c < 4; c++) job.planes[c] = r->dyn[lc->src][c];
    for (int c = 0; c < 8; c++) job.planes[4 + c] = r->stat[c];
    job.stride = r->stride;
    job.w = r->w[lc->layer];
    job.k = r->ksize[lc->layer];
    job.wpad = r->wpad;
    for (int o = 0; o < 4; o++) job.acc[o] = scr + (size_t)o * r->wpad;
    float *lout = r->opts.layer_out ? r->opts.layer_out[lc->layer] : NULL;
    for (long y = y0; y < y1; y++) {
        r->conv(&job, y);
        for (int o = 0; o < 4; o++) {
            r->act(job.acc[o], W, lc->act);
            float *dst = last ? job.acc[o] : row_of(r->dyn[!lc->src][o], r->stride, y);
            round_row(r, tid, job.acc[o], dst, W);
            if (!last) fill_lr(r, dst);
            float *inter[2] = {last ? r->out : NULL, lout};
            for (int t = 0; t < 2; t++) {
                if (!inter[t]) continue;
                float *q = inter[t] + (size_t)y * W * 4 + o;
                for (uint32_t x = 0; x < W; x++) q[(size_t)x * 4] = dst[x];
            }
        }
    }
}

/* ---- setup ---- */

static void free_frame(npk_cnn2_renderer *r)
{
    free(r->block);
    free(r->scratch);
    free(r->half);
    free(r->uvx);
    free(r->sinx);
    free(r->tx);
    free(r->ty);
    r->block = r->scratch = r->uvx = r->sinx = NULL;
    r->half = NULL;
    r->tx = r->ty = NULL;
    r->W = r->H = 0;
}

static npk_status setup_frame(npk_cnn2_renderer *r, uint32_t W, uint32_t H, npk_error *err)
{
    if (r->W == W && r->H == H) return NPK_OK;
    free_frame(r);
    size_t wpad = ((size_t)W + 15) & ~(size_t)15;
    size_t stride = wpad + 2 * (size_t)r->R, rows = (size_t)H + 2 * (size_t)r->R;
    size_t plane, all;
    if (!npk_mul_sz(stride, rows, &plane) || !npk_mul_sz(plane, 16, &all))
        return npk_fail(err, NPK_E_LIMIT, "cnn2: frame too large");
    r->block = calloc(all, sizeof(float));
    r->scratch = calloc((size_t)r->threads * 5 * wpad, sizeof(float));
    r->half = calloc((size_t)r->threads * wpad, sizeof(uint16_t));
    r->uvx = malloc(W * sizeof(float));
    r->sinx = malloc(W * sizeof(float));
    r->tx = malloc(W * sizeof(cnn2_tap));
    r->ty = malloc(H * sizeof(cnn2_tap));
    if (!r->block || !r->scratch || !r->half || !r->uvx || !r->sinx || !r->tx || !r->ty) {
        free_frame(r);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a %ux%u frame", W, H);
    }
    r->W = W;
    r->H = H;
    r->wpad = wpad;
    r->stride = stride;
    size_t origin = (size_t)r->R * stride + (size_t)r->R;
    for (int p = 0; p < 8; p++) r->stat[p] = r->block + (size_t)p * plane + origin;
    for (int p = 0; p < 8; p++) r->dyn[p / 4][p % 4] = r->block + (size_t)(8 + p) * plane + origin;
    for (uint32_t x = 0; x < W; x++) {
        float u = cnn2_uv(x, W);
        r->uvx[x] = cnn2_round(u, r->opts.precision);
        r->sinx[x] = cnn2_round(cnn2_sin10(u), r->opts.precision);
    }
    uint32_t lw = W >> r->mip_level ? W >> r->mip_level : 1;
    uint32_t lh = H >> r->mip_level ? H >> r->mip_level : 1;
    for (uint32_t x = 0; x < W; x++) r->tx[x] = cnn2_tap_at(x, W, lw);
    for (uint32_t y = 0; y < H; y++) r->ty[y] = cnn2_tap_at(y, H, lh);
    return NPK_OK;
}

void npk_cnn2_renderer_free(npk_cnn2_renderer *r)
{
    if (!r) return;
    free_frame(r);
    if (r->w)
        for (uint32_t l = 0; l < r->num_layers; l++) free(r->w[l]);
    free(r->w);
    free(r->ksize);
    free(r);
}

npk_status npk_cnn2_renderer_new(npk_cnn2_renderer **out, const npk_cnn2_model *m,
                                 const npk_cnn2_render_opts *opts, npk_error *err)
{
    *out = NULL;
    npk_status st = npk_cnn2_render_check(m, NULL, err);
    if (st) return st;
    npk_cnn2_renderer *r = calloc(1, sizeof *r);
    if (!r) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    if (opts) r->opts = *opts;
    r->num_layers = m->num_layers;
    r->mip_level = m->mip_level;
    r->ksize = calloc(m->num_layers, sizeof *r->ksize);
    r->w = calloc(m->num_layers, sizeof *r->w);
    if (!r->ksize || !r->w) goto nomem;
    for (uint32_t l = 0; l < m->num_layers; l++) {
        const npk_cnn2_layer *L = &m->layers[l];
        uint32_t k = L->kernel_size;
        r->ksize[l] = k;
        if ((long)(k / 2) > r->R) r->R = (long)(k / 2);
        if (!(r->w[l] = malloc((size_t)L->weight_count * sizeof(float)))) goto nomem;
        float *w = r->w[l];
        for (uint32_t i = 0; i < NPK_CNN2_CHANNELS; i++)
            for (uint32_t ky = 0; ky < k; ky++)
                for (uint32_t kx = 0; kx < k; kx++)
                    for (uint32_t o = 0; o < 4; o++)
                        *w++ = npk_f16_to_f32(m->weights[npk_cnn2_weight_index(L, o, i, ky, kx)]);
    }
    const char *name;
    cnn2_kernels(&r->conv, &r->act, &name);
    unsigned t = r->opts.threads;
    if (!t) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        t = n > 0 ? (unsigned)n : 1;
    }
    r->threads = t > MAX_THREADS ? MAX_THREADS : t;
    *out = r;
    return NPK_OK;
nomem:
    npk_cnn2_renderer_free(r);
    return npk_fail(err, NPK_E_NOMEM, "out of memory");
}

npk_status npk_cnn2_renderer_run(npk_cnn2_renderer *r, const npk_cnn2_image *img, float *out,
                                 npk_error *err)
{
    npk_status st = npk_cnn2_render_check(NULL, img, err);
    if (st) return st;
    if ((st = setup_frame(r, img->width, img->height, err))) return st;
    if ((st = cnn2_mips_build(&r->mips, img, r->mip_level, err))) return st;
    r->img = img;
    r->out = out;
    run_rows(r, feature_rows, NULL);
    for (int p = 0; p < 4; p++) fill_tb(r, r->dyn[0][p]);
    for (int p = 0; p < 8; p++) fill_tb(r, r->stat[p]);
    for (uint32_t l = 0; l < r->num_layers; l++) {
        layer_ctx lc = {l, (int)(l % 2), cnn2_layer_act(r->opts.activation, l, r->num_layers)};
        run_rows(r, layer_rows, &lc);
        if (l + 1 < r->num_layers)
            for (int p = 0; p < 4; p++) fill_tb(r, r->dyn[!lc.src][p]);
    }
    cnn2_mips_free(&r->mips);
    r->img = NULL;
    r->out = NULL;
    return NPK_OK;
}

npk_status npk_cnn2_render(const npk_cnn2_model *m, const npk_cnn2_image *img,
                           const npk_cnn2_render_opts *opts, float *out, npk_error *err)
{
    npk_cnn2_renderer *r;
    npk_status st = npk_cnn2_render_check(m, img, err);
    if (st) return st;
    if ((st = npk_cnn2_renderer_new(&r, m, opts, err))) return st;
    st = npk_cnn2_renderer_run(r, img, out, err);
    npk_cnn2_renderer_free(r);
    return st;
}
