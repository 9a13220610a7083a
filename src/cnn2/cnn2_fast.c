/* The fast CNN v2 renderer: the bits of cnn2_ref.c, much sooner.
 *
 * Line-buffer pipeline over bands of rows. A thread takes a band of output
 * rows and produces it row by row: one row of features, then every layer
 * computes the next row it can, so each layer only keeps the last 2r+2 rows
 * of its input in a small ring (the working set stays in the L2 cache
 * instead of streaming whole frames through memory per layer). Bands start
 * with a halo of sum(r) rows, computed again by the neighbouring band; the
 * values are the same, so the result does not depend on the banding.
 *
 * - Rows have a margin of max(k/2) columns on both sides, filled by the
 *   border rule; rows above or below the image are the edge row (clamp) or a
 *   zero row (zero), chosen through per-tap row pointers. So the kernel never
 *   tests borders.
 * - The kernel (cnn2_kernel.c) vectorises across 16 pixels x 4 outputs and
 *   sums each output in the reference's (i, ky, kx) order.
 * - Deep networks run in stages of at most 8 layers / 24 rows of halo, each
 *   stage writing a full frame that the next one reads.
 * - Threads (pthreads) take bands from a shared counter; stages are joined.
 *   All buffers are allocated per frame size and reused; nothing per pixel. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npukit/checked.h"
#include "cnn2_internal.h"

#define MAX_THREADS   64
#define STAGE_LAYERS  8  /* layers pipelined together */
#define STAGE_HALO    24 /* and at most this many rows of halo (sum of k/2) */
#define MIN_BAND_ROWS 16
#define MAX_BAND_ROWS 256

typedef struct stage {
    uint32_t first, count; /* layers first .. first + count - 1 */
    long halo;             /* sum of their k/2 */
} stage;

/* Per-thread buffers. */
typedef struct scratch {
    float *feat; /* ring of feature rows: slot x 12 channels x stride */
    float *ring; /* rings of layer outputs (layers of a stage but its last) */
    float *acc;  /* 4 x wpad accumulators */
    float *tmp;  /* one row */
    uint16_t *half;
    cnn2_row_job job;
} scratch;

struct npk_cnn2_renderer {
    npk_cnn2_render_opts opts;
    uint32_t num_layers, mip_level;
    uint32_t *ksize;
    float **w; /* per layer: [i][ky][kx][o] */
    cnn2_conv_fn conv;
    cnn2_act_fn act;
    unsigned threads;
    long R; /* column margin: the largest k/2 */
    stage *stages;
    uint32_t nstages;
    size_t feat_slots, ring_floats; /* per thread, for the largest stage */
    /* Frame buffers (for W x H). */
    uint32_t W, H;
    size_t wpad, stride;
    long band;
    float *uvx, *sinx; /* per column, rounded */
    cnn2_tap *tx, *ty;
    float *zero_row; /* stride zeros: rows outside the image with zero borders */
    float *inter[2]; /* stage outputs, W*H*4, when there are several stages */
    scratch *scr;
    float *scr_block;
    uint16_t *half_block;
    /* Per frame. */
    const npk_cnn2_image *img;
    cnn2_mips mips;
    float *out;
};

/* ---- rows ---- */

/* n values from src into dst, rounded to f16 in faithful precision. */
static void round_row(const npk_cnn2_renderer *r, scratch *s, const float *src, float *dst,
                      size_t n)
{
    if (r->opts.precision == NPK_CNN2_PREC_F16) {
        npk_f32_to_f16_n(src, s->half, n);
        npk_f16_to_f32_n(s->half, dst, n);
    } else if (src != dst) {
        memcpy(dst, src, n * sizeof(float));
    }
}

/* Left and right margins of one row (right: up to the last column read). */
static void fill_lr(const npk_cnn2_renderer *r, float *row)
{
    bool zero = r->opts.border == NPK_CNN2_BORDER_ZERO;
    float left = zero ? 0.0f : row[0], right = zero ? 0.0f : row[r->W - 1];
    for (long j = 1; j <= r->R; j++) row[-j] = left;
    for (size_t x = r->W; x < r->wpad + (size_t)r->R; x++) row[x] = right;
}

/* Column 0 of channel c of feature row y (in the ring). */
static float *feat_row(const npk_cnn2_renderer *r, const scratch *s, long y, uint32_t c)
{
    size_t slot = (size_t)y % r->feat_slots;
    return s->feat + (slot * NPK_CNN2_CHANNELS + c) * r->stride + (size_t)r->R;
}

/* ---- one band of one stage ---- */

typedef struct band_state {
    const stage *st;
    const float *src;                        /* stage input (interleaved W*H*4), NULL: the image */
    float *dst;                              /* stage output (interleaved W*H*4) */
    long y0, y1;                             /* the band's output rows */
    long lo[STAGE_LAYERS], hi[STAGE_LAYERS]; /* rows each layer computes */
    long next[STAGE_LAYERS];                 /* next row each layer computes */
    long feat_done;                          /* last feature row made */
    size_t ring_at[STAGE_LAYERS], ring_slots[STAGE_LAYERS];
} band_state;

/* Feature row y: dynamic channels (image rounded, or the previous stage's
 * output) and the 8 static features, with their margins. */
static void make_features(const npk_cnn2_renderer *r, scratch *s, const band_state *b, long y)
{
    uint32_t W = r->W;
    float *tmp = s->tmp;
    const npk_cnn2_precision prec = r->opts.precision;
    for (uint32_t c = 0; c < 4; c++) {
        float *d = feat_row(r, s, y, c);
        if (b->src) { /* already rounded by the previous stage */
            for (uint32_t x = 0; x < W; x++) d[x] = b->src[((size_t)y * W + x) * 4 + c];
        } else {
            const float *px = r->img->rgbd + (size_t)y * W * 4;
            for (uint32_t x = 0; x < W; x++) tmp[x] = px[(size_t)x * 4 + c];
            round_row(r, s, tmp, d, W);
        }
        float *p = feat_row(r, s, y, 4 + c);
        if (r->mip_level == 0) {
            /* p_c is the image itself, rounded like channels 0..3 of layer 0. */
            if (!b->src)
                memcpy(p, d, W * sizeof(float));
            else {
                const float *px = r->img->rgbd + (size_t)y * W * 4;
                for (uint32_t x = 0; x < W; x++) tmp[x] = px[(size_t)x * 4 + c];
                round_row(r, s, tmp, p, W);
            }
        } else {
            const float *lvl = r->mips.level[r->mip_level];
            uint32_t lw = r->mips.w[r->mip_level];
            for (uint32_t x = 0; x < W; x++) tmp[x] = cnn2_bilinear(lvl, lw, r->tx[x], r->ty[y], c);
            round_row(r, s, tmp, p, W);
        }
    }
    memcpy(feat_row(r, s, y, 8), r->uvx, W * sizeof(float));
    memcpy(feat_row(r, s, y, 10), r->sinx, W * sizeof(float));
    float uvy = cnn2_round(cnn2_uv((uint32_t)y, r->H), prec);
    float *v = feat_row(r, s, y, 9), *one = feat_row(r, s, y, 11);
    for (uint32_t x = 0; x < W; x++) {
        v[x] = uvy;
        one[x] = 1.0f;
    }
    for (uint32_t c = 0; c < NPK_CNN2_CHANNELS; c++) fill_lr(r, feat_row(r, s, y, c));
    if (r->opts.features && !b->src && y >= b->y0 && y < b->y1) {
        float *f = r->opts.features + (size_t)y * W * NPK_CNN2_CHANNELS;
        for (uint32_t c = 0; c < NPK_CNN2_CHANNELS; c++) {
            const float *q = feat_row(r, s, y, c);
            for (uint32_t x = 0; x < W; x++) f[(size_t)x * NPK_CNN2_CHANNELS + c] = q[x];
        }
    }
}

/* Column 0 of output channel o of stage-layer j's row y (in its ring). */
static float *ring_row(const npk_cnn2_renderer *r, const scratch *s, const band_state *b,
                       uint32_t j, long y, uint32_t o)
{
    size_t slot = (size_t)y % b->ring_slots[j];
    return s->ring + b->ring_at[j] + (slot * 4 + o) * r->stride + (size_t)r->R;
}

/* Layer j of the stage computes its row y. */
static void layer_row(const npk_cnn2_renderer *r, scratch *s, const band_state *b, uint32_t j,
                      long y)
{
    uint32_t l = b->st->first + j, W = r->W;
    long H = (long)r->H, k = (long)r->ksize[l], rad = k / 2;
    bool last = j + 1 == b->st->count, final = l + 1 == r->num_layers;
    cnn2_row_job *job = &s->job;
    for (long ky = 0; ky < k; ky++) {
        long yy = y + ky - rad;
        bool outside = yy < 0 || yy >= H;
        yy = yy < 0 ? 0 : yy >= H ? H - 1 : yy;
        bool zero = outside && r->opts.border == NPK_CNN2_BORDER_ZERO;
        for (uint32_t i = 0; i < NPK_CNN2_CHANNELS; i++) {
            const float *row;
            if (zero)
                row = r->zero_row + r->R;
            else if (i < 4 && j > 0)
                row = ring_row(r, s, b, j - 1, yy, i);
            else
                row = feat_row(r, s, yy, i);
            job->rows[i][ky] = row;
        }
    }
    job->w = r->w[l];
    job->k = (uint32_t)k;
    r->conv(job);
    cnn2_act act = cnn2_layer_act(r->opts.activation, l, r->num_layers);
    float *lout = r->opts.layer_out ? r->opts.layer_out[l] : NULL;
    bool mine = y >= b->y0 && y < b->y1; /* each row is written out by one band */
    for (uint32_t o = 0; o < 4; o++) {
        r->act(job->acc[o], W, act);
        float *dst = last ? job->acc[o] : ring_row(r, s, b, j, y, o);
        round_row(r, s, job->acc[o], dst, W);
        if (!last) fill_lr(r, dst);
        float *inter[2] = {last && mine ? (final ? r->out : b->dst) : NULL, mine ? lout : NULL};
        for (int t = 0; t < 2; t++) {
            if (!inter[t]) continue;
            float *q = inter[t] + (size_t)y * W * 4 + o;
            for (uint32_t x = 0; x < W; x++) q[(size_t)x * 4] = dst[x];
        }
    }
}

/* Compute rows [y0, y1) of the stage's last layer. Layers advance one row at
 * a time, in order, each as soon as its input rows exist, so no ring holds
 * more than 2r + 1 live rows. */
static void run_band(const npk_cnn2_renderer *r, scratch *s, band_state *b)
{
    const stage *st = b->st;
    long H = (long)r->H, after = 0;
    for (uint32_t j = st->count; j-- > 0;) {
        b->lo[j] = b->y0 - after < 0 ? 0 : b->y0 - after;
        b->hi[j] = b->y1 + after > H ? H : b->y1 + after;
        b->next[j] = b->lo[j];
        after += (long)r->ksize[st->first + j] / 2;
    }
    long f0 = b->y0 - st->halo < 0 ? 0 : b->y0 - st->halo;
    long f1 = b->y1 + st->halo > H ? H : b->y1 + st->halo;
    for (long f = f0; f < f1; f++) {
        make_features(r, s, b, f);
        b->feat_done = f;
        for (bool progress = true; progress;) {
            progress = false;
            for (uint32_t j = 0; j < st->count; j++) {
                long y = b->next[j];
                if (y >= b->hi[j]) continue;
                long need = y + (long)r->ksize[st->first + j] / 2;
                need = need > H - 1 ? H - 1 : need;
                long have = j == 0 ? b->feat_done : b->next[j - 1] - 1;
                if (have < need) continue;
                layer_row(r, s, b, j, y);
                b->next[j] = y + 1;
                progress = true;
            }
        }
    }
}

/* ---- threads ---- */

typedef struct job_queue {
    const npk_cnn2_renderer *r;
    const stage *st;
    const float *src;
    float *dst;
    atomic_long next;
    /* Progress: rows finished in this stage, reported by thread 0 only (the
     * caller's thread) as base + rows of total; a refusal stops the stage. */
    atomic_long rows_done;
    atomic_bool cancelled;
    uint64_t base, total;
    npk_error *err;
} job_queue;

typedef struct worker {
    job_queue *q;
    unsigned tid;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    job_queue *q = w->q;
    const npk_cnn2_renderer *r = q->r;
    scratch *s = &r->scr[w->tid];
    band_state b;
    memset(&b, 0, sizeof b);
    b.st = q->st;
    b.src = q->src;
    b.dst = q->dst;
    size_t at = 0;
    for (uint32_t j = 0; j + 1 < q->st->count; j++) {
        b.ring_at[j] = at;
        b.ring_slots[j] = 2 * (size_t)(r->ksize[q->st->first + j + 1] / 2) + 2;
        at += b.ring_slots[j] * 4 * r->stride;
    }
    for (;;) {
        long y0 = atomic_fetch_add(&q->next, r->band);
        if (y0 >= (long)r->H) break;
        b.y0 = y0;
        b.y1 = y0 + r->band < (long)r->H ? y0 + r->band : (long)r->H;
        run_band(r, s, &b);
        long rows = atomic_fetch_add(&q->rows_done, b.y1 - b.y0) + (b.y1 - b.y0);
        if (w->tid == 0 && r->opts.progress &&
            npk_progress_report(r->opts.progress, "row", q->base + (uint64_t)rows, q->total,
                                q->err)) {
            atomic_store(&q->cancelled, true);
            atomic_store(&q->next, (long)r->H); /* the other threads stop too */
        }
    }
    return NULL;
}

/* One stage over all bands on the renderer's threads (the caller is thread
 * 0; if a thread cannot start, the others take its bands). */
static bool run_stage(npk_cnn2_renderer *r, const stage *st, const float *src, float *dst,
                      uint64_t base, uint64_t total, npk_error *err)
{
    job_queue q = {
        .r = r, .st = st, .src = src, .dst = dst, .base = base, .total = total, .err = err};
    atomic_init(&q.next, 0);
    atomic_init(&q.rows_done, 0);
    atomic_init(&q.cancelled, false);
    pthread_t tids[MAX_THREADS];
    worker ws[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    long bands = ((long)r->H + r->band - 1) / r->band;
    unsigned n = (long)r->threads > bands ? (unsigned)bands : r->threads;
    for (unsigned t = 0; t < n; t++) ws[t] = (worker){&q, t};
    for (unsigned t = 1; t < n; t++) started[t] = pthread_create(&tids[t], NULL, work, &ws[t]) == 0;
    work(&ws[0]);
    for (unsigned t = 1; t < n; t++)
        if (started[t]) pthread_join(tids[t], NULL);
    return !atomic_load(&q.cancelled);
}

/* ---- setup ---- */

static void free_frame(npk_cnn2_renderer *r)
{
    free(r->uvx);
    free(r->sinx);
    free(r->tx);
    free(r->ty);
    free(r->zero_row);
    free(r->inter[0]);
    free(r->inter[1]);
    free(r->scr);
    free(r->scr_block);
    free(r->half_block);
    r->uvx = r->sinx = r->zero_row = r->inter[0] = r->inter[1] = r->scr_block = NULL;
    r->tx = r->ty = NULL;
    r->scr = NULL;
    r->half_block = NULL;
    r->W = r->H = 0;
}

static npk_status setup_frame(npk_cnn2_renderer *r, uint32_t W, uint32_t H, npk_error *err)
{
    if (r->W == W && r->H == H) return NPK_OK;
    free_frame(r);
    size_t wpad = ((size_t)W + 15) & ~(size_t)15;
    size_t stride = wpad + 2 * (size_t)r->R;
    /* Per thread: feature ring + layer rings + 4 accumulator rows + 1 row. */
    size_t per, feat, t;
    if (!npk_mul_sz(r->feat_slots * NPK_CNN2_CHANNELS, stride, &feat) ||
        !npk_mul_sz(r->ring_floats, stride, &t) || !npk_add_sz(feat, t, &per) ||
        !npk_add_sz(per, 5 * wpad, &per) || !npk_mul_sz(per, r->threads, &t))
        return npk_fail(err, NPK_E_LIMIT, "cnn2: frame too large");
    r->scr_block = calloc(t, sizeof(float));
    r->half_block = calloc((size_t)r->threads * wpad, sizeof(uint16_t));
    r->scr = calloc(r->threads, sizeof *r->scr);
    r->zero_row = calloc(stride, sizeof(float));
    r->uvx = malloc(W * sizeof(float));
    r->sinx = malloc(W * sizeof(float));
    r->tx = malloc(W * sizeof(cnn2_tap));
    r->ty = malloc(H * sizeof(cnn2_tap));
    bool ok = r->scr_block && r->half_block && r->scr && r->zero_row && r->uvx && r->sinx &&
              r->tx && r->ty;
    for (int i = 0; ok && r->nstages > 1 && i < 2; i++)
        ok = (r->inter[i] = malloc((size_t)W * H * 4 * sizeof(float))) != NULL;
    if (!ok) {
        free_frame(r);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a %ux%u frame", W, H);
    }
    r->W = W;
    r->H = H;
    r->wpad = wpad;
    r->stride = stride;
    for (unsigned i = 0; i < r->threads; i++) {
        scratch *s = &r->scr[i];
        s->feat = r->scr_block + i * per;
        s->ring = s->feat + feat;
        s->acc = s->ring + r->ring_floats * stride;
        s->tmp = s->acc + 4 * wpad;
        s->half = r->half_block + i * wpad;
        s->job.wpad = wpad;
        for (int o = 0; o < 4; o++) s->job.acc[o] = s->acc + (size_t)o * wpad;
    }
    long band = r->threads > 1 ? ((long)H + 8 * (long)r->threads - 1) / (8 * (long)r->threads)
                               : MAX_BAND_ROWS;
    r->band = band < MIN_BAND_ROWS ? MIN_BAND_ROWS : band > MAX_BAND_ROWS ? MAX_BAND_ROWS : band;
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

/* Split the layers into stages and size the per-thread rings. */
static npk_status plan_stages(npk_cnn2_renderer *r, npk_error *err)
{
    r->stages = calloc(r->num_layers, sizeof *r->stages);
    if (!r->stages) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (uint32_t l = 0; l < r->num_layers; l++) {
        long rad = (long)r->ksize[l] / 2;
        stage *cur = r->nstages ? &r->stages[r->nstages - 1] : NULL;
        if (!cur || cur->count == STAGE_LAYERS || (cur->halo + rad > STAGE_HALO && cur->count))
            cur = &r->stages[r->nstages++], cur->first = l;
        cur->count++;
        cur->halo += rad;
    }
    for (uint32_t i = 0; i < r->nstages; i++) {
        const stage *st = &r->stages[i];
        size_t slots = 2 * (size_t)st->halo + 3, ring = 0;
        for (uint32_t j = 0; j + 1 < st->count; j++)
            ring += (2 * (size_t)(r->ksize[st->first + j + 1] / 2) + 2) * 4;
        if (slots > r->feat_slots) r->feat_slots = slots;
        if (ring > r->ring_floats) r->ring_floats = ring;
    }
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
    free(r->stages);
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
    if ((st = plan_stages(r, err))) {
        npk_cnn2_renderer_free(r);
        return st;
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
    /* Progress in rows of all stages: H per stage. */
    const uint64_t total = (uint64_t)r->nstages * r->H;
    for (uint32_t i = 0; !st && i < r->nstages; i++) {
        if (!run_stage(r, &r->stages[i], i ? r->inter[(i - 1) % 2] : NULL,
                       i + 1 < r->nstages ? r->inter[i % 2] : out, (uint64_t)i * r->H, total, err))
            st = NPK_E_CANCELLED;
        else
            st = npk_progress_report(r->opts.progress, "row", (uint64_t)(i + 1) * r->H, total, err);
    }
    cnn2_mips_free(&r->mips);
    r->img = NULL;
    r->out = NULL;
    return st;
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
