/* Subcommands of `npukit mgk` implemented outside cmd_mgk.c. */
#ifndef NPK_CMD_MGK_H
#define NPK_CMD_MGK_H

#include "cli.h"
#include "npukit/mgk.h"

int mgk_cmd_graph(int argc, char **argv);  /* cmd_mgk_graph.c */
int mgk_cmd_export(int argc, char **argv); /* cmd_mgk_graph.c */

#ifdef NPK_HAVE_CJSON
/* A string of the file as a JSON string (cmd_mgk.c: the one place that makes them). */
cJSON *mgk_json_str(npk_mgk_str s);
#endif

#endif
