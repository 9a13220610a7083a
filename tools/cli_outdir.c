/* In-memory files into one output directory, all or nothing (cli_outdir.h). */
#include "cli_outdir.h"

#include "cli.h"

int cli_write_dir(const char *dir, const cli_out_file *f, size_t n)
{
    npk_error err = {0};
    npk_outdir *d;
    if (npk_outdir_open(&d, dir, &err)) return cli_error(dir, &err);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < n && !st; i++)
        st = npk_outdir_write(d, f[i].name, f[i].data, f[i].len, &err);
    if (st) {
        npk_outdir_abort(d);
        return cli_error(dir, &err);
    }
    return npk_outdir_commit(d, &err) ? cli_error(dir, &err) : CLI_OK;
}
