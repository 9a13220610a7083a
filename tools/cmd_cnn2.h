/* npukit cnn2: subcommands implemented outside cmd_cnn2.c. */
#ifndef NPK_CMD_CNN2_H
#define NPK_CMD_CNN2_H

int cnn2_cmd_render(int argc, char **argv);
int cnn2_cmd_pattern(int argc, char **argv);

#endif
