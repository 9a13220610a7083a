/* Entry points of the command groups, one file each under tools/. */
#ifndef NPK_COMMANDS_H
#define NPK_COMMANDS_H

#include <stdio.h>

int cmd_info(int argc, char **argv);
void cmd_info_help(FILE *out);
int cmd_tensor(int argc, char **argv);
void cmd_tensor_help(FILE *out);

#endif
