/* Subcommands of `npukit mgk` implemented outside cmd_mgk.c. */
#ifndef NPK_CMD_MGK_H
#define NPK_CMD_MGK_H

int mgk_cmd_graph(int argc, char **argv);  /* cmd_mgk_graph.c */
int mgk_cmd_export(int argc, char **argv); /* cmd_mgk_graph.c */

#endif
