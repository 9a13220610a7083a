/* Progress of long work. The library never prints: a long operation that
 * takes an npk_progress calls it with how much is done, and the caller
 * renders it (the CLI on a terminal's stderr, the Python package through a
 * callback). Calls come from the thread that called the operation, never
 * from its worker threads, at most once per unit of work.
 *
 * The callback returns true to go on; false makes the operation stop at the
 * next unit and fail with NPK_E_CANCELLED. */
#ifndef NPUKIT_PROGRESS_H
#define NPUKIT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what: a short static noun for the unit ("run", "row", "stage"). done
 * counts up to total (total 0: unknown). */
typedef bool (*npk_progress_fn)(void *user, const char *what, uint64_t done, uint64_t total);

typedef struct npk_progress {
    npk_progress_fn fn;
    void *user;
} npk_progress;

/* Report to p (NULL or without fn: nothing to do). NPK_OK to go on, else
 * NPK_E_CANCELLED recorded in err. */
npk_status npk_progress_report(const npk_progress *p, const char *what, uint64_t done,
                               uint64_t total, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
