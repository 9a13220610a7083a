/* npukit edgetpu: Coral Edge TPU models: inspect, weights, reference execution. */
#include "cli.h"
#include "commands.h"

void cmd_edgetpu_help(FILE *out)
{
    fprintf(out, "usage: npukit edgetpu <command> [options]\n\nCoral Edge TPU models: inspect, weights, reference execution.\n");
}

int cmd_edgetpu(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("edgetpu: not implemented yet");
}
