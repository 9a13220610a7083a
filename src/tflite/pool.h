/* Internal: a small fixed thread pool for the interpreter's heavy ops
 * (conv, depthwise, fully connected), created at plan time. Work is split
 * into tasks that each compute a disjoint part of the output the same way
 * whichever thread runs them, so results do not depend on the thread count. */
#ifndef NPK_TFL_POOL_H
#define NPK_TFL_POOL_H

#include <stddef.h>

typedef struct npk_tfl_pool npk_tfl_pool;

/* Run task `task` (0 <= task < ntasks) on worker `worker` (0 <= worker < threads). */
typedef void (*npk_tfl_task_fn)(void *ctx, size_t task, int worker);

/* A pool of `threads` (>= 1; the caller's thread counts as one). NULL when
 * out of memory; fewer threads than asked when the system refuses more. */
npk_tfl_pool *npk_tfl_pool_new(int threads);
void npk_tfl_pool_free(npk_tfl_pool *p);
int npk_tfl_pool_threads(const npk_tfl_pool *p);
/* Run every task and return when all are done. */
void npk_tfl_pool_run(npk_tfl_pool *p, size_t ntasks, npk_tfl_task_fn fn, void *ctx);

#endif
