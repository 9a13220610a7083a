/* Progress of long CLI work: a line on stderr redrawn as units finish, and a
 * final timing line. Shown only when stderr is a terminal (NPUKIT_PROGRESS=
 * always: on any stderr; never, or --quiet: off). Never on stdout, so
 * nothing of it lands in output files or --json. */
#ifndef NPK_CLI_PROGRESS_H
#define NPK_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/progress.h"

/* --quiet anywhere on the command line (main.c removes it from argv). */
void cli_set_quiet(bool quiet);

typedef struct cli_progress {
    npk_progress p; /* for the library's long operations (rows, stages, ...) */
    const char *label;
    bool on, drawn;
    double t0, last;
    uint64_t done, total;
    const char *what;
} cli_progress;

/* Start timing `label` (e.g. "tflite run"); p->p reports to it. */
void cli_progress_start(cli_progress *p, const char *label);
/* done of total units `what` (total 0: unknown). Redrawn at most 10 times a second. */
void cli_progress_update(cli_progress *p, const char *what, uint64_t done, uint64_t total);
/* Clear the line; on success print "npukit: LABEL: N WHATs in T s". */
void cli_progress_end(cli_progress *p, bool ok);

#endif
