#include "npukit/progress.h"

npk_status npk_progress_report(const npk_progress *p, const char *what, uint64_t done,
                               uint64_t total, npk_error *err)
{
    if (!p || !p->fn || p->fn(p->user, what, done, total)) return NPK_OK;
    return npk_fail(err, NPK_E_CANCELLED, "cancelled after %llu of %llu %ss",
                    (unsigned long long)done, (unsigned long long)total, what);
}
