/* The option values the rknpu commands spell the same way (cmd_rknpu.h):
 * one parse and one usage message each. */
#include <string.h>

#include "cli.h"
#include "cmd_rknpu.h"

int rknpu_opt_cores(const char *cmd, const char *arg, int *v)
{
    uint64_t x;
    if (!cli_parse_u64(arg, &x) || x < 1 || x > 3) return cli_usage(cmd, "--cores is 1, 2 or 3");
    *v = (int)x;
    return CLI_OK;
}

int rknpu_opt_emu_cores(const char *cmd, const char *arg, int *v)
{
    uint64_t x;
    if (!cli_parse_u64(arg, &x) || (x != 1 && x != 3))
        return cli_usage(cmd, "--emu-cores is 1 or 3");
    *v = (int)x;
    return CLI_OK;
}

int rknpu_opt_form(const char *cmd, const char *arg, npk_rk_form *v)
{
    if (!strcmp(arg, "vendor"))
        *v = NPK_RK_FORM_VENDOR;
    else if (!strcmp(arg, "rocket"))
        *v = NPK_RK_FORM_ROCKET;
    else
        return cli_usage(cmd, "unknown --form '%s' (vendor, rocket)", arg);
    return CLI_OK;
}

int rknpu_opt_requant(const char *cmd, const char *arg, npk_rk_rq_mode *v)
{
    for (int k = NPK_RK_RQ_EXACT; k <= NPK_RK_RQ_EXACT1; k++)
        if (!strcmp(arg, npk_rk_rq_mode_name((npk_rk_rq_mode)k))) {
            *v = (npk_rk_rq_mode)k;
            return CLI_OK;
        }
    return cli_usage(cmd, "unknown --requant '%s' (exact, exact1, simple)", arg);
}

int rknpu_opt_device(const char *cmd, const char *arg, npk_rk_devkind *v)
{
    if (!npk_rk_devkind_parse(arg, v))
        return cli_usage(cmd, "unknown --device '%s' (emu, rknpu, rocket)", arg);
    return CLI_OK;
}
