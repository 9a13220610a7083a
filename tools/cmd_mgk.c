/* npukit mgk: Ingenic MGK models: inspect, extract and replace weights. */
#include "cli.h"
#include "commands.h"

void cmd_mgk_help(FILE *out)
{
    fprintf(out, "usage: npukit mgk <command> [options]\n\nIngenic MGK models: inspect, extract and replace weights.\n");
}

int cmd_mgk(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("mgk: not implemented yet");
}
