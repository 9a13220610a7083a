/* Shared by the rknpu command files: the whole-model commands (cmd_rknpu_net.c)
 * that compile/run hand over to when no --op is given, and the option values
 * they all spell the same way. */
#ifndef NPK_TOOLS_CMD_RKNPU_H
#define NPK_TOOLS_CMD_RKNPU_H

#include <stdbool.h>

#include "npukit/rknpu_device.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_matmul.h"

int rknpu_net_compile(int argc, char **argv);
int rknpu_net_run(int argc, char **argv);

/* The option values the rknpu commands spell the same way (cmd_rknpu_opts.c):
 * each parses `arg` into *v and returns CLI_OK, or CLI_FAIL after a usage
 * message for `cmd`. */
int rknpu_opt_cores(const char *cmd, const char *arg, int *v);     /* 1, 2 or 3 */
int rknpu_opt_emu_cores(const char *cmd, const char *arg, int *v); /* 1 or 3 */
int rknpu_opt_form(const char *cmd, const char *arg, npk_rk_form *v);
int rknpu_opt_requant(const char *cmd, const char *arg, npk_rk_rq_mode *v);
int rknpu_opt_device(const char *cmd, const char *arg, npk_rk_devkind *v);

#endif
